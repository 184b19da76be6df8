-- Repair effectiveness: per failure code, how many failing tasks were repaired and rescued, and in how many rounds.
-- Run: coworkenv sql --file sql/queries/repair_effectiveness.sql
select
    release_id,
    code,
    n_failed_tasks,
    n_repaired,
    n_rescued,
    round(rescue_rate, 3) as rescue_rate,
    round(mean_rescue_round, 2) as mean_rescue_round,
    round(code_fix_rate, 3) as code_fix_rate
from repair_rescue_by_code
order by release_id, n_failed_tasks desc, code
