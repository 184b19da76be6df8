"""The RL job's rewards, on real trajectories played in real workspaces: the oracle's turns earn every reward, a
prohibited call zeroes safety, broken or cut-off output earns no format reward, and text that only claims the work
(however correct it looks) earns only the checks that read the answer."""

from __future__ import annotations

import json

import pytest

from coworkenv.episode.session import turn_budget
from coworkenv.errors import CoworkEnvError
from coworkenv.grading.play import play_answer_only
from coworkenv.spec.io import load_task
from coworkenv.train.environment import PlayedEpisode, TaskEnvironment
from coworkenv.train.rewards import REWARDS
from tests.support import EXAMPLES

EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.glob("*.json"))


def played(spec, texts: list[str], *, stopped: bool = True) -> PlayedEpisode:
    env = TaskEnvironment(spec, max_turns=turn_budget(spec))
    for text in texts:
        if not env.done:
            env.step(text, stopped=stopped)
    return env.outcome()


def rewards(*episodes: PlayedEpisode) -> dict[str, list[float]]:
    prompts = completions = [[{"role": "assistant", "content": ""}]] * len(episodes)
    return {name: fn(prompts, completions, episode=list(episodes)) for name, fn in REWARDS.items()}


def call(name: str, **arguments) -> str:
    return f'<tool_call>{{"name": "{name}", "arguments": {json.dumps(arguments)}}}</tool_call>'


def test_the_rewards_are_named_for_trls_logs():
    assert REWARDS.names() == ["completion", "safety", "robustness", "format"]
    assert [fn.__name__ for _, fn in REWARDS.items()] == REWARDS.names()  # TRL logs rewards/<__name__>/mean


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_the_oracles_turns_earn_every_reward(name, oracle_turns):
    spec = load_task(EXAMPLES / name)
    episode = played(spec, oracle_turns(spec))
    assert episode.ending == "answer" and episode.grade.score == 1.0
    assert rewards(episode) == {"completion": [1.0], "safety": [1.0], "robustness": [1.0], "format": [1.0]}


def test_a_prohibited_call_zeroes_safety(oracle_turns):
    spec = load_task(EXAMPLES / "01_mail_forward_invoices.json")
    turns = oracle_turns(spec)
    clean = played(spec, turns)
    broken = played(spec, [*turns[:-1], call("mail_delete", id="m1"), turns[-1]])
    assert [v.tool for v in broken.grade.violations] == ["mail_delete"]
    got = rewards(clean, broken)
    assert got["safety"] == [1.0, 0.0]
    assert got["format"] == [1.0, 1.0]  # a well-formed call: breaking a rule is not a format error
    assert got["completion"][1] < 1.0  # the task's own `tool_not_called` check saw it too


def test_broken_or_cut_off_output_earns_no_format_reward(oracle_turns):
    spec = load_task(EXAMPLES / "01_mail_forward_invoices.json")
    broken_block = played(spec, ['<tool_call>{"name": "mail_search", "arguments": {"query": "invoice"'])
    not_json = played(spec, ["<tool_call>mail_search(query='invoice')</tool_call>", "Done."])
    cut_off = played(spec, oracle_turns(spec), stopped=False)
    unknown_tool = played(spec, [call("files_delete", path="inbox"), "Done."])
    got = rewards(broken_block, not_json, cut_off, unknown_tool)
    assert got["format"] == [0.0, 0.0, 0.0, 0.5]  # unreadable text ends a task without a user as its answer
    assert got["robustness"][3] == 0.0  # the workspace refused the call (400) and nothing recovered from it
    assert got["completion"][2] == 1.0  # cut-off turns still act: form and effect are rewarded apart


def test_claims_without_calls_earn_nothing_the_workspace_does_not_show(oracle_turns):
    tickets = load_task(EXAMPLES / "06_tickets_triage_queue.json")
    turns = oracle_turns(tickets)
    described = (
        "I triaged the queue: "
        + " ".join(turns[:-1]).replace("<tool_call>", "").replace("</tool_call>", "")
        + " "
        + turns[-1]
    )
    claim = played(tickets, [described])
    got = rewards(claim, played(tickets, turns))
    nothing_done = play_answer_only(tickets).grade.completion  # the checks that hold on the untouched workspace
    assert nothing_done < 0.3 and got["completion"] == [nothing_done, 1.0]
    assert got["format"] == [1.0, 1.0] and got["safety"] == [1.0, 1.0]

    sheets = load_task(EXAMPLES / "03_sheets_book_invoices.json")
    answer = played(sheets, oracle_turns(sheets)[-1:])  # the right number, with none of the sheet's edits behind it
    weights = {c.kind: 0.0 for c in sheets.checks}
    for check in sheets.checks:
        weights[check.kind] += check.weight
    answer_share = weights["answer_number"] / sum(weights.values())
    assert rewards(answer)["completion"] == [pytest.approx(play_answer_only(sheets).grade.completion + answer_share)]


def test_the_rewards_need_played_episodes():
    with pytest.raises(CoworkEnvError, match="played episode"):
        REWARDS.get("completion")([[]], [[]], task_id=["t"])
