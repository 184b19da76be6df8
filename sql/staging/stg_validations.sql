-- stg_validations: one row per (task, battery check), typed; only the newest battery version per task is kept.
-- Answers "which battery checks did each validated task pass or fail, and was the task valid?"
-- family_from_id: the family prefix of the task id (`<family>-d<difficulty>-<seed>`), for tasks that were
-- validated but never published (they are absent from tasks).
with source as (

    select * from src_validations

),

renamed as (

    select
        release_id,
        cast(task_id as varchar) as task_id,
        lower(trim(cast(code as varchar))) as code,
        cast(passed as boolean) as passed,
        lower(trim(cast(severity as varchar))) as severity,
        cast(discriminating as boolean) as is_discriminating,
        cast(details as varchar) as details,
        cast(message as varchar) as message,
        cast(valid as boolean) as is_valid,
        coalesce(cast(battery_version as integer), 0) as battery_version
    from source

),

superseded as (

    -- tasks whose rows come from more than one battery version (rare): the older versions' rows are dropped.
    -- Read straight from the source and kept small, so the common case costs one aggregate and no join work.
    select release_id, task_id, max(coalesce(cast(battery_version as integer), 0)) as newest_version
    from src_validations
    group by release_id, task_id
    having min(coalesce(cast(battery_version as integer), 0)) <> max(coalesce(cast(battery_version as integer), 0))

),

newest_battery as (

    select renamed.*
    from renamed
    anti join superseded
        on renamed.release_id = superseded.release_id
        and renamed.task_id = superseded.task_id
        and renamed.battery_version < superseded.newest_version

)

select
    release_id,
    task_id,
    split_part(task_id, '-', 1) as family_from_id,
    code,
    passed,
    not passed as is_failure,
    severity,
    severity = 'mandatory' as is_mandatory,
    is_discriminating,
    is_valid,
    battery_version,
    message,
    details
from newest_battery
