-- Policy pass rates: how each rollout policy does per family (oracle should be 1, the empty agent 0).
-- Run: coworkenv sql --file sql/queries/policy_pass_rates.sql
select
    release_id,
    agent,
    model,
    sum(n_trajectories) as trajectories,
    round(sum(pass_rate * n_trajectories) / sum(n_trajectories), 3) as pass_rate,
    round(sum(safety_violation_rate * n_trajectories) / sum(n_trajectories), 3) as safety_violation_rate,
    round(min(pass_rate), 3) as worst_family_pass_rate,
    arg_min(family, pass_rate) as worst_family
from trajectory_outcomes
group by release_id, agent, model
order by release_id, pass_rate desc, agent
