"""The one OpenAI-wire chat client (vLLM, SGLang, `transformers serve`, hosted APIs), shared by the LLM task
generator, the LLM repairer (`ChatClient`, synchronous), the `openai:` agents and the LLM user (`AsyncChat`, with
tools; `ChatClient`)."""

from coworkenv.llm.async_chat import AsyncChat, Completion
from coworkenv.llm.client import ChatClient, LLMConfig, LLMError, Refused, extract_json, looks_like_refusal, retry_delay

__all__ = [
    "AsyncChat",
    "ChatClient",
    "Completion",
    "LLMConfig",
    "LLMError",
    "Refused",
    "extract_json",
    "looks_like_refusal",
    "retry_delay",
]
