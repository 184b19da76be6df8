-- Families with the lowest valid share: where generation wastes the most work, and how much repair recovers.
-- Run: coworkenv sql --file sql/queries/lowest_valid_share_families.sql
select
    release_id,
    family,
    n_tasks,
    round(valid_share, 3) as valid_share,
    round(first_pass_valid_share, 3) as first_pass_valid_share,
    round(final_valid_share, 3) as final_valid_share,
    n_rescued
from valid_share_by_family
order by valid_share, n_tasks desc, family
limit 10
