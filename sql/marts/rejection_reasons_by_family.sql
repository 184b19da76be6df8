-- rejection_reasons_by_family: per family and battery code, how many tasks failed that check.
-- Answers "why are a family's tasks rejected?" Mandatory failures reject a task; advisory ones are warnings.
with failures as (

    select
        validations.release_id,
        status.family,
        validations.task_id,
        validations.code,
        validations.severity,
        status.is_valid
    from stg_validations as validations
    join task_status as status using (release_id, task_id)
    where validations.is_failure

),

family_sizes as (

    select
        release_id,
        family,
        count(*) as n_family_tasks,
        count(*) filter (where not is_valid) as n_family_rejected
    from task_status
    where is_validated
    group by release_id, family

),

by_code as (

    select
        release_id,
        family,
        code,
        severity,
        count(distinct task_id) as n_tasks_failed,
        count(distinct task_id) filter (where not is_valid) as n_rejected_tasks_failed
    from failures
    group by release_id, family, code, severity

)

select
    release_id,
    family,
    code,
    severity,
    severity = 'mandatory' as is_rejection_reason,
    n_tasks_failed,
    n_rejected_tasks_failed,
    n_family_tasks,
    n_family_rejected,
    n_tasks_failed / n_family_tasks as share_of_family_tasks,
    n_rejected_tasks_failed / nullif(n_family_rejected, 0) as share_of_family_rejected,
    rank() over (partition by release_id, family order by n_tasks_failed desc, code) as rank_in_family
from by_code
join family_sizes using (release_id, family)
order by release_id, family, rank_in_family
