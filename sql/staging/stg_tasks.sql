-- stg_tasks: one row per published task, typed, with derived columns.
-- Answers "what tasks does the release hold, and does each pass the grading-consistency gate?"
-- passes_gate: oracle scores exactly 1, empty scores exactly 0, and every oracle-plus-violation run scores 0.
with source as (

    select * from src_tasks

),

renamed as (

    select
        release_id,
        cast(task_id as varchar) as task_id,
        cast(family as varchar) as family,
        cast(version as integer) as spec_version,
        cast(capabilities as varchar[]) as capabilities,
        cast(primary_capability as varchar) as primary_capability,
        cast(difficulty as integer) as difficulty,
        cast(instruction as varchar) as instruction,
        cast(tools as varchar[]) as tools,
        cast(n_checks as integer) as n_checks,
        cast(n_prohibited as integer) as n_prohibited,
        cast(fault_rate as double) as fault_rate,
        cast(multi_turn as boolean) as is_multi_turn,
        cast(generator as varchar) as generator,
        cast(seed as bigint) as seed,
        nullif(cast(parent_id as varchar), '') as parent_id,
        coalesce(cast(repair_round as integer), 0) as repair_round,
        cast(oracle_score as double) as oracle_score,
        cast(empty_score as double) as empty_score,
        cast(violation_max_score as double) as violation_max_score,
        cast(discrimination as double) as discrimination,
        cast(spec_hash as varchar) as spec_hash,
        cast(spec_json as varchar) as spec_json
    from source

),

derived as (

    select
        *,
        split_part(generator, ':', 1) as generator_kind,
        len(capabilities) as n_capabilities,
        len(tools) as n_tools,
        length(instruction) as instruction_chars,
        fault_rate > 0 as has_faults,
        repair_round > 0 as is_repaired,
        oracle_score = 1.0
            and empty_score = 0.0
            and coalesce(violation_max_score, 0.0) = 0.0 as passes_gate
    from renamed

)

select * from derived
