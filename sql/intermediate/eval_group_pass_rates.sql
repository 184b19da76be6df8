-- eval_group_pass_rates: per evaluation run, model and group of tasks, pass@1 (95% interval), pass@k and pass^k.
-- Answers "how often does a model pass the tasks of a capability, of a benchmark group, or all of them?" — the rows
-- of eval_pass_rates (group_kind 'capability') and eval_pass_rates_by_group ('benchmark_group' and 'overall').
-- Each task's estimators come from eval_task_pass_k at the group's k and are averaged over the group's tasks.
-- A task counts in every capability it exercises, and once in its benchmark group.
with tasks as (

    -- k = the fewest trials any task in the group has, so every task is scored at a k it reached. The benchmark
    -- groups and overall share the run's k so that their numbers compare; a capability takes its own (below).
    select
        release_id,
        eval_id,
        model,
        task_id,
        n,
        mean_score,
        violation_rate,
        empty_rate,
        capabilities,
        benchmark_group,
        min(n) over (partition by release_id, eval_id, model) as run_k
    from eval_task_trials

),

task_capabilities as (

    select * exclude (capabilities, benchmark_group, run_k), unnest(capabilities) as group_name
    from tasks

),

members as (

    select *, 'capability' as group_kind, min(n) over (partition by release_id, eval_id, model, group_name) as k
    from task_capabilities
    union all by name
    select * exclude (capabilities, benchmark_group, run_k), 'benchmark_group' as group_kind, benchmark_group as group_name, run_k as k
    from tasks
    union all by name
    select * exclude (capabilities, benchmark_group, run_k), 'overall' as group_kind, 'overall' as group_name, run_k as k
    from tasks

),

task_metrics as (

    select members.*, estimates.pass_at_1, estimates.pass_at_k, estimates.pass_hat_k
    from members
    join eval_task_pass_k as estimates using (release_id, eval_id, model, task_id, k)

),

aggregated as (

    select
        release_id,
        eval_id,
        model,
        group_kind,
        group_name,
        count(*) as n_tasks,
        sum(n) as n_trials,
        any_value(k) as k,
        avg(pass_at_1) as pass_at_1,
        stddev_samp(pass_at_1) / sqrt(count(*)) as pass_at_1_se,
        avg(pass_at_k) as pass_at_k,
        avg(pass_hat_k) as pass_hat_k,
        avg(mean_score) as mean_score,
        avg(violation_rate) as violation_rate,
        avg(empty_rate) as empty_rate
    from task_metrics
    group by release_id, eval_id, model, group_kind, group_name

)

select
    release_id,
    eval_id,
    model,
    group_kind,
    group_name,
    n_tasks,
    n_trials,
    k,
    pass_at_1,
    greatest(pass_at_1 - 1.96 * coalesce(pass_at_1_se, 0), 0) as pass_at_1_ci_low,
    least(pass_at_1 + 1.96 * coalesce(pass_at_1_se, 0), 1) as pass_at_1_ci_high,
    pass_at_k,
    pass_hat_k,
    mean_score,
    violation_rate,
    empty_rate
from aggregated
