-- stg_capability_profile: one row per (model, capability, difficulty) cell of a capability profile, typed.
-- Answers "where is each model weak?" (pass_rate recomputed from the counts; the stored one is kept beside it).
with source as (

    select * from src_capability_profile

),

renamed as (

    select
        release_id,
        cast(model as varchar) as model,
        cast(capability as varchar) as capability,
        cast(difficulty as integer) as difficulty,
        cast(attempts as bigint) as attempts,
        cast(passes as bigint) as passes,
        cast(pass_rate as double) as stored_pass_rate
    from source

)

select
    release_id,
    model,
    capability,
    difficulty,
    attempts,
    passes,
    passes / nullif(attempts, 0) as pass_rate,
    stored_pass_rate
from renamed
