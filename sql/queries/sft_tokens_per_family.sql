-- SFT tokens per family: how much supervised-training signal each family contributes.
-- Run: coworkenv sql --file sql/queries/sft_tokens_per_family.sql --format csv
select
    release_id,
    family,
    n_examples,
    total_tokens,
    round(100 * share_of_tokens, 1) as pct_of_tokens,
    round(mean_tokens) as mean_tokens,
    p90_tokens
from sft_token_counts
order by release_id, total_tokens desc, family
