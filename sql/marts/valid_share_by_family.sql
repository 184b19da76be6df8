-- valid_share_by_family: per family, how many validated tasks are valid, first time and after repair.
-- Answers "which families produce valid tasks, and how much does repair add?"
-- valid_share counts every validated spec (repairs included); first_pass_valid_share only original specs;
-- final_valid_share the original specs that are valid or were rescued by a repair.
with status as (

    select release_id, family, task_id, is_valid, is_published, is_repair, discrimination
    from task_status

),

rescued as (

    select distinct release_id, parent_id as task_id
    from stg_repairs
    where is_valid_after

),

originals as (

    select
        status.release_id,
        status.family,
        status.task_id,
        status.is_valid,
        rescued.task_id is not null as is_rescued
    from status
    left join rescued using (release_id, task_id)
    where not status.is_repair

),

all_specs as (

    select
        release_id,
        family,
        count(*) as n_tasks,
        count(*) filter (where is_valid) as n_valid,
        count(*) filter (where not is_valid) as n_invalid,
        count(*) filter (where is_published) as n_published,
        count(*) filter (where is_repair) as n_repaired_specs,
        avg(discrimination) filter (where is_valid) as mean_discrimination_valid
    from status
    group by release_id, family

),

original_specs as (

    select
        release_id,
        family,
        count(*) as n_original,
        count(*) filter (where is_valid) as n_original_valid,
        count(*) filter (where not is_valid and is_rescued) as n_rescued
    from originals
    group by release_id, family

)

select
    all_specs.release_id,
    all_specs.family,
    n_tasks,
    n_valid,
    n_invalid,
    n_valid / n_tasks as valid_share,
    coalesce(n_original, 0) as n_original,
    coalesce(n_original_valid, 0) as n_original_valid,
    n_original_valid / nullif(n_original, 0) as first_pass_valid_share,
    coalesce(n_rescued, 0) as n_rescued,
    (n_original_valid + n_rescued) / nullif(n_original, 0) as final_valid_share,
    n_repaired_specs,
    n_published,
    mean_discrimination_valid
from all_specs
left join original_specs using (release_id, family)
order by all_specs.release_id, valid_share, all_specs.family
