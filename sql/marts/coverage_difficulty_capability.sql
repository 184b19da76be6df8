-- coverage_difficulty_capability: the capability × difficulty grid, every cell present, with task counts.
-- Answers "which capability/difficulty cells have valid tasks, and which are gaps?"
-- A task counts once in each capability it exercises; n_primary only in the capability it was planned for.
with releases as (

    select release_id from stg_releases

),

capabilities as (

    select capability, ordinal, benchmark_group from ref_capabilities
    union
    select distinct capability, null, null
    from stg_task_capabilities
    where capability not in (select capability from ref_capabilities)

),

grid as (

    select releases.release_id, capabilities.capability, capabilities.ordinal, capabilities.benchmark_group, levels.difficulty
    from releases
    cross join capabilities
    cross join range(1, 6) as levels(difficulty)

),

cells as (

    select
        caps.release_id,
        caps.capability,
        caps.difficulty,
        count(*) as n_tasks,
        count(*) filter (where status.is_valid) as n_valid,
        count(*) filter (where status.is_valid and caps.is_primary) as n_primary_valid,
        avg(caps.discrimination) filter (where status.is_valid) as mean_discrimination
    from stg_task_capabilities as caps
    join task_status as status using (release_id, task_id)
    group by caps.release_id, caps.capability, caps.difficulty

)

select
    grid.release_id,
    grid.capability,
    grid.benchmark_group,
    grid.difficulty,
    coalesce(cells.n_tasks, 0) as n_tasks,
    coalesce(cells.n_valid, 0) as n_valid,
    coalesce(cells.n_primary_valid, 0) as n_primary_valid,
    coalesce(cells.n_valid, 0) / nullif(sum(coalesce(cells.n_valid, 0)) over (partition by grid.release_id, grid.capability), 0)
        as share_of_capability,
    cells.mean_discrimination,
    coalesce(cells.n_valid, 0) = 0 as is_gap
from grid
left join cells using (release_id, capability, difficulty)
order by grid.release_id, grid.ordinal nulls last, grid.capability, grid.difficulty
