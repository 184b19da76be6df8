-- stg_sft: one row per SFT example, typed, with message, tool-call and token counts.
-- Answers "what conversations go into supervised fine-tuning, and how big are they?"
-- n_messages, n_tool_calls, n_assistant_messages read the whole messages column (~1 s per 100k rows on two
-- cores); marts that need only sizes use n_tokens.
with source as (

    select * from src_sft

),

renamed as (

    select
        release_id,
        cast(task_id as varchar) as task_id,
        cast(trajectory_id as varchar) as trajectory_id,
        cast(family as varchar) as family,
        cast(score as double) as score,
        cast(n_tokens as bigint) as n_tokens,
        messages,
        cast(tools as varchar) as tools_json
    from source

)

select
    release_id,
    task_id,
    trajectory_id,
    family,
    score,
    n_tokens,
    n_tokens is not null as has_token_count,
    len(messages) as n_messages,
    list_sum([coalesce(len(m.tool_calls), 0) for m in messages]) as n_tool_calls,
    len(list_filter(messages, lambda m: m.role = 'assistant')) as n_assistant_messages,
    case when json_valid(tools_json) then json_array_length(tools_json) end as n_tools,
    messages,
    tools_json
from renamed
