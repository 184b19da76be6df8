-- repair_rescue_by_code: per mandatory failure code, how many failing tasks went to repair and were rescued.
-- Answers "which failure codes does repair fix, how often, and in how many rounds?"
-- A task's codes: its failed mandatory battery checks, plus any code a repair attempt on it addressed.
-- rescue_rate = rescued / repaired; code_fix_rate = attempts after which the addressed code no longer failed.
with repair_products as (

    select distinct release_id, task_id
    from stg_repairs

),

original_failures as (

    select release_id, task_id as parent_id, code
    from stg_validations
    anti join repair_products using (release_id, task_id)
    where is_failure and is_mandatory

),

addressed as (

    select release_id, parent_id, unnest(codes_addressed) as code
    from stg_repairs

),

task_codes as (

    select release_id, parent_id, code from original_failures
    union
    select release_id, parent_id, code from addressed

),

outcomes as (

    select
        release_id,
        parent_id,
        count(*) as n_attempts,
        bool_or(is_valid_after) as is_rescued,
        min(repair_round) filter (where is_valid_after) as rescue_round
    from stg_repairs
    group by release_id, parent_id

),

by_code as (

    select
        task_codes.release_id,
        task_codes.code,
        count(*) as n_failed_tasks,
        count(outcomes.parent_id) as n_repaired,
        count(*) filter (where outcomes.is_rescued) as n_rescued,
        avg(outcomes.rescue_round) as mean_rescue_round,
        sum(outcomes.n_attempts) as n_attempts_on_tasks
    from task_codes
    left join outcomes using (release_id, parent_id)
    group by task_codes.release_id, task_codes.code

),

attempts_by_code as (

    select
        release_id,
        code,
        count(*) as n_attempts_addressing,
        count(*) filter (where not list_contains(coalesce(failed_codes_after, []), code)) as n_code_fixed
    from (
        select release_id, unnest(codes_addressed) as code, failed_codes_after
        from stg_repairs
    )
    group by release_id, code

)

select
    release_id,
    code,
    n_failed_tasks,
    n_repaired,
    n_rescued,
    n_rescued / nullif(n_repaired, 0) as rescue_rate,
    n_rescued / n_failed_tasks as overall_rescue_rate,
    mean_rescue_round,
    coalesce(n_attempts_addressing, 0) as n_attempts_addressing,
    coalesce(n_code_fixed, 0) as n_code_fixed,
    n_code_fixed / nullif(n_attempts_addressing, 0) as code_fix_rate
from by_code
left join attempts_by_code using (release_id, code)
order by release_id, n_failed_tasks desc, code
