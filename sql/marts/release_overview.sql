-- release_overview: one row per loaded release with its headline counts.
-- Answers "what does each release hold, and how does it differ from its parent?"
with tasks as (

    select release_id, count(*) as n_validated, count(*) filter (where is_valid) as n_valid,
        count(*) filter (where is_published) as n_published
    from task_status
    group by release_id

),

trajectories as (

    select release_id, count(*) as n_trajectories, avg(passed::integer) as trajectory_pass_rate
    from stg_trajectories
    group by release_id

),

sft as (

    select release_id, count(*) as n_sft_examples, sum(n_tokens) as sft_tokens
    from stg_sft
    group by release_id

),

rl as (

    select release_id, count(*) as n_rl_prompts
    from stg_rl
    group by release_id

),

repairs as (

    select release_id, count(*) as n_repair_attempts, count(distinct parent_id) filter (where is_valid_after) as n_rescued
    from stg_repairs
    group by release_id

),

evals as (

    select release_id, count(*) as n_eval_trials, count(distinct model) as n_eval_models
    from stg_eval_results
    group by release_id

)

select
    releases.release_id,
    releases.release_order,
    releases.created_at,
    releases.parent,
    releases.is_latest,
    coalesce(tasks.n_validated, 0) as n_tasks,
    coalesce(tasks.n_valid, 0) as n_valid,
    tasks.n_valid / nullif(tasks.n_validated, 0) as valid_share,
    coalesce(tasks.n_published, 0) as n_published,
    coalesce(repairs.n_repair_attempts, 0) as n_repair_attempts,
    coalesce(repairs.n_rescued, 0) as n_rescued,
    coalesce(trajectories.n_trajectories, 0) as n_trajectories,
    trajectories.trajectory_pass_rate,
    coalesce(sft.n_sft_examples, 0) as n_sft_examples,
    coalesce(sft.sft_tokens, 0) as sft_tokens,
    coalesce(rl.n_rl_prompts, 0) as n_rl_prompts,
    coalesce(evals.n_eval_trials, 0) as n_eval_trials,
    coalesce(evals.n_eval_models, 0) as n_eval_models
from stg_releases as releases
left join tasks using (release_id)
left join trajectories using (release_id)
left join sft using (release_id)
left join rl using (release_id)
left join repairs using (release_id)
left join evals using (release_id)
order by releases.release_order
