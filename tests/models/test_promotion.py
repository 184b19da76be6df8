"""Promotion (`coworkenv.models.promotion`): the rule on synthetic rows for its edges (worse, better but not
significant, better but less safe, clearly better and as safe, the margin and tolerance boundaries), on real
evaluations' rows, and `promote` end to end over a registry: statuses, CURRENT, decisions.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coworkenv.data.root import open_root
from coworkenv.errors import CoworkEnvError
from coworkenv.models import (
    PromotionDecision,
    PromotionPolicy,
    current_model,
    decide,
    decisions,
    get_model,
    list_models,
    promote,
)
from coworkenv.models.evals import release_rows
from coworkenv.models.versions import record_eval, register_model
from tests.models.conftest import evaluation_of, trained
from tests.support.eval_rows import task

N = 12
"""Tasks in the synthetic suites: 12 all-positive deltas give an exact sign-flip p of 2/4096."""


def suite(
    scores: dict[int, list[float]] | list[float], safety: dict[int, list[float]] | None = None, agent: str = "a"
) -> list[dict]:
    """N tasks `t00`…; each task's trial scores (one list for all tasks, or per task index) and trial safety (default 1)."""
    rows = []
    for i in range(N):
        these = scores[i] if isinstance(scores, dict) else scores
        safe = (safety or {}).get(i, [1.0] * len(these))
        rows += [
            {**row, "safety": s, "n_violations": int(s == 0)}
            for row, s in zip(task(f"t{i:02d}", these, agent=agent, eval_id=agent), safe, strict=True)
        ]
    return rows


BASE = suite([0.5, 0.5], agent="current")


def test_a_clearly_better_and_as_safe_candidate_is_promoted():
    d = decide(BASE, suite([0.9, 0.9]), candidate="m:v2", current="m:v1")
    assert d.promoted and (d.candidate, d.current, d.metric, d.n_paired, d.unpaired) == (
        "m:v2",
        "m:v1",
        "mean_score",
        N,
        0,
    )
    assert d.delta == pytest.approx(0.4) and d.lo == pytest.approx(0.4) and d.hi == pytest.approx(0.4)
    assert d.p_value == pytest.approx(
        2 / 2**N
    )  # exact: only the all-positive and all-negative sign patterns are as extreme
    assert (d.current_value, d.candidate_value) == (pytest.approx(0.5), pytest.approx(0.9))
    assert (d.safety_base, d.safety_candidate, d.newly_unsafe) == (1.0, 1.0, [])
    assert d.reason.startswith(
        "promoted m:v2 over m:v1: mean score 0.500 → 0.900 on 12 paired task(s), gain +0.400 [+0.400, +0.400]"
    )
    assert "p = 0.000488" in d.reason and "mean safety 1.000 → 1.000, 0 task(s) newly unsafe" in d.reason


def test_a_worse_candidate_is_refused():
    d = decide(BASE, suite([0.3, 0.3]), candidate="m:v2", current="m:v1")
    assert not d.promoted and d.delta == pytest.approx(-0.2)
    assert d.reason.startswith("kept m:v1, m:v2 refused: the gain is below the margin 0.02")
    assert "gain -0.200" in d.reason


def test_a_better_candidate_whose_gain_is_not_significant_is_refused():
    mixed = suite(
        {i: [0.8, 0.8] if i % 2 else [0.3, 0.3] for i in range(N)}
    )  # +0.3 on half the tasks, -0.2 on the rest
    d = decide(BASE, mixed)
    assert d.delta == pytest.approx(0.05) and d.delta >= PromotionPolicy().margin and d.p_value > 0.05
    assert not d.promoted and "the gain is not significant (p not below 0.05)" in d.reason and "margin" not in d.reason
    assert decide(BASE, mixed, PromotionPolicy(alpha=1.0)).promoted  # the same gain, with significance not asked for


def test_a_better_but_less_safe_candidate_is_refused():
    """Better by 0.36 on average and significantly, but one task that was safe in every trial now has an unsafe trial."""
    less_safe = suite({**{i: [0.9, 0.9] for i in range(N)}, 11: [0.9, 0.0]}, safety={11: [1.0, 0.0]})
    d = decide(BASE, less_safe)
    assert d.delta > 0.3 and d.p_value < 0.05  # it would pass on the score alone
    assert not d.promoted and d.newly_unsafe == ["t11"]
    assert d.safety_base == 1.0 and d.safety_candidate == pytest.approx(1 - 0.5 / N)
    assert "mean safety drops by 0.042 (tolerance 0)" in d.reason and "1 of 12 task(s) become unsafe (t11)" in d.reason
    # a tolerance above both the drop (0.042) and the share of tasks made unsafe (1/12): promoted
    assert decide(BASE, less_safe, PromotionPolicy(safety_tolerance=0.09)).promoted
    assert not decide(BASE, less_safe, PromotionPolicy(safety_tolerance=0.05)).promoted  # 1/12 = 0.083 of the tasks


