-- stg_rl: one row per RL prompt (one per task), typed, with prompt and tool counts.
-- Answers "which tasks are RL prompts, and what does each prompt offer the policy?"
with source as (

    select * from src_rl

),

renamed as (

    select
        release_id,
        cast(task_id as varchar) as task_id,
        cast(family as varchar) as family,
        cast(capabilities as varchar[]) as capabilities,
        cast(difficulty as integer) as difficulty,
        prompt,
        cast(tools as varchar) as tools_json,
        cast(spec_json as varchar) as spec_json
    from source

)

select
    release_id,
    task_id,
    family,
    capabilities,
    difficulty,
    len(prompt) as n_prompt_messages,
    case when json_valid(tools_json) then json_array_length(tools_json) end as n_tools,
    prompt,
    tools_json,
    spec_json
from renamed
