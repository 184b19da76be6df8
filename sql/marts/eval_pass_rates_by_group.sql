-- eval_pass_rates_by_group: per evaluation run and model, pass@1 / pass@k / pass^k by benchmark group and overall.
-- Answers "what is each model's headline score (Claw-Eval style: general, multi_step, multi_turn, overall)?"
-- Same per-task definitions as eval_pass_rates; here each task counts once, in its own benchmark group.
with per_task as (

    select * from eval_task_trials

),

with_k as (

    select
        *,
        min(n) over (partition by release_id, eval_id, model) as k
    from per_task

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
        case when grouping(benchmark_group) = 1 then 'overall' else benchmark_group end as benchmark_group,
        count(*) as n_tasks,
        sum(n) as n_trials,
        any_value(k) as k,
        avg(pass_at_1) as pass_at_1,
        stddev_samp(pass_at_1) / sqrt(count(*)) as pass_at_1_se,
        avg(pass_at_k) as pass_at_k,
        avg(pass_hat_k) as pass_hat_k,
        avg(mean_score) as mean_score,
        avg(violation_rate) as violation_rate
    from task_metrics
    group by grouping sets ((release_id, eval_id, model, benchmark_group), (release_id, eval_id, model))

)

select
    release_id,
    eval_id,
    model,
    benchmark_group,
    n_tasks,
    n_trials,
    k,
    pass_at_1,
    greatest(pass_at_1 - 1.96 * coalesce(pass_at_1_se, 0), 0) as pass_at_1_ci_low,
    least(pass_at_1 + 1.96 * coalesce(pass_at_1_se, 0), 1) as pass_at_1_ci_high,
    pass_at_k,
    pass_hat_k,
    mean_score,
    violation_rate
from aggregated
order by release_id, eval_id, model, benchmark_group = 'overall', benchmark_group
