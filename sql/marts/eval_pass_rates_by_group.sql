-- eval_pass_rates_by_group: per evaluation run and model, pass@1 / pass@k / pass^k by benchmark group and overall.
-- Answers "what is each model's headline score (Claw-Eval style: general, multi_step, multi_turn, overall)?"
-- Same per-task definitions as eval_pass_rates; here each task counts once, in its own benchmark group, and every
-- group is scored at the run's k (the fewest trials any task has). The numbers are eval_group_pass_rates' rows.
with rates as (

    select * from eval_group_pass_rates
    where group_kind in ('benchmark_group', 'overall')

)

select * exclude (group_kind, empty_rate) rename (group_name as benchmark_group)
from rates
order by release_id, eval_id, model, benchmark_group = 'overall', benchmark_group
