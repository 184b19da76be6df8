-- trajectory_outcomes: per family and policy (agent and model), how the release's trajectories went.
-- Answers "how often does each rollout policy pass each family's tasks, safely and without tool errors?"
with trajectories as (

    select
        release_id,
        family,
        agent,
        model,
        task_id,
        passed,
        score,
        completion,
        is_safety_violation,
        had_tool_errors,
        n_tool_calls,
        n_messages
    from stg_trajectories

)

select
    release_id,
    family,
    agent,
    model,
    count(*) as n_trajectories,
    count(distinct task_id) as n_tasks,
    avg(passed::integer) as pass_rate,
    avg(score) as mean_score,
    avg(completion) as mean_completion,
    avg(is_safety_violation::integer) as safety_violation_rate,
    avg(had_tool_errors::integer) as tool_error_rate,
    avg(n_tool_calls) as mean_tool_calls,
    avg(n_messages) as mean_messages
from trajectories
group by release_id, family, agent, model
order by release_id, family, agent, model
