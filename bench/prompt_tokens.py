"""What a small model's context holds: tokens of the system turn (the tool list), of whole conversations and of the
assistant's part, with this tree's chat template and tool results against an older commit's, on the same tasks.

Method: `--n` procedurally generated tasks (seed `--seed`, the cold-start plan), each played by the oracle in a live
episode; each conversation rendered with a model's tokenizer twice: as this tree renders it (its chat template, tool
results as compact JSON) and as the older commit did (that commit's `train/chat_template.jinja`, read with `git show`;
tool results re-encoded with `json.dumps`' default separators). Reported per rendering: median / 90th percentile / max
tokens of the system turn and of the conversation, the assistant's tokens (what SFT trains on), and the share of
conversations that fit 1,024, 2,048 and 4,096 tokens whole.

    python bench/prompt_tokens.py --model models/smollm2 [--n 200] [--rev 41999bc] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def conversations(n: int, seed: int) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    from coworkenv.agents import make_policy
    from coworkenv.episode.runner import run_episode
    from coworkenv.synth.generate import GenerateRequest, generate

    tasks, _ = generate(GenerateRequest(n=n, seed=seed))
    out = []
    for spec in tasks:
        trajectory, _ = run_episode(spec, make_policy("oracle", spec))
        out.append((trajectory.model_dump(mode="json", exclude_none=True)["messages"], spec.tool_schemas))
    return out


def loose_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool results as the older code wrote them: `json.dumps` with its default separators."""
    return [
        {**m, "content": json.dumps(json.loads(m["content"]), ensure_ascii=False)} if m["role"] == "tool" else m
        for m in messages
    ]


def measure(
    tokenizer: Any, template: str, convs: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]
) -> dict[str, Any]:
    system, total, assistant = [], [], []
    for messages, tools in convs:
        out = tokenizer.apply_chat_template(
            messages,
            tools=tools,
            chat_template=template,
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
        )
        total.append(len(out["input_ids"]))
        assistant.append(sum(out["assistant_masks"]))
        first = tokenizer.apply_chat_template(
            messages[:1], tools=tools, chat_template=template, tokenize=True, return_dict=True
        )
        system.append(len(first["input_ids"]))

    def spread(values: list[int]) -> dict[str, int]:
        ordered = sorted(values)
        return {
            "median": int(statistics.median(ordered)),
            "p90": ordered[int(0.9 * (len(ordered) - 1))],
            "max": ordered[-1],
        }

    return {
        "system": spread(system),
        "conversation": spread(total),
        "assistant": spread(assistant),
        "fit": {str(n): round(sum(t <= n for t in total) / len(total), 3) for n in (1024, 2048, 4096)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="A checkpoint folder: its tokenizer counts the tokens.")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rev", default="41999bc", help="The older commit whose chat template is compared.")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from transformers import AutoTokenizer

    from coworkenv.train.corpus import chat_template

    tokenizer = AutoTokenizer.from_pretrained(args.model, local_files_only=True)
    old_template = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{args.rev}:coworkenv/train/chat_template.jinja"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    convs = conversations(args.n, args.seed)
    results = {
        "model": Path(args.model).name,
        "tasks": len(convs),
        "rev": args.rev,
        "now": measure(tokenizer, chat_template(), convs),
        "before": measure(tokenizer, old_template, [(loose_results(m), t) for m, t in convs]),
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{results['tasks']} oracle conversations, {results['model']}'s tokenizer")
    print(
        "| rendering | system turn (median / p90 / max) | conversation (median / p90 / max) | assistant (median) | fit 1,024 / 2,048 / 4,096 |"
    )
    print("|---|---|---|---|---|")
    for name, label in (("before", f"{args.rev}"), ("now", "this tree")):
        r = results[name]
        s, c = r["system"], r["conversation"]
        print(
            f"| {label} | {s['median']} / {s['p90']} / {s['max']} | {c['median']} / {c['p90']} / {c['max']} | {r['assistant']['median']} | "
            f"{r['fit']['1024']:.0%} / {r['fit']['2048']:.0%} / {r['fit']['4096']:.0%} |"
        )


if __name__ == "__main__":
    main()
