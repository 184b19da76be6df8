-- stg_repairs: one row per repair attempt (task, round), typed, with the strategy split and list sizes.
-- Answers "which repairs were tried on which tasks, for which failure codes, and did they work?"
with source as (

    select * from src_repairs

),

renamed as (

    select
        release_id,
        cast(task_id as varchar) as task_id,
        cast(parent_id as varchar) as parent_id,
        cast("round" as integer) as repair_round,
        cast(strategy as varchar) as strategy,
        cast(codes_addressed as varchar[]) as codes_addressed,
        cast(patch as varchar) as patch,
        cast(valid_after as boolean) as is_valid_after,
        cast(failed_codes_after as varchar[]) as failed_codes_after
    from source

)

select
    release_id,
    task_id,
    parent_id,
    split_part(parent_id, '-', 1) as family_from_id,
    repair_round,
    strategy,
    split_part(strategy, ':', 1) as strategy_kind,
    nullif(split_part(strategy, ':', 2), '') as strategy_code,
    codes_addressed,
    len(codes_addressed) as n_codes_addressed,
    failed_codes_after,
    coalesce(len(failed_codes_after), 0) as n_failed_codes_after,
    is_valid_after,
    patch,
    case when json_valid(patch) then json_array_length(patch) end as n_patch_ops
from renamed
