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

from airflow.sdk import Asset, dag, get_current_context, task

from coworkenv.pipeline.airflow import dag_params

EVAL_REPORT = Asset("coworkenv-eval-report", uri="coworkenv://eval/report")
CAPABILITY_PROFILE = Asset("coworkenv-capability-profile", uri="coworkenv://eval/capability-profile")


def _run():
    from coworkenv.pipeline.rundir import RunDir

    return RunDir.open(get_current_context()["run_id"])


@dag(
    dag_id="coworkenv_evaluate",
    doc_md=__doc__,
    description="An agent on a suite, k trials per task → scores, report and capability profile, gated and published.",
    schedule=None,
    catchup=False,
    max_active_runs=2,
    tags=["coworkenv", "evaluation"],
    default_args={"owner": "coworkenv", "retries": 1, "retry_delay": timedelta(seconds=20)},
    params=dag_params("coworkenv_evaluate"),
)
def coworkenv_evaluate():
    @task
    def prepare() -> dict:
        """Validate the settings, resolve the suite, check it against the training releases for contamination."""
        from coworkenv.errors import CoworkEnvError
        from coworkenv.pipeline.airflow import without_retry
        from coworkenv.pipeline.config import evaluation_config
        from coworkenv.pipeline.evaluate import prepare as prepare_run

        # bad settings or a contaminated suite
        return without_retry(
            lambda: prepare_run(_run(), evaluation_config(dict(get_current_context()["params"]), "settings")),
            CoworkEnvError,
        )

    @task
    def trials(suite: dict) -> dict:
        """Every task × trial played by the agent (resumes the trials a failed attempt finished)."""
        from coworkenv.pipeline.airflow import llm_endpoint, run_judge
        from coworkenv.pipeline.evaluate import read_config, run_trials_stage

        run = _run()
        config = read_config(run)
        with run_judge(config):
            return run_trials_stage(run, llm_endpoint(config))

    @task
    def build(played: dict) -> dict:
        """eval_results, trajectories and capability_profile tables; the report and the profile."""
        from coworkenv.pipeline.evaluate import build as build_run

        return build_run(_run())

    @task(retries=0)
    def gate(rows: dict) -> dict:
        """The `evaluated` Great Expectations gate; a failure stops the run here and nothing is published."""
        from coworkenv.pipeline.airflow import without_retry
        from coworkenv.pipeline.evaluate import gate as gate_run
        from coworkenv.quality.gates import GateFailed

        return without_retry(lambda: gate_run(_run()), GateFailed)

    @task(outlets=[EVAL_REPORT, CAPABILITY_PROFILE])
    def publish(gates: dict) -> dict:
        """The gated tables as a release of kind `eval`; the report and the profile become visible as assets (their
        events' extra names the release)."""
        from coworkenv.pipeline.airflow import outlet_extra
        from coworkenv.pipeline.evaluate import publish as publish_run

        manifest = publish_run(_run())  # logs the release id and row counts
        return outlet_extra({"release_id": manifest.release_id, "row_counts": manifest.row_counts})

    publish(gate(build(trials(prepare()))))


coworkenv_evaluate()
