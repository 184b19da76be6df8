-- Compare releases: valid share per family in each release next to the release before it (by manifest time).
-- Run: coworkenv sql --file sql/queries/compare_releases.sql --release all
-- With a single release loaded the previous-release columns are null.
with ordered as (

    select
        shares.release_id,
        releases.release_order,
        shares.family,
        shares.n_tasks,
        shares.valid_share
    from valid_share_by_family as shares
    join stg_releases as releases using (release_id)

),

paired as (

    select
        *,
        lag(release_id) over (partition by family order by release_order) as previous_release,
        lag(n_tasks) over (partition by family order by release_order) as previous_n_tasks,
        lag(valid_share) over (partition by family order by release_order) as previous_valid_share
    from ordered

)

select
    release_id,
    previous_release,
    family,
    n_tasks,
    previous_n_tasks,
    round(valid_share, 3) as valid_share,
    round(previous_valid_share, 3) as previous_valid_share,
    round(valid_share - previous_valid_share, 3) as valid_share_change
from paired
where release_order = (select max(release_order) from stg_releases)
order by valid_share_change nulls last, family
