-- eval_task_pass_k: per evaluation run, model and task, pass@1, pass@k and pass^k for every k from 1 to its trials n.
-- Answers "how likely is task X to pass at least once (pass@k), or every time (pass^k), in k trials?"
-- The only place the estimators are computed (the contract of coworkenv/grading/metrics.py): with c of n trials
-- passed, pass@1 = c/n, pass@k = 1 - C(n-c, k)/C(n, k), pass^k = (c/n)^k. Every k is here because each
-- aggregate picks its own k (eval_group_pass_rates).
with tasks as (

    select release_id, eval_id, model, task_id, n, c
    from eval_task_trials

),

per_k as (

    select *, unnest(range(1, n + 1)) as k
    from tasks

)

select
    release_id,
    eval_id,
    model,
    task_id,
    n,
    c,
    k,
    c / n as pass_at_1,
    -- C(n-c, k)/C(n, k) as the product of its k ratios (n-c-i)/(n-i): no binomial of n is ever formed, so many
    -- trials cannot overflow; greatest(.., 0) makes the product 0 once k exceeds the failures n-c
    1 - list_product([greatest(n - c - i, 0) / (n - i) for i in range(k)]) as pass_at_k,
    pow(c / n, k) as pass_hat_k
from per_k
