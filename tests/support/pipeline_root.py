"""A small data root made by the real pipeline, for the pages of `coworkenv.ui` (about 10 s, in-process runtime):

- `SYNTHESIS`: 8 procedural tasks and 4 broken ones from the repair corpus, through validate → repair → rollout →
  build → gate → publish: a task release (LATEST) with rejections (three battery codes), two rescued by repair;
- `ORACLE`, `NULL`: the `oracle` and `null` agents evaluated on that release, published as `eval` releases;
- `NIGHTLY`: the nightly loop's before/after report and promotion decision, written as its promote stage writes them
  (`write_report` with a comparison, `decide`) from the two evaluations;
- `GATE_FAILS`: a run whose `validated` gate fails (a repaired task of a family no generator registers), so its
  Data Docs exist and nothing is published.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from coworkenv.data.layout import Manifest
from tests.support import ROOT

CORPUS = ROOT / "tests" / "repair" / "corpus"
SYNTHESIS = "manual__2026-12-01T10:00:00+00:00"
ORACLE, NULL = "eval-oracle", "eval-null"
NIGHTLY = "nightly-1"
GATE_FAILS = "manual__gate-fails"
BROKEN = ("06_wrong_mail_count", "08_unsolvable_oracle", "13_misspelled_rule_argument", "18_no_final_answer")
"""Rejected by the battery: two rescued by the rule repairers, two not."""
UNREGISTERED_FAMILY = "01_wrong_expected_number"
"""A `sheet_bookkeeping` task: repaired into a valid one, which the `validated` gate refuses (not a generator family)."""


@dataclass(frozen=True)
class PipelineRoot:
    root: Path
    tasks: Manifest
    oracle: Manifest
    null: Manifest


def build_pipeline_root(root: Path) -> PipelineRoot:
    from coworkenv.eval.compare import compare
    from coworkenv.eval.metrics import summarize
    from coworkenv.eval.report import write_report
    from coworkenv.models.promotion import decide
    from coworkenv.pipeline import evaluation as ev
    from coworkenv.pipeline.config import EvaluationConfig, SynthesisConfig
    from coworkenv.pipeline.nightly import nightly_file
    from coworkenv.pipeline.release_tables import gate_tables
    from coworkenv.pipeline.rundir import RunDir, write_json
    from coworkenv.pipeline.synthesis import GATES
    from coworkenv.pipeline.synthesis.build import build_tables
    from coworkenv.pipeline.synthesis.generate import import_tasks
    from coworkenv.pipeline.synthesis.publish import publish
    from coworkenv.pipeline.synthesis.repair import repair_run
    from coworkenv.pipeline.synthesis.rollout import rollout_run
    from coworkenv.pipeline.synthesis.validate import validate_shard
    from coworkenv.quality.gates import GateFailed
    from coworkenv.synth.generate import GenerateRequest, generate

    root.mkdir(parents=True, exist_ok=True)
    specs, _ = generate(GenerateRequest(n=8, seed=2))
    procedural = root.parent / "procedural.jsonl"
    procedural.write_text("".join(s.to_json() + "\n" for s in specs), encoding="utf-8")
    config = SynthesisConfig(n=8, seed=2, runtime="none", repair_rounds=2, shards=2)

    def synthesize_to_tables(run_id: str, broken: tuple[str, ...]) -> RunDir:
        run = RunDir.open(run_id, root)
        import_tasks(run, [procedural, *(CORPUS / f"{name}.json" for name in broken)], shards=2, start=config)
        for shard in run.shard_ids():
            validate_shard(run, shard)
        repair_run(run)
        rollout_run(run)
        build_tables(run)
        return run

    run = synthesize_to_tables(SYNTHESIS, BROKEN)
    gate_tables(run, GATES)
    tasks = publish(run)

    def evaluation(run_id: str, agent: str) -> Manifest:
        settings = EvaluationConfig(
            agent=agent, suite=tasks.release_id, trials=2, runtime="none", workers=1, train_releases=[]
        )
        return ev.evaluate(settings, run_id, root)

    oracle, null = evaluation(ORACLE, "oracle"), evaluation(NULL, "null")
    nightly = RunDir.open(NIGHTLY, root)
    before, after = ev.eval_rows(oracle.release_id, root), ev.eval_rows(null.release_id, root)
    write_json(
        nightly_file(nightly, "decision.json"),
        decide(before, after, candidate="null", current="oracle").model_dump(mode="json"),
    )
    write_report(
        nightly_file(nightly, "report"),
        summarize(after),
        after,
        comparison=compare(before, after),
        title="null against oracle",
    )

    failing = synthesize_to_tables(GATE_FAILS, (UNREGISTERED_FAMILY,))
    try:
        gate_tables(failing, GATES)
    except GateFailed:
        pass
    else:
        raise AssertionError("the gate was expected to fail on a task of an unregistered family")
    return PipelineRoot(root=root, tasks=tasks, oracle=oracle, null=null)
