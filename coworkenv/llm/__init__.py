"""The one OpenAI-wire chat client (vLLM, SGLang, `transformers serve`, hosted APIs), shared by the LLM task
generator, the LLM repairer and, later, the agents and the simulated user."""

from coworkenv.llm.client import ChatClient, LLMConfig, LLMError, Refused, extract_json, looks_like_refusal

__all__ = ["ChatClient", "LLMConfig", "LLMError", "Refused", "extract_json", "looks_like_refusal"]
