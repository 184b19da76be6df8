-- task_status: one row per task the release knows (validated, published, or both) with its verdict.
-- Answers "is task X valid, which mandatory checks did it fail, was it published, and is it a repair of another?"
-- is_valid: the battery's verdict; for a published task without battery rows, the consistency gate's.
with verdicts as (

    select
        release_id,
        task_id,
        any_value(family_from_id) as family_from_id,
        bool_and(is_valid) as is_valid,
        count(*) as n_battery_checks,
        count(*) filter (where is_failure and is_mandatory) as n_failed_mandatory,
        count(*) filter (where is_failure and not is_mandatory) as n_failed_advisory,
        list(code order by code) filter (where is_failure and is_mandatory) as failed_mandatory_codes
    from stg_validations
    group by release_id, task_id

),

tasks as (

    select
        release_id,
        task_id,
        family,
        difficulty,
        primary_capability,
        capabilities,
        discrimination,
        passes_gate,
        parent_id,
        repair_round
    from stg_tasks

),

repair_products as (

    select
        release_id,
        task_id,
        any_value(parent_id) as parent_id,
        max(repair_round) as repair_round
    from stg_repairs
    group by release_id, task_id

),

joined as (

    select
        release_id,
        task_id,
        coalesce(tasks.family, verdicts.family_from_id) as family,
        coalesce(tasks.difficulty, try_cast(regexp_extract(task_id, '-d([0-9]+)-', 1) as integer)) as difficulty,
        tasks.primary_capability,
        tasks.capabilities,
        tasks.discrimination,
        tasks.task_id is not null as is_published,
        verdicts.task_id is not null as is_validated,
        coalesce(verdicts.is_valid, tasks.passes_gate, false) as is_valid,
        tasks.passes_gate,
        coalesce(verdicts.n_battery_checks, 0) as n_battery_checks,
        coalesce(verdicts.n_failed_mandatory, 0) as n_failed_mandatory,
        coalesce(verdicts.n_failed_advisory, 0) as n_failed_advisory,
        coalesce(verdicts.failed_mandatory_codes, []) as failed_mandatory_codes,
        coalesce(tasks.parent_id, repair_products.parent_id) as parent_id,
        coalesce(nullif(tasks.repair_round, 0), repair_products.repair_round, 0) as repair_round
    from tasks
    full join verdicts using (release_id, task_id)
    left join repair_products using (release_id, task_id)

)

select
    *,
    parent_id is not null as is_repair
from joined
