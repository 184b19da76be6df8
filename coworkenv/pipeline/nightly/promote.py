"""Stage promote: the registry's promotion rule decides between the candidate and the current model on their paired
held-out evaluations (the decision and its reason recorded), and the before/after report."""

from __future__ import annotations

from typing import Any

from coworkenv.pipeline.config import NightlyConfig
from coworkenv.pipeline.nightly.run_state import finished, nightly_file, once
from coworkenv.pipeline.rundir import RunDir, write_json


def promote_stage(run: RunDir, config: NightlyConfig) -> dict[str, Any]:
    """Promote the candidate or keep the current model (the decision and its reason are recorded), and write the
    before/after report."""

    def work() -> dict[str, Any]:
        from coworkenv.eval.compare import compare
        from coworkenv.eval.metrics import summarize
        from coworkenv.eval.report import write_report
        from coworkenv.models import PromotionPolicy, promote
        from coworkenv.pipeline.evaluation import eval_rows

        profile, trained = finished(run, "profile"), finished(run, "train")
        policy = PromotionPolicy(margin=config.margin, alpha=config.alpha, safety_tolerance=config.safety_tolerance)
        decision = promote(trained["candidate"], data_root=run.data_root, policy=policy, suite=profile["suite"])
        write_json(nightly_file(run, "decision.json"), decision.model_dump(mode="json"))
        before, after = (
            eval_rows(profile["eval"], run.data_root),
            eval_rows(finished(run, "gate_eval")["release_id"], run.data_root),
        )
        comparison = compare(before, after)  # the seed promotion used: the report shows the p-value it decided on
        report = nightly_file(run, "report")
        write_report(
            report,
            summarize(after, seed=config.seed),
            after,
            comparison=comparison,
            title=f"{trained['candidate']} against {profile['model']}",
        )
        return {
            "promoted": decision.promoted,
            "reason": decision.reason,
            "candidate": trained["candidate"],
            "current": profile["model"],
            "report": str(report / "report.html"),
        }

    return once(run, "promote", work)
