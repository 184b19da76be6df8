-- eval_task_trials: per evaluation run, model and task, its trials n and passes c — the input of pass@k and pass^k.
-- Answers "how did each task fare over its trials?" and feeds eval_task_pass_k and eval_group_pass_rates.
select
    release_id,
    eval_id,
    model,
    task_id,
    any_value(capabilities) as capabilities,
    any_value(benchmark_group) as benchmark_group,
    count(*) as n,
    count(*) filter (where passed) as c,
    avg(score) as mean_score,
    avg(has_violation::integer) as violation_rate,
    avg(is_empty::integer) as empty_rate
from stg_eval_results
group by release_id, eval_id, model, task_id
