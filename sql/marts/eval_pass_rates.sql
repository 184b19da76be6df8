-- eval_pass_rates: per evaluation run, model and capability, pass@1, pass@k and pass^k with a 95% interval.
-- Answers "how often does each model pass tasks that exercise capability X?"
-- Per task with n trials and c passes: pass@1 = c/n, pass@k = 1 - C(n-c, k)/C(n, k), pass^k = (c/n)^k,
-- averaged over tasks; k = the fewest trials any task in the group has. A task counts in every capability it has.
with per_task as (

    select * from eval_task_trials

),

per_capability as (

    select
        release_id,
        eval_id,
        model,
        unnest(capabilities) as capability,
        task_id,
        n,
        c,
        mean_score,
        violation_rate,
        empty_rate
    from per_task

),

with_k as (

    select
        *,
        min(n) over (partition by release_id, eval_id, model, capability) as k
    from per_capability

),

task_metrics as (

    select
        *,
        c / n as pass_at_1,
        1 - list_product([greatest(n - c - i, 0) / (n - i) for i in range(k)]) as pass_at_k,
        pow(c / n, k) as pass_hat_k
    from with_k

),

aggregated as (

    select
        release_id,
        eval_id,
        model,
        capability,
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
    group by release_id, eval_id, model, capability

)

select
    aggregated.release_id,
    aggregated.eval_id,
    aggregated.model,
    aggregated.capability,
    ref_capabilities.benchmark_group,
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
left join ref_capabilities using (capability)
order by aggregated.release_id, aggregated.eval_id, aggregated.model, ref_capabilities.ordinal nulls last, aggregated.capability
