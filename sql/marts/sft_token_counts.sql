-- sft_token_counts: per family, the SFT examples and their approximate token counts.
-- Answers "how many SFT tokens does each family contribute, and how long are its conversations?"
with examples as (

    -- token and score columns only: message and tool-call counts need the whole messages column (see stg_sft)
    select release_id, family, task_id, n_tokens, score
    from stg_sft

),

by_family as (

    select
        release_id,
        family,
        count(*) as n_examples,
        count(distinct task_id) as n_tasks,
        count(n_tokens) as n_with_tokens,
        coalesce(sum(n_tokens), 0) as total_tokens,
        avg(n_tokens) as mean_tokens,
        quantile_cont(n_tokens, 0.5) as median_tokens,
        quantile_cont(n_tokens, 0.9) as p90_tokens,
        max(n_tokens) as max_tokens,
        avg(score) as mean_score
    from examples
    group by release_id, family

)

select
    *,
    total_tokens / nullif(sum(total_tokens) over (partition by release_id), 0) as share_of_tokens
from by_family
order by release_id, total_tokens desc, family
