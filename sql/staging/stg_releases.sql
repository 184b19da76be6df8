-- stg_releases: one row per selected release, from its manifest, typed.
-- Answers "which releases are loaded, in which order, and which one is the latest?"
with source as (

    select * from src_releases

)

select
    release_id,
    release_order,
    nullif(parent, '') as parent,
    try_cast(created_at as timestamptz) as created_at,
    is_latest,
    cast(row_counts as json) as row_counts,
    cast(manifest as json) as manifest
from source
