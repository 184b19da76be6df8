-- Top rejection reasons: the mandatory battery checks that reject the most tasks, over all families.
-- Run: coworkenv sql --file sql/queries/top_rejection_reasons.sql
with rejected as (

    select release_id, count(*) as n_rejected
    from task_status
    where not is_valid
    group by release_id

),

by_code as (

    select
        release_id,
        code,
        sum(n_rejected_tasks_failed) as rejected_tasks,
        count(*) filter (where n_rejected_tasks_failed > 0) as families_affected
    from rejection_reasons_by_family
    where is_rejection_reason
    group by release_id, code

)

select
    release_id,
    code,
    rejected_tasks,
    families_affected,
    round(rejected_tasks / n_rejected, 3) as share_of_rejected
from by_code
join rejected using (release_id)
qualify row_number() over (partition by release_id order by rejected_tasks desc, code) <= 10
order by release_id, rejected_tasks desc, code
