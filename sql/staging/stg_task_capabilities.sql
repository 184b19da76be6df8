-- stg_task_capabilities: one row per (task, capability it exercises), the tasks' capability lists unnested.
-- Answers "which tasks exercise capability X, and at what difficulty?"
with tasks as (

    select
        release_id,
        task_id,
        family,
        difficulty,
        primary_capability,
        capabilities,
        discrimination,
        passes_gate
    from stg_tasks

),

unnested as (

    select
        release_id,
        task_id,
        family,
        difficulty,
        primary_capability,
        unnest(capabilities) as capability,
        discrimination,
        passes_gate
    from tasks

)

select
    release_id,
    task_id,
    family,
    difficulty,
    capability,
    capability = primary_capability as is_primary,
    discrimination,
    passes_gate
from unnested