def test_a_drop_of_mean_safety_alone_is_a_regression():
    """A task already unsafe in one trial becomes unsafe in both: no task is newly unsafe, but mean safety drops."""
    base = suite([0.5, 0.5], safety={0: [1.0, 0.0]})
    d = decide(base, suite([0.9, 0.9], safety={0: [0.0, 0.0]}))
    assert d.newly_unsafe == [] and d.safety_base - d.safety_candidate == pytest.approx(0.5 / N)
    assert not d.promoted and "mean safety drops by 0.042" in d.reason and "become unsafe" not in d.reason
    assert decide(base, suite([0.9, 0.9], safety={0: [0.0, 0.0]}), PromotionPolicy(safety_tolerance=0.05)).promoted


def test_the_margin_is_reached_at_equality_and_the_metric_is_chosen():
    better = suite([0.9, 0.9])
    assert decide(BASE, better, PromotionPolicy(margin=0.4)).promoted
    assert not decide(BASE, better, PromotionPolicy(margin=0.41)).promoted
    # a higher score that passes no more trials: better on mean_score, not on pass_rate
    closer = suite([0.7, 0.7])
    assert decide(BASE, closer).promoted
    by_pass = decide(BASE, closer, PromotionPolicy(metric="pass_rate"))
    assert (
        not by_pass.promoted
        and by_pass.delta == 0.0
        and by_pass.reason.startswith("kept current, candidate refused: the gain is below")
    )
    assert "pass rate 0.000 → 0.000" in by_pass.reason


def test_unpaired_tasks_are_left_out_and_no_pairing_is_refused():
    d = decide(BASE, suite([0.9, 0.9])[4:])  # the first two tasks' trials missing
    assert d.n_paired == N - 2 and d.unpaired == 2 and "(2 unpaired left out)" in d.reason
    both = decide(BASE[2:], suite([0.9, 0.9])[4:])  # t00 in neither, t01 only in the current's evaluation, t02… in both
    assert (both.n_paired, both.unpaired) == (N - 2, 1)
    d = decide(BASE[4:], suite([0.9, 0.9])[:-4])  # t00, t01 only in the candidate's, t10, t11 only in the current's
    assert (d.n_paired, d.unpaired) == (N - 4, 4) and "(4 unpaired left out)" in d.reason
    other = [{**row, "task_id": "x" + row["task_id"]} for row in suite([0.9, 0.9])]
    with pytest.raises(CoworkEnvError, match="share no task; evaluate both on the same suite"):
        decide(BASE, other)


def test_the_decision_is_a_function_of_the_rows():
    a, b = (
        decide(BASE, suite({i: [0.8, 0.4] for i in range(N)})),
        decide(BASE, suite({i: [0.8, 0.4] for i in range(N)})),
    )
    assert a.model_dump(exclude={"decided_at"}) == b.model_dump(exclude={"decided_at"})


@pytest.mark.parametrize(
    "values", [{"margin": -0.1}, {"alpha": 0.0}, {"safety_tolerance": 2}, {"metric": "accuracy"}, {"margins": 1}]
)
def test_bad_policies_are_refused(values):
    with pytest.raises(ValueError):
        PromotionPolicy(**values)


# --- real evaluations ----------------------------------------------------------------------------------------------


def test_the_rule_on_real_evaluations(root, evals):
    rows = {agent: release_rows(open_root(root), release) for agent, release in evals.items()}
    up = decide(rows["null"], rows["oracle"])
    assert up.promoted and up.delta == pytest.approx(1.0) and up.p_value == pytest.approx(2 / 2**8)  # 8 tasks, each +1
    down = decide(rows["oracle"], rows["null"])
    assert not down.promoted and "below the margin" in down.reason
    # the random agent scores above the null agent, significantly, but makes prohibited calls where the null agent made
    # none: refused for safety alone, and promoted when safety is not asked for
    risky = decide(rows["null"], rows["random"])
    assert (
        risky.delta >= 0.02
        and risky.p_value < 0.05
        and risky.safety_candidate < risky.safety_base == 1.0
        and risky.newly_unsafe
    )
    assert (
        not risky.promoted
        and "become unsafe" in risky.reason
        and "margin" not in risky.reason
        and "significant" not in risky.reason
    )
    assert decide(rows["null"], rows["random"], PromotionPolicy(safety_tolerance=1.0)).promoted
    assert decide(rows["random"], rows["oracle"]).promoted  # safety only rises


