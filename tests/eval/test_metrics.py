"""Suite metrics on small row sets computed by hand (docs/design/evaluation.md, "Evaluation metrics and reports")."""

from __future__ import annotations

import json

import numpy as np
import pytest

from coworkenv.data.build import eval_results_table
from coworkenv.errors import CoworkEnvError
from coworkenv.eval.bootstrap import bootstrap_means
from coworkenv.eval.metrics import METRICS, Summary, summarize
from tests.support.eval_rows import bernoulli_rows, task, trial


@pytest.fixture
def three_tasks() -> list[dict]:
    """A passes 3/3; B passes 1/3 and violates a rule once; C never passes, two format errors, one crash."""
    return [
        *task("A", [1.0, 1.0, 1.0], capabilities=["retrieval"], difficulty=1),
        trial("B", 0, score=1.0, capabilities=["retrieval", "multi_step"], difficulty=2),
        trial("B", 1, score=0.5, capabilities=["retrieval", "multi_step"], difficulty=2),
        trial("B", 2, score=0.0, safety=0.0, n_violations=1, capabilities=["retrieval", "multi_step"], difficulty=2),
        trial("C", 0, score=0.2, n_format_errors=2, capabilities=["multi_turn"], difficulty=2),
        trial("C", 1, score=0.2, n_format_errors=1, capabilities=["multi_turn"], difficulty=2),
        # A crashed trial: zeroed grade (safety 0 too) but no prohibited call, so no safety violation.
        trial(
            "C",
            2,
            score=0.0,
            safety=0.0,
            status="failed",
            error="endpoint down: 503\ntraceback…",
            n_format_errors=None,
            capabilities=["multi_turn"],
            difficulty=2,
        ),
    ]


def test_overall_figures_by_hand(three_tasks):
    s = summarize(three_tasks)
    o = s.overall
    assert (o.n_tasks, o.n_trials, o.n_failed, s.k, s.trials_min, s.trials_max) == (3, 9, 1, 3, 3, 3)
    assert o.mean_score.value == pytest.approx((1.0 + 0.5 + 0.4 / 3) / 3)
    assert o.pass_rate.value == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert o.pass_at_k.value == pytest.approx(2 / 3)  # A and B pass at least once in 3
    assert o.pass_hat_k.value == pytest.approx((1 + (1 / 3) ** 3 + 0) / 3)
    assert o.safety_violation_rate.value == pytest.approx((0 + 1 / 3 + 0) / 3)
    assert o.format_error_rate.value == pytest.approx((0 + 0 + 2 / 3) / 3)
    assert o.mean_robustness.value == 1.0
    assert s.failures == {"endpoint down: 503": 1}
    assert (s.agent, s.model, s.suite, s.eval_id) == ("oracle", "oracle", "suite-1", "e1")
    assert s.usage.format_errors == 3 and s.usage.turns == 18 and s.usage.prompt_tokens == 900


def test_slices_by_hand(three_tasks):
    s = summarize(three_tasks)
    assert list(s.groups) == ["general", "multi_step", "multi_turn"]
    assert list(s.capabilities) == ["retrieval", "multi_step", "multi_turn"]  # the taxonomy's order
    assert list(s.difficulties) == [1, 2]
    retrieval = s.capabilities["retrieval"]  # A and B: a task counts in each of its capabilities
    assert (retrieval.n_tasks, retrieval.n_trials) == (2, 6)
    assert retrieval.pass_rate.value == pytest.approx((1 + 1 / 3) / 2)
    assert s.capabilities["multi_step"].pass_rate.value == pytest.approx(1 / 3)
    assert s.groups["multi_turn"].n_failed == 1
    assert s.difficulties[2].pass_at_k.value == pytest.approx(1 / 2)
    assert s.difficulties[1].pass_hat_k.value == 1.0


def test_every_interval_holds_its_value(three_tasks):
    s = summarize(three_tasks)
    for stats in [s.overall, *s.groups.values(), *s.capabilities.values(), *s.difficulties.values()]:
        for name in METRICS:
            m = getattr(stats, name)
            assert m.lo <= m.value <= m.hi
    one = s.difficulties[1]  # a single task: every resample is that task
    assert one.mean_score.lo == one.mean_score.hi == 1.0


