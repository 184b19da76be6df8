"""EpisodeSession: one assistant turn at a time, with its trace, its endings and the same results as run_episode."""

from __future__ import annotations

import json
import time

import pytest

from coworkenv.agents import make_policy
from coworkenv.episode import EpisodeSession, replay, run_episode
from coworkenv.episode.episode import EpisodeFinished
from coworkenv.episode.session import BadMessage, initial_messages
from coworkenv.spec.io import load_task
from tests.support import EXAMPLES

MAIL = EXAMPLES / "01_mail_forward_invoices.json"
MULTI_TURN = EXAMPLES / "08_multi_turn_vendor_demo.json"


def _call(name: str, args: dict, call_id: str = "c1") -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}],
    }


def test_a_turn_runs_its_calls_and_traces_them():
    spec = load_task(MAIL)
    session = EpisodeSession(spec)
    assert session.messages == initial_messages(spec) and [t["function"]["name"] for t in session.tools] == spec.tools
    session.apply(_call("mail_search", {"query": "invoice"}), latency_s=0.25, prompt_tokens=11, completion_tokens=3)
    session.apply(_call("mail_read", {"id": "no-such-id"}, "c2"), format_error="unparsed")
    assert not session.done and session.n_turns == 2
    assert [m["role"] for m in session.messages[2:]] == ["assistant", "tool", "assistant", "tool"]
    first, second = session.trace()
    assert (first["latency_s"], first["prompt_tokens"], first["completion_tokens"], first["format_error"]) == (
        0.25,
        11,
        3,
        None,
    )
    assert first["calls"][0]["tool"] == "mail_search" and first["calls"][0]["arguments"] == {"query": "invoice"}
    assert (
        first["calls"][0]["status"] == "ok"
        and first["calls"][0]["code"] is None
        and first["calls"][0]["latency_s"] >= 0
    )
    assert second["format_error"] == "unparsed" and (second["calls"][0]["status"], second["calls"][0]["code"]) == (
        "error",
        404,
    )


def test_the_final_answer_ends_it_and_finish_grades_the_live_evidence():
    spec = load_task(MAIL)
    session = EpisodeSession(spec)
    policy = make_policy("oracle", spec)
    while not session.done:
        session.apply(policy.act(session.messages, session.tools))
    assert session.ending == "answer"
    trajectory, evidence = session.finish()
    assert evidence.answer == spec.solution[-1].answer
    assert replay(spec, trajectory).evidence_hash == evidence.evidence_hash
    with pytest.raises(EpisodeFinished):
        session.apply({"role": "assistant", "content": "again"})


def test_a_message_the_user_answers_goes_on():
    spec = load_task(MULTI_TURN)
    say = next(step.say for step in spec.solution if hasattr(step, "say"))
    session = EpisodeSession(spec)
    session.apply({"role": "assistant", "content": say})
    assert not session.done and session.messages[-1]["role"] == "user"


def test_out_of_turns_it_is_graded_by_replay_like_run_episode():
    spec = load_task(MAIL)
    session = EpisodeSession(spec, max_turns=2)
    policy = make_policy("oracle", spec)
    while not session.done:
        session.apply(policy.act(session.messages, session.tools))
    assert session.ending == "turns" and session.n_turns == 2
    trajectory, evidence = session.finish()
    old_trajectory, old_evidence = run_episode(spec, make_policy("oracle", spec), max_turns=2)
    assert trajectory == old_trajectory and evidence.evidence_hash == old_evidence.evidence_hash
    assert evidence.evidence_hash == replay(spec, trajectory).evidence_hash


def test_past_the_wall_clock_limit_it_ends():
    spec = load_task(MAIL)
    session = EpisodeSession(spec, wall_s=0.05)
    session.apply(_call("mail_search", {"query": "invoice"}))
    assert not session.done
    time.sleep(0.06)
    session.apply(_call("mail_search", {"query": "x"}, "c2"))
    assert session.ending == "wall"


