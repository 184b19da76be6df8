"""The rubric judge, in one package (docs/design/contracts.md, "Judge"): `endpoint` — the model at an
OpenAI-compatible endpoint (its config, the pinned prompt, verdicts) and which judge is active; `cache` — verdicts by
the hash of what was asked; `table` — verdicts asked by the trusted parent and looked up inside the sandbox, which
cannot reach the endpoint; `sandbox_jobs` — the one protocol for sandbox jobs that grade rubrics with such a table.
Checks never import it: an episode's evidence carries the judge it is graded with (`checks.base.Judge`). An Airflow
connection becomes a judge in `pipeline/airflow.py`, the one module that reads connections."""
