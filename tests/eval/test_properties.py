"""Metrics, comparison and profile never crash on odd row sets (one task, all fail, all pass, single trials, unequal
trial counts, crashes, violations) and keep their invariants."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coworkenv.eval.compare import compare
from coworkenv.eval.metrics import METRICS, summarize
from coworkenv.eval.profile import capability_profile, profile_rows
from coworkenv.spec.capabilities import CAPABILITIES
from tests.support.eval_rows import trial

PROFILE = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_trial = st.fixed_dictionaries(
    {
        "score": st.sampled_from([0.0, 0.2, 0.75, 1.0]) | st.floats(0.0, 1.0),
        "n_violations": st.sampled_from([0, 0, 0, 2]),
        "n_format_errors": st.sampled_from([0, 1, None]),
        "failed": st.booleans(),
    }
)
_task = st.tuples(
    st.lists(st.sampled_from(CAPABILITIES.names()), min_size=1, max_size=3, unique=True),
    st.integers(1, 5),
    st.lists(_trial, min_size=1, max_size=4),
)


def _rows(tasks) -> list[dict]:
    rows = []
    for i, (caps, difficulty, trials) in enumerate(tasks):
        for j, t in enumerate(trials):
            score = 0.0 if t["failed"] else t["score"]
            rows.append(
                trial(
                    f"t{i}",
                    j,
                    score=score,
                    capabilities=caps,
                    difficulty=difficulty,
                    safety=0.0 if t["n_violations"] or t["failed"] else 1.0,
                    n_violations=t["n_violations"],
                    status="failed" if t["failed"] else "ok",
                    error="boom" if t["failed"] else None,
                    n_format_errors=t["n_format_errors"],
                )
            )
    return rows


@PROFILE
@given(st.lists(_task, min_size=1, max_size=6))
def test_summaries_hold_their_invariants(tasks):
    rows = _rows(tasks)
    s = summarize(rows, resamples=50)
    assert s.overall.n_tasks == len(tasks) and s.overall.n_trials == len(rows)
    assert s.k == s.trials_min == min(len(t[2]) for t in tasks)
    assert sum(s.failures.values()) == s.overall.n_failed == sum(t["failed"] for _, _, ts in tasks for t in ts)
    for stats in [s.overall, *s.groups.values(), *s.capabilities.values(), *s.difficulties.values()]:
        for name in METRICS:
            m = getattr(stats, name)
            assert -1e-9 <= m.lo <= m.value <= m.hi <= 1 + 1e-9
        assert stats.pass_hat_k.value <= stats.pass_rate.value + 1e-9 <= stats.pass_at_k.value + 2e-9
    assert sum(g.n_tasks for g in s.groups.values()) == len(tasks)


@PROFILE
@given(st.lists(_task, min_size=1, max_size=5))
def test_a_run_against_itself_and_the_profile(tasks):
    rows = _rows(tasks)
    c = compare(rows, rows, resamples=50, permutations=200)
    assert c.overall.mean_score.value == 0.0 and c.overall.mean_score.p_value == 1.0
    cells = profile_rows(rows)
    assert sum(r["attempts"] for r in cells) == sum(len(caps) * len(ts) for caps, _, ts in tasks)
    assert len(capability_profile(rows).rows) == len(cells)


def test_the_corner_cases_by_name():
    one = _rows([(["retrieval"], 1, [{"score": 1.0, "n_violations": 0, "n_format_errors": 0, "failed": False}])])
    s = summarize(one)
    assert (s.overall.pass_at_k.value, s.overall.pass_hat_k.value, s.k) == (1.0, 1.0, 1)
    all_fail = _rows(
        [(["safety"], 3, [{"score": 0.0, "n_violations": 1, "n_format_errors": 1, "failed": False}] * 3)] * 4
    )
    s = summarize(all_fail)
    assert s.overall.pass_rate.hi == 0.0 and s.overall.safety_violation_rate.lo == 1.0
    assert s.overall.format_error_rate.value == 1.0