def test_on_its_own_clock_only_its_replies_and_its_own_work_count():
    spec = load_task(MAIL)
    session = EpisodeSession(spec, wall_s=0.05, clock="own")
    session.apply(_call("mail_search", {"query": "invoice"}), latency_s=0.01)
    time.sleep(0.06)  # waiting while other episodes' turns are made: not this episode's time
    session.apply(_call("mail_search", {"query": "x"}, "c2"), latency_s=0.01)
    assert not session.done and 0.02 <= session.used() == session.spent < 0.05 and session.elapsed() > 0.06
    session.apply(_call("mail_search", {"query": "y"}, "c3"), latency_s=0.04)  # its own reply took too long
    assert session.ending == "wall" and session.used() > 0.05
    with pytest.raises(ValueError, match="unknown clock"):
        EpisodeSession(spec, clock="cpu")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "message",
    [
        "text",
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": 3},
        {"role": "assistant", "tool_calls": {"id": "x"}},
        {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"arguments": "{}"}}]},
        {"role": "assistant", "tool_calls": [{"function": {"name": "mail_search"}}]},
    ],
)
def test_what_is_not_an_assistant_message_is_refused_and_changes_nothing(message):
    spec = load_task(MAIL)
    session = EpisodeSession(spec)
    with pytest.raises(BadMessage):
        session.apply(message)
    assert session.messages == initial_messages(spec) and session.n_turns == 0 and not session.episode.workspace.audit


def _narrated(call: dict, text: str) -> dict:
    return {**call, "content": text}


def test_texts_hold_every_assistant_text_in_order_the_same_live_and_replayed():
    spec = load_task(MULTI_TURN)
    say = next(step.say for step in spec.solution if hasattr(step, "say"))
    session = EpisodeSession(spec)
    session.apply(_narrated(_call(spec.tools[0], {}), "Let me look first."))
    session.apply(_call(spec.tools[0], {}, "c2"))  # no text: no entry
    session.apply({"role": "assistant", "content": say})
    session.apply({"role": "assistant", "content": "All set."})
    trajectory, evidence = session.finish()
    assert evidence.texts == ("Let me look first.", say, "All set.") and evidence.says == (say,)
    replayed = replay(spec, trajectory)
    assert replayed.texts == evidence.texts and replayed.evidence_hash == evidence.evidence_hash


def test_text_that_came_with_tool_calls_changes_the_evidence_hash_and_nothing_else_does():
    spec = load_task(MAIL)

    def run(*messages: dict):
        session = EpisodeSession(spec)
        for message in messages:
            session.apply(message)
        return session.finish()[1]

    quiet = run(_call("mail_search", {"query": "invoice"}), {"role": "assistant", "content": "Done."})
    narrated = run(
        _narrated(_call("mail_search", {"query": "invoice"}), "Searching."), {"role": "assistant", "content": "Done."}
    )
    assert quiet.texts == ("Done.",) and not quiet.narrated and narrated.texts == ("Searching.", "Done.")
    assert quiet.evidence_hash != narrated.evidence_hash and quiet.final_hash == narrated.final_hash


@pytest.mark.parametrize("max_turns", [None, 2])
def test_evidence_alone_is_finishs_evidence_and_a_runs_trajectory_is_run_episodes(max_turns):
    """`evidence()` skips the trajectory model, `play` validates it only when read: same results as `finish()`,
    on an episode that ended on its answer and on one out of turns (graded by replay)."""
    from coworkenv.episode.runner import played
    from coworkenv.grading.play import play

    spec = load_task(MULTI_TURN)
    session = played(spec, make_policy("oracle", spec), max_turns=max_turns)
    evidence = session.evidence()
    trajectory, finished = session.finish()
    assert evidence.evidence_hash == finished.evidence_hash and evidence.answer == finished.answer
    run = play(spec)
    assert "trajectory" not in run.__dict__  # not built until read
    assert run.trajectory == run_episode(spec, make_policy("oracle", spec))[0] and run.trajectory is run.trajectory
    if max_turns is None:
        assert trajectory == run.trajectory and run.grade.score == 1.0


@pytest.mark.parametrize("arguments", ['{"query": "inv\\ud800"}', {"query": "inv\ud800"}])
def test_a_lone_surrogate_from_an_endpoint_is_a_400_call_and_the_trajectory_stays_writable(arguments):
    # Regression (fixed): an endpoint's `\ud800` escape became a real lone surrogate, in the parsed call's arguments
    # (written back without escapes) and in the audit log, so neither the trajectory nor the evidence could be written.
    from coworkenv.agents.parsing import native_calls

    spec = load_task(MAIL)
    session = EpisodeSession(spec)
    calls = native_calls([{"id": "x", "type": "function", "function": {"name": "mail_search", "arguments": arguments}}])
    session.apply({"role": "assistant", "content": None, "tool_calls": calls})
    assert session.trace()[0]["calls"][0]["code"] == 400
    session.apply({"role": "assistant", "content": "Done."})
    trajectory, evidence = session.finish()
    json.dumps([trajectory.to_dict(), session.trace()], ensure_ascii=False).encode("utf-8")
    assert replay(spec, trajectory).evidence_hash == evidence.evidence_hash