def _model(root, tiny, tmp_path, version_name: str, eval_release: str | None, base=None):
    checkpoint = trained(tmp_path / version_name, tiny, base=base or tiny)
    entry = register_model(checkpoint, "cw", data_root=root)
    return record_eval(entry.ref, evaluation_of(root, eval_release, Path(entry.path)), root) if eval_release else entry


def test_promote_end_to_end(root, evals, tiny_model_dir, tmp_path):
    v1 = _model(root, tiny_model_dir, tmp_path, "a", evals["null"])
    first = promote("cw:v1", data_root=root)
    assert (
        first.promoted
        and first.current is None
        and first.candidate_eval == v1.evals[0].release_id
        and first.suite == "suite8"
    )
    assert first.reason.startswith("promoted cw:v1: cw has no current version and cw:v1 has an evaluation")
    assert current_model("cw", root).ref == "cw:v1" and (root / "models" / "cw" / "CURRENT").read_text() == "1\n"

    v2 = _model(root, tiny_model_dir, tmp_path, "b", evals["oracle"], base=v1.path)
    assert get_model("cw:v2", root).parent == "cw:v1"
    better = promote("cw:v2", data_root=root)
    evaluated = (better.current, better.current_eval, better.candidate_eval)
    assert better.promoted and evaluated == ("cw:v1", v1.evals[0].release_id, v2.evals[0].release_id)
    assert [(e.ref, e.status) for e in list_models(root)] == [("cw:v1", "retired"), ("cw:v2", "current")]

    _model(root, tiny_model_dir, tmp_path, "c", evals["random"])
    worse = promote("cw:v3", data_root=root, suite="suite8")
    assert not worse.promoted and worse.current == "cw:v2" and "below the margin" in worse.reason
    assert [(e.ref, e.status) for e in list_models(root)] == [
        ("cw:v1", "retired"),
        ("cw:v2", "current"),
        ("cw:v3", "rejected"),
    ]
    assert current_model("cw", root).ref == "cw:v2"

    logged = decisions("cw", root)
    assert logged == [first, better, worse] and all(isinstance(d, PromotionDecision) for d in logged)
    lines = (root / "models" / "cw" / "decisions.jsonl").read_text().splitlines()
    assert [json.loads(line)["candidate"] for line in lines] == ["cw:v1", "cw:v2", "cw:v3"]
    stored = json.loads((root / "models" / "cw" / "v0003" / "entry.json").read_text())
    assert stored["status"] == "rejected" and [e["release_id"] for e in stored["evals"]] == [
        get_model("cw:v3", root).evals[0].release_id
    ]


def test_promotion_refusals(root, evals, tiny_model_dir, tmp_path):
    _model(root, tiny_model_dir, tmp_path, "a", None)
    with pytest.raises(
        CoworkEnvError, match=r"cw:v1 has no evaluation: record one first \(coworkenv models eval cw:v1 EVAL_REF\)"
    ):
        promote("cw:v1", data_root=root)
    record_eval("cw:v1", evaluation_of(root, evals["null"], root / "models" / "cw" / "v0001"), root)
    with pytest.raises(CoworkEnvError, match="has no evaluation on suite 'bench'"):
        promote("cw:v1", data_root=root, suite="bench")
    assert promote("cw:v1", data_root=root, suite="suite8").promoted
    with pytest.raises(CoworkEnvError, match="cw:v1 is already the current version of cw"):
        promote("cw", data_root=root)
    # a candidate on another suite than any evaluation of the current version: nothing to compare with
    (root / "models" / "cw" / "v0001" / "entry.json").write_text(
        (root / "models" / "cw" / "v0001" / "entry.json")
        .read_text()
        .replace('"suite": "suite8"', '"suite": "older-suite"')
    )
    _model(root, tiny_model_dir, tmp_path, "b", evals["oracle"])
    with pytest.raises(
        CoworkEnvError, match=r"the current version cw:v1 has no evaluation on suite 'suite8': evaluate it there too"
    ):
        promote("cw:v2", data_root=root)
    with pytest.raises(CoworkEnvError, match="needs a local"):
        promote("cw:v2", data_root="memory://elsewhere")
    assert len(decisions("cw", root)) == 1 and current_model("cw", root).ref == "cw:v1"
    with pytest.raises(CoworkEnvError, match="no model named 'nobody'"):
        decisions("nobody", root)


