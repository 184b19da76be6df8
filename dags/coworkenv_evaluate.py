"""
### CoworkEnv evaluation run

Measures an **agent** on a **suite**, Claw-Eval style: the suite's tasks (a release id, `bench` for the newest
`coworkenv-bench` release, or a JSONL file) are checked against the training releases for **contamination**, then
played `trials` times each by the agent (`oracle`, `null`, `random`, `hf:<model dir>`, `openai:<model>` at the
connection's endpoint) → `eval_results`, `trajectories` and `capability_profile` rows → the **`evaluated` Great
Expectations gate** → a release of kind `eval`. The report (`report.html` with plots, `summary.json`: pass rate,
pass@k, pass^k, mean score, safety and format-error rates, each with a bootstrap 95% CI, overall and per group and
capability) and the capability profile the planner reads (`profile.json`) are under
`<data root>/runs/<run id>/report/` and update the `coworkenv-eval-report` and `coworkenv-capability-profile`
assets.

Outside Airflow, `coworkenv eval` runs the same stages; the same run id resumes an interrupted evaluation.
"""

from __future__ import annotations

from datetime import timedelta

from coworkenv.pipeline.airflow import job_dag
from coworkenv.pipeline.evaluation import EVALUATION

job_dag(
    EVALUATION,
    doc_md=__doc__,
    description="An agent on a suite, k trials per task → scores, report and capability profile, gated and published.",
    schedule=None,
    catchup=False,
    max_active_runs=2,
    tags=["coworkenv", "evaluation"],
    default_args={"owner": "coworkenv", "retries": 1, "retry_delay": timedelta(seconds=20)},
)