def test_unequal_trial_counts_use_the_fewest_as_k():
    rows = task("X", [1.0, 0.0]) + task("Y", [1.0, 1.0, 0.0, 0.0])
    s = summarize(rows)
    assert (s.k, s.trials_min, s.trials_max) == (2, 2, 4)
    # pass@2: X 1 − C(1,2)/C(2,2) = 1; Y 1 − C(2,2)/C(4,2) = 5/6. pass^2: (1/2)² for both.
    assert s.overall.pass_at_k.value == pytest.approx((1 + 5 / 6) / 2)
    assert s.overall.pass_hat_k.value == pytest.approx(0.25)
    assert s.overall.pass_rate.value == pytest.approx(0.5)  # tasks weigh equally, not trials
    assert summarize(rows, k=1).overall.pass_at_k.value == pytest.approx(0.5)
    with pytest.raises(CoworkEnvError, match="k must be between 1 and the fewest trials of a task, 2"):
        summarize(rows, k=3)


def test_a_pyarrow_table_gives_the_same_summary(three_tasks):
    assert summarize(eval_results_table(three_tasks)) == summarize(three_tasks)


def test_deterministic_and_seeded(three_tasks):
    rows = bernoulli_rows(np.linspace(0.1, 0.9, 40), 3, seed=1)
    assert summarize(rows).to_json() == summarize(list(reversed(rows))).to_json()
    other = summarize(rows, seed=1)
    assert other.overall.pass_rate.value == summarize(rows).overall.pass_rate.value
    assert other.overall.pass_rate.lo != summarize(rows).overall.pass_rate.lo


def test_to_json_round_trips(three_tasks):
    s = summarize(three_tasks)
    data = json.loads(s.to_json())
    assert set(data["overall"]) >= {
        "pass_rate",
        "pass_hat_k",
        "pass_at_k",
        "mean_score",
        "safety_violation_rate",
        "format_error_rate",
    }
    assert set(data["overall"]["pass_rate"]) == {"value", "lo", "hi"}
    assert set(data["difficulties"]) == {"1", "2"}
    assert Summary.model_validate_json(s.to_json()) == s


def test_the_interval_covers_the_truth_and_narrows_with_more_tasks():
    truth = 0.6
    widths = []
    for n_tasks in (40, 400):
        s = summarize(bernoulli_rows([truth] * n_tasks, 3, seed=n_tasks))
        assert s.overall.pass_rate.lo <= truth <= s.overall.pass_rate.hi
        widths.append(s.overall.pass_rate.hi - s.overall.pass_rate.lo)
    assert widths[1] < widths[0] / 2  # ~ 1/√n: a tenfold sample is about a third as wide


def test_the_interval_has_about_its_nominal_coverage():
    """Over 300 independent suites of 60 tasks (trials nested, task difficulty varying), the 95% interval of the mean
    pass rate holds the population's mean about 95% of the time."""
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(300):
        p = rng.beta(2, 2, size=60)  # population mean 0.5
        per_task = rng.binomial(3, p) / 3
        lo, hi = bootstrap_means(per_task, resamples=500, rng=rng, confidence=0.95)
        hits += bool(lo[0] <= 0.5 <= hi[0])
    assert 0.88 <= hits / 300 <= 0.99


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([], "none given"),
        ([{"task_id": "a", "trial": 0}], "missing or null column"),
        (task("a", [1.0]) + task("a", [0.0]), "recorded twice: a#0"),
        (task("a", [1.0]) + task("b", [1.0], agent="other"), r"several values of agent \(or model\) \(oracle, other\)"),
        (task("a", [float("nan")]), "score is nan, not a finite number"),
        (task("a", [1.0], n_format_errors=-1), "n_format_errors is -1, not a count"),
        ([trial("a", 0), trial("a", 1, difficulty=3)], "different capabilities or difficulty"),
        ([object()], "expected mappings"),
    ],
)
def test_bad_rows_are_refused_with_one_line(rows, message):
    with pytest.raises(CoworkEnvError, match=message):
        summarize(rows)


def test_bad_options_are_refused(three_tasks):
    with pytest.raises(CoworkEnvError, match="resamples"):
        summarize(three_tasks, resamples=0)
    with pytest.raises(CoworkEnvError, match="confidence"):
        summarize(three_tasks, confidence=1.0)
