"""Simulated users: the scripted default, the LLM persona against a real endpoint process (facts revealed only in the
spec's order; leaks, refusals and a dead endpoint fall back to the scripted reply and are recorded as simulator
errors), and grading that stays independent of the simulator."""

from __future__ import annotations

import json

import pytest

from coworkenv.agents import USERS, make_user
from coworkenv.agents.persona import NO_REPLY, PersonaUser, fact_in
from coworkenv.agents.scripted import ScriptedPolicy
from coworkenv.episode import Episode, replay
from coworkenv.episode.runner import initial_messages, run_episode
from coworkenv.episode.trajectory import Trajectory
from coworkenv.episode.user import ScriptedUser, UserSimulator, scripted_reply
from coworkenv.errors import CoworkEnvError
from coworkenv.grading.score import grade
from coworkenv.llm import LLMConfig
from coworkenv.spec.io import load_task
from coworkenv.workspace.tools import tool_schemas
from tests.support import EXAMPLES
from tests.support.instant_endpoint import instant_endpoint

SPEC = load_task(EXAMPLES / "08_multi_turn_vendor_demo.json")  # facts: slot, room, guests; max_rounds 3
SLOT, ROOM, GUESTS = SPEC.user.facts["slot"], SPEC.user.facts["room"], SPEC.user.facts["guests"]


def config(endpoint, **options) -> LLMConfig:
    fields = {
        "base_url": endpoint.base_url,
        "model": "persona",
        "max_retries": 0,
        "backoff_s": 0.0,
        "timeout_s": 5,
        "max_tokens": 256,
    }
    return LLMConfig(**{**fields, **options})


def persona(endpoint, **options) -> PersonaUser:
    return make_user("llm", SPEC, llm=config(endpoint, **options), seed=5)


def test_the_persona_is_told_the_facts_one_at_a_time_in_the_spec_order():
    with instant_endpoint(say="{facts}") as endpoint:  # it answers with every fact it was told
        user = persona(endpoint)
        said = [user.reply("Could you tell me more?", rounds) for rounds in range(4)]
        seeds = endpoint.stats()["seeds"]
    first, second, third, after_the_last_round = said
    assert first == SLOT and second == f"{SLOT}; {ROOM}" and third == f"{SLOT}; {ROOM}; {json.dumps(GUESTS)}"
    assert after_the_last_round is None  # max_rounds
    assert user.errors == [] and user.cursor == 3 and seeds == [5, 6, 7]
    assert [asked for asked, _ in user.history] == ["Could you tell me more?"] * 3


def test_a_reply_that_gives_away_a_later_fact_falls_back_to_the_scripted_reply():
    with instant_endpoint(say="Book Room Atlas.") as endpoint:
        user = persona(endpoint)
        answer = user.reply("What time should the demo be?", 0)
        assert answer == scripted_reply(SPEC.user, "What time should the demo be?", 0) is not None
        assert user.errors == ["llm user, round 1: it gave away room before slot; the scripted reply was used"]
        # the fact was the assistant's own guess: saying it back reveals nothing
        assert user.reply("Should it be in Room Atlas, and when?", 1) == "Book Room Atlas." and len(user.errors) == 1


def test_once_revealed_in_order_a_fact_may_be_repeated():
    with instant_endpoint(say="{facts}") as endpoint:
        user = persona(endpoint)
        user.reply("When?", 0)
        user.reply("Where?", 1)
    assert user.cursor == 2 and user.errors == []


@pytest.mark.parametrize(
    ("say", "reason"), [("I'm sorry, I can't help with that.", "a refusal"), ("   ", "an empty reply")]
)
def test_refusals_and_empty_replies_fall_back(say: str, reason: str):
    with instant_endpoint(say=say) as endpoint:
        user = persona(endpoint)
        answer = user.reply("Who should I invite?", 0)
    assert answer == scripted_reply(SPEC.user, "Who should I invite?", 0) is not None
    assert len(user.errors) == 1 and reason in user.errors[0]


def test_a_dead_endpoint_falls_back_and_is_recorded_apart_from_the_agent():
    with instant_endpoint() as endpoint:
        llm = config(endpoint)
    user = make_user("llm", SPEC, llm=llm)  # the endpoint is gone now
    episode = Episode(SPEC, user=user)
    assert episode.message("What date and time?") == scripted_reply(SPEC.user, "What date and time?", 0)
    assert (
        episode.user_rounds == 1
        and len(user.errors) == 1
        and user.errors[0].startswith("llm user, round 1: http_error")
    )


def test_the_no_reply_answer_ends_the_episode():
    with instant_endpoint(say=NO_REPLY) as endpoint:
        episode = Episode(SPEC, user=persona(endpoint))
        assert episode.message("All booked and sent.") is None
    assert episode.done and episode.evidence.answer == "All booked and sent." and episode.user.errors == []


def test_the_scripted_user_is_the_default_and_unchanged():
    episode = Episode(SPEC)
    assert isinstance(episode.user, ScriptedUser) and isinstance(episode.user, UserSimulator)
    assert isinstance(make_user("scripted", SPEC), ScriptedUser)
    trajectory, evidence = run_episode(SPEC, ScriptedPolicy(SPEC))
    assert grade(SPEC, evidence).score == 1.0 and evidence.user_rounds == 2 and episode.user.errors == []


def test_grading_replays_with_the_scripted_user_whatever_the_live_user_said():
    with instant_endpoint(say="{facts}") as endpoint:
        episode = Episode(SPEC, user=persona(endpoint))
        policy, messages, tools = ScriptedPolicy(SPEC), initial_messages(SPEC), tool_schemas(SPEC.tools)
        while not episode.done:  # the oracle's conversation, answered by the LLM user
            message = policy.act(messages, tools)
            messages.append(message)
            for call in message.get("tool_calls") or ():
                result = episode.step(call["function"]["name"], call["function"]["arguments"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)})
            if not message.get("tool_calls"):
                reply = episode.message(message["content"])
                if reply is not None:
                    messages.append({"role": "user", "content": reply})
    live_answers = [m["content"] for m in messages if m["role"] == "user"][1:]
    # not the scripted rules' texts; this persona even answers the final report, until max_rounds
    assert (
        live_answers == [SLOT, f"{SLOT}; {ROOM}", f"{SLOT}; {ROOM}; {json.dumps(GUESTS)}"] and episode.user_rounds == 3
    )
    replayed = replay(SPEC, Trajectory.model_validate({"task_id": SPEC.id, "messages": messages}))
    assert replayed.user_rounds == 2  # counted by the scripted user
    graded, live = (grade(SPEC, e).model_dump(exclude={"evidence_hash"}) for e in (replayed, episode.evidence))
    assert graded == live and graded["score"] == 1.0


def test_the_users_registry():
    assert set(USERS.names()) >= {"scripted", "llm"}
    with pytest.raises(CoworkEnvError, match="needs an endpoint"):
        make_user("llm", SPEC)
    with pytest.raises(CoworkEnvError, match="did you mean 'llm'"):
        make_user("llmm", SPEC)


def test_fact_values_are_found_as_numbers_phrases_and_elements():
    assert fact_in(49200, "the fee is 49,200 EUR") and not fact_in(4920, "the fee is 49,200 EUR")
    assert fact_in(["a@x.test", "sam.reed@northwind.test"], "write to Sam.Reed@northwind.test")
    assert fact_in({"room": "Room Atlas"}, "in room atlas") and not fact_in("Atlas", "Atlassian")
    assert not fact_in("x", "x marks the spot") and not fact_in(True, "true") and not fact_in(None, "None")
