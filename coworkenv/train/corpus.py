"""The text the tiny model's tokenizer is trained on: the project's own prompts (docs/design/training.md, "Models").

Every document is a whole conversation rendered with the model's chat template — the system prompt, the tool
schemas a task allows, the instruction, the oracle's tool calls, the workspace's tool results, the final answer — of
procedurally generated tasks (every family at every difficulty) and of the example tasks, plus the full tool catalog.
A tokenizer trained on this text spells tool schemas and calls in few tokens, so prompts stay short.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from coworkenv.spec.task import TaskSpec

CONTROL_TOKENS = ("<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|pad|>")
"""Special tokens: never split, dropped when output is decoded."""
TAG_TOKENS = ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>")
"""Added tokens that stay in decoded text (the parser reads them)."""
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"
"""The hand-written example tasks of a source checkout (absent from an installed wheel)."""
SEEDS_PER_DIFFICULTY = 1


def chat_template() -> str:
    return (Path(__file__).with_name("chat_template.jinja")).read_text(encoding="utf-8")


def render(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, template: str) -> str:
    """One conversation as the model sees it (transformers' own renderer, so the text is what tokenizers get)."""
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, _ = render_jinja_template([messages], tools=tools, chat_template=template)
    return rendered[0]


def _procedural_tasks() -> Iterator[TaskSpec]:
    from coworkenv.synth.family import load_families
    from coworkenv.synth.generate import build_task

    for _, family in load_families().items():
        for difficulty in range(1, 6):
            for seed in range(SEEDS_PER_DIFFICULTY):
                yield build_task(family, seed, difficulty)


def _example_tasks(examples: Path | None) -> list[TaskSpec]:
    from coworkenv.spec.io import load_tasks

    return load_tasks(examples) if examples is not None and examples.is_dir() else []


def _oracle_conversation(spec: TaskSpec) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from coworkenv.episode.runner import run_episode
    from coworkenv.episode.scripted import ScriptedPolicy

    trajectory, _ = run_episode(spec, ScriptedPolicy(spec))
    return trajectory.model_dump(mode="json", exclude_none=True)["messages"], spec.tool_schemas


def corpus_documents(examples: Path | None = EXAMPLES) -> list[str]:
    """The training documents, in a fixed order (the same code and examples give the same corpus)."""
    from coworkenv.workspace.tools import catalog_text, tool_schemas

    template = chat_template()
    documents = [catalog_text(), json.dumps(tool_schemas(), ensure_ascii=False, indent=2)]
    for spec in [*_procedural_tasks(), *_example_tasks(examples)]:
        messages, tools = _oracle_conversation(spec)
        documents.append(render(messages, tools, template))
    return documents


def without_control_tokens(text: str) -> str:
    """Text for BPE training: control tokens are single added tokens, so merges must not be spent on their pieces."""
    for token in (*CONTROL_TOKENS, *TAG_TOKENS):
        text = text.replace(token, "\n")
    return text
