-- eval_pass_rates: per evaluation run, model and capability, pass@1 with a 95% interval, pass@k and pass^k.
-- Answers "how often does each model pass tasks that exercise capability X?"
-- Per task with n trials and c passes: pass@1 = c/n, pass@k = 1 - C(n-c, k)/C(n, k), pass^k = (c/n)^k
-- (eval_task_pass_k), averaged over tasks; k = the fewest trials any task in the capability has. A task counts
-- in every capability it has. The numbers are eval_group_pass_rates' capability rows.
with rates as (

    select * from eval_group_pass_rates
    where group_kind = 'capability'

)

select
    rates.release_id,
    rates.eval_id,
    rates.model,
    rates.group_name as capability,
    ref_capabilities.benchmark_group,
    rates.* exclude (release_id, eval_id, model, group_kind, group_name)
from rates
left join ref_capabilities on ref_capabilities.capability = rates.group_name
order by rates.release_id, rates.eval_id, rates.model, ref_capabilities.ordinal nulls last, rates.group_name