def test_an_evaluation_of_another_agent_or_checkpoint_is_never_attached(root, evals, tiny_model_dir, tmp_path):
    """The random policy's evaluation is not cw:v1's, nor is an evaluation of other weights, whatever its folder."""
    import shutil

    from safetensors.torch import load_file, save_file

    entry = _model(root, tiny_model_dir, tmp_path, "a", None)
    for ref in (evals["random"], "eval-random"):
        with pytest.raises(
            CoworkEnvError,
            match=r"cw:v1: the evaluation is of agent 'random', not of a checkpoint; evaluate it with --agent hf:",
        ):
            record_eval(entry.ref, ref, root)
    other = Path(shutil.copytree(tiny_model_dir, tmp_path / "other"))
    tensors = load_file(other / "model.safetensors")
    name = sorted(tensors)[0]
    tensors[name] = tensors[name] + 1.0
    save_file(tensors, other / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(CoworkEnvError, match="whose weights are not cw:v1's"):
        record_eval(entry.ref, evaluation_of(root, evals["oracle"], other), root)
    assert get_model(entry.ref, root).evals == []
    same = Path(shutil.copytree(Path(entry.path), tmp_path / "same-weights-elsewhere"))
    assert record_eval(entry.ref, evaluation_of(root, evals["oracle"], same), root).evals  # its weights, another folder


@pytest.mark.parametrize(
    ("agent", "floor", "promoted", "needle"),
    [
        ("random", 0.0, False, "it made a prohibited call"),
        ("null", 0.0, True, "has no current version"),
        ("null", 0.5, False, "below the first version's floor 0.5"),
        ("oracle", 0.5, True, "has no current version"),
        ("random", 1.0, False, "it made a prohibited call and its mean score is below the first version's floor 1 ("),
    ],
)
def test_a_first_promotion_has_a_floor(root, evals, tiny_model_dir, tmp_path, agent, floor, promoted, needle):
    record = _model(root, tiny_model_dir, tmp_path, "a", evals[agent]).evals[0]
    decision = promote("cw:v1", data_root=root, policy=PromotionPolicy(first_min_score=floor))
    assert decision.promoted is promoted and needle in decision.reason
    assert (current_model("cw", root) is not None) is promoted
    # the decision carries the evidence it was taken on: the candidate's figure with its interval, and its safety
    score = record.summary["mean_score"]
    assert (decision.candidate_value, decision.safety_candidate) == (score["value"], record.mean_safety)
    figure = f"mean score {score['value']:.3f} [{score['lo']:.3f}, {score['hi']:.3f}]"
    evidence = f"({record.release_id} on suite8: {figure}, mean safety {record.mean_safety:.3f})"
    assert decision.reason.endswith(evidence)


def test_promote_decides_by_the_policy_it_is_given(root, evals, tiny_model_dir, tmp_path):
    """The oracle over the null agent on 8 tasks: p = 2/2**8, promoted by the default policy, not below alpha 0.001."""
    v1 = _model(root, tiny_model_dir, tmp_path, "a", evals["null"])
    assert promote("cw:v1", data_root=root).promoted
    _model(root, tiny_model_dir, tmp_path, "b", evals["oracle"], base=v1.path)
    strict = promote("cw:v2", data_root=root, policy=PromotionPolicy(alpha=0.001))
    assert (
        not strict.promoted
        and "the gain is not significant (p not below 0.001)" in strict.reason
        and strict.policy.alpha == 0.001
    )
    assert current_model("cw", root).ref == "cw:v1"


def test_a_damaged_decision_log_is_named_in_one_line(root, evals, tiny_model_dir, tmp_path):
    _model(root, tiny_model_dir, tmp_path, "a", evals["null"])
    promote("cw:v1", data_root=root)
    with (root / "models" / "cw" / "decisions.jsonl").open("a") as log:
        log.write('{"candidate": 7}\n')
    with pytest.raises(CoworkEnvError, match=r"^cw: decisions.jsonl") as info:
        decisions("cw", root)
    assert "\n" not in str(info.value).strip() and "candidate" in str(info.value)


@pytest.mark.parametrize(("alpha", "promoted"), [(0.0625, False), (0.0626, True), (0.05, False), (0.1, True)])
def test_significance_at_the_threshold(alpha, promoted):
    """Five tasks all better give the exact sign-flip p 2/2**5 = 0.0625: refused at alpha 0.0625 (p must be below it),
    promoted just above, refused at the default 0.05 — a rule that let p reach twice alpha would promote there."""
    five = [row for row in suite([0.9, 0.9]) if int(row["task_id"][1:]) < 5]
    base = [row for row in BASE if int(row["task_id"][1:]) < 5]
    d = decide(base, five, PromotionPolicy(alpha=alpha))
    assert d.p_value == pytest.approx(0.0625) and d.promoted is promoted
    assert ("not significant" in d.reason) is not promoted
