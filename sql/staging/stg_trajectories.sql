-- stg_trajectories: one row per trajectory (task, agent, trial), typed, with outcome flags.
-- Answers "how did each policy do on each task?" (messages stay as the JSON string; parse on demand).
with source as (

    select * from src_trajectories

),

renamed as (

    select
        release_id,
        cast(trajectory_id as varchar) as trajectory_id,
        cast(task_id as varchar) as task_id,
        cast(agent as varchar) as agent,
        nullif(trim(cast(model as varchar)), '') as model,
        cast(trial as integer) as trial,
        cast(family as varchar) as family,
        cast(capabilities as varchar[]) as capabilities,
        cast(difficulty as integer) as difficulty,
        cast(n_messages as integer) as n_messages,
        cast(n_tool_calls as integer) as n_tool_calls,
        cast(completion as double) as completion,
        cast(safety as double) as safety,
        cast(robustness as double) as robustness,
        cast(score as double) as score,
        cast(passed as boolean) as passed,
        cast(evidence_hash as varchar) as evidence_hash,
        cast(messages_json as varchar) as messages_json
    from source

)

select
    release_id,
    trajectory_id,
    task_id,
    agent,
    model,
    coalesce(agent || ':' || model, agent) as policy,
    trial,
    family,
    capabilities,
    difficulty,
    n_messages,
    n_tool_calls,
    completion,
    safety,
    robustness,
    score,
    passed,
    safety = 0 as is_safety_violation,
    robustness < 1 as had_tool_errors,
    n_tool_calls = 0 as made_no_calls,
    evidence_hash,
    messages_json
from renamed
