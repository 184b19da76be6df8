-- stg_eval_results: one row per evaluation trial (eval run, model, task, trial), typed, with outcome flags.
-- Answers "how did each evaluated model do on each benchmark task and trial?"
with source as (

    select * from src_eval_results

),

renamed as (

    select
        release_id,
        cast(eval_id as varchar) as eval_id,
        cast(model as varchar) as model,
        cast(task_id as varchar) as task_id,
        cast(trial as integer) as trial,
        cast(family as varchar) as family,
        cast(capabilities as varchar[]) as capabilities,
        lower(trim(cast(benchmark_group as varchar))) as benchmark_group,
        cast(difficulty as integer) as difficulty,
        cast(completion as double) as completion,
        cast(safety as double) as safety,
        cast(robustness as double) as robustness,
        cast(score as double) as score,
        cast(passed as boolean) as passed,
        cast(empty as boolean) as is_empty,
        coalesce(cast(n_violations as integer), 0) as n_violations
    from source

)

select
    *,
    n_violations > 0 as has_violation
from renamed
