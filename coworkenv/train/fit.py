"""Conversations fitted to a training length (docs/design/training.md, "Training").

A trainer that truncates a tokenized conversation at `max_length` cuts it anywhere: inside an assistant turn (the
model then learns a call that never closes) or before the first one (a row with nothing to learn, still paid for).
Here a conversation longer than `max_length` is cut after its last assistant turn that fits whole — a shorter
conversation of the same task, ending where the model's turn ends — and one whose first assistant turn does not fit
is left out; or, not cut, every conversation that does not fit whole is left out, so that every row ends on its final
answer (a small model that never sees the end of long tasks learns to call tools but not to stop). Every cut and
every row left out is counted in `FitReport`, which the job writes into `training.json` and prints.

The rows are tokenized here, with the model's chat template on the conversations as plain dicts, and handed to the
trainer as token ids: a `datasets` table would give every tool schema the union of all tools' fields (nulls where a
tool has none), and the template would render those — training on prompts that inference never shows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class FitReport(BaseModel):
    """How a table's conversations fitted into `max_length` tokens (rendered with the model's chat template)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_length: int
    rows: int = Field(description="Conversations in.")
    whole: int = Field(description="Kept whole.")
    shortened: int = Field(description="Cut after their last assistant turn that fits.")
    dropped: int = Field(
        description="Left out: not even their first assistant turn fits (or not whole, when rows are not cut)."
    )
    assistant_turns: int = Field(description="Assistant turns in all conversations.")
    assistant_turns_dropped: int = Field(description="Assistant turns lost to cuts and left-out rows.")
    tokens: int = Field(description="Tokens of the kept conversations, as trained on.")
    supervised_tokens: int = Field(description="Of those, the assistant tokens the loss is taken on.")

    def line(self) -> str:
        return (
            f"{self.whole + self.shortened} of {self.rows} conversations fit {self.max_length:,} tokens "
            f"({self.shortened} cut after their last whole assistant turn, {self.dropped} left out; "
            f"{self.assistant_turns_dropped} of {self.assistant_turns} assistant turns lost); "
            f"{self.supervised_tokens:,} supervised of {self.tokens:,} tokens"
        )


def encode(tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, list[int]]:
    """`input_ids` and `assistant_masks` (1 on the assistant's tokens) of a conversation, as the agent renders it."""
    out = tokenizer.apply_chat_template(
        messages, tools=tools or None, tokenize=True, return_dict=True, return_assistant_tokens_mask=True
    )
    return {"input_ids": list(out["input_ids"]), "assistant_masks": list(out["assistant_masks"])}


def fit_rows(
    tokenizer: Any, rows: Iterable[dict[str, Any]], max_length: int, *, cut: bool = True
) -> tuple[list[dict[str, list[int]]], FitReport]:
    """The rows (`messages`, `tools`) cut to fit `max_length` and tokenized (`encode`), and what that took. `cut`
    False: a conversation that does not fit whole is left out instead (every row then ends on its final answer)."""
    kept: list[dict[str, Any]] = []
    counts = dict.fromkeys(
        (
            "rows",
            "whole",
            "shortened",
            "dropped",
            "assistant_turns",
            "assistant_turns_dropped",
            "tokens",
            "supervised_tokens",
        ),
        0,
    )
    for row in rows:
        messages, tools = row["messages"], row.get("tools")
        ends = [i + 1 for i, m in enumerate(messages) if m.get("role") == "assistant"]
        counts["rows"] += 1
        counts["assistant_turns"] += len(ends)
        tokens = encode(tokenizer, messages, tools)
        if len(tokens["input_ids"]) <= max_length:
            counts["whole"] += 1
        elif not cut:
            counts["dropped"] += 1
            counts["assistant_turns_dropped"] += len(ends)
            continue
        else:
            # the longest prefix ending after an assistant turn that fits: lengths grow with the prefix (appending a
            # message never changes how earlier ones render), so bisect over the turn ends
            lo, hi, best = 0, len(ends) - 1, None
            while lo <= hi:
                mid = (lo + hi) // 2
                shorter = encode(tokenizer, messages[: ends[mid]], tools)
                if len(shorter["input_ids"]) <= max_length:
                    best, lo = (mid, shorter), mid + 1
                else:
                    hi = mid - 1
            if best is None:
                counts["dropped"] += 1
                counts["assistant_turns_dropped"] += len(ends)
                continue
            mid, tokens = best
            counts["shortened"] += 1
            counts["assistant_turns_dropped"] += len(ends) - (mid + 1)
        kept.append(tokens)
        counts["tokens"] += len(tokens["input_ids"])
        counts["supervised_tokens"] += sum(tokens["assistant_masks"])
    return kept, FitReport(max_length=max_length, **counts)
