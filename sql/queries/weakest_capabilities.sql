-- Weakest capabilities per model: the capability each evaluated model passes least often (pass^k), to target next.
-- Run: coworkenv sql --file sql/queries/weakest_capabilities.sql
select
    release_id,
    eval_id,
    model,
    capability,
    n_tasks,
    k,
    round(pass_at_1, 3) as pass_at_1,
    round(pass_at_1_ci_low, 3) as ci_low,
    round(pass_at_1_ci_high, 3) as ci_high,
    round(pass_hat_k, 3) as pass_hat_k
from eval_pass_rates
qualify row_number() over (partition by release_id, eval_id, model order by pass_hat_k, capability) <= 3
order by release_id, eval_id, model, pass_hat_k
