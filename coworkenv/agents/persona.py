"""The LLM persona user (docs/design/agents-and-rollouts.md, "Agents"): a model plays the spec's `user.persona`
through an OpenAI-compatible endpoint (`coworkenv.llm`), and may reveal only `user.facts`, in the spec's own order.

It is told the persona and only the facts up to a cursor: those already revealed and the next one. A reply that
gives away a later fact (its value appears in the reply and not in the assistant's message), or no usable reply at
all (an endpoint error, a refusal, an empty text), is replaced by the scripted reply, and the reason is recorded in
`errors` (simulator errors, kept apart from the agent's). `max_rounds` bounds it as it bounds the scripted user.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from coworkenv.agents.users import USERS
from coworkenv.checks.text import PLAIN_NUMBER, number_find, phrase_find
from coworkenv.episode.user import scripted_reply
from coworkenv.errors import CoworkEnvError
from coworkenv.llm.client import ChatClient, LLMConfig, LLMError, looks_like_refusal
from coworkenv.spec.task import TaskSpec, UserSpec

NO_REPLY = "<<NO REPLY>>"
"""What the persona answers to a message that asks it nothing: the user does not reply, the message is the final answer."""
MIN_FACT_CHARS = 2
"""Shorter string facts are not looked for in replies (they would match ordinary words)."""

SYSTEM = """You play the user of a coworker assistant, in character. {persona}
The assistant works for you and may ask you for information. Answer its message in one or two short sentences.
You know only these facts; give one only when the assistant asks for it, and never invent other details:
{facts}
If the message asks you nothing (it reports finished work), answer exactly {no_reply}"""


def _scalars(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [item for v in value.values() for item in _scalars(v)]
    if isinstance(value, list | tuple):
        return [item for v in value for item in _scalars(v)]
    return [] if value is None or isinstance(value, bool) else [value]


def _scalar_in(value: Any, text: str) -> bool:
    rendered = " ".join(str(value).split())
    if isinstance(value, int | float) or PLAIN_NUMBER.match(rendered):
        try:
            number = float(value) if isinstance(value, int | float) else float(rendered.lstrip("$€£").replace(",", ""))
        except OverflowError:
            return rendered in text
        return number_find(number, text, 0.0) is not None
    return len(rendered) >= MIN_FACT_CHARS and phrase_find(rendered, text) is not None


def fact_in(value: Any, text: str) -> bool:
    """Whether a fact's value (any of its elements, for lists and objects) appears in `text`."""
    return any(_scalar_in(scalar, text) for scalar in _scalars(value))


def persona_messages(
    user: UserSpec, known: Sequence[tuple[str, Any]], history: Sequence[tuple[str, str]], text: str
) -> list[dict[str, str]]:
    """The persona's chat: its instructions with the facts it may use, the exchanges so far, the assistant's message."""
    facts = "\n".join(
        f"- {name}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
        for name, value in known
    )
    system = SYSTEM.format(persona=user.persona or "", facts=facts or "- (none)", no_reply=NO_REPLY)
    messages = [{"role": "system", "content": system}]
    for asked, answered in history:
        messages += [{"role": "user", "content": asked}, {"role": "assistant", "content": answered}]
    return [*messages, {"role": "user", "content": text}]


class PersonaUser:
    """One episode's LLM user. `reply` is synchronous (`Episode.message` calls it); one request per round."""

    def __init__(self, user: UserSpec | None, config: LLMConfig, *, seed: int = 0, client: ChatClient | None = None):
        self.user = user
        self.facts: list[tuple[str, Any]] = list(user.facts.items()) if user is not None else []
        self.cursor = 0
        """Facts revealed so far; the persona is told these and the next one."""
        self.seed = seed
        self.client = client or ChatClient(config)
        self.history: list[tuple[str, str]] = []
        self.errors: list[str] = []

    def reply(self, text: str, rounds_used: int) -> str | None:
        if self.user is None or rounds_used >= self.user.max_rounds:
            return None
        known = self.facts[: self.cursor + 1]
        try:
            answer = self.client.ask(
                persona_messages(self.user, known, self.history, text), seed=self.seed + rounds_used
            ).strip()
        except LLMError as exc:
            return self._fallback(text, rounds_used, f"{exc.code}: {exc.reason}")
        if NO_REPLY in answer:
            return None
        if not answer:
            return self._fallback(text, rounds_used, "an empty reply")
        if looks_like_refusal(answer):
            return self._fallback(text, rounds_used, f"a refusal: {answer[:120]}")
        leaked = [
            name for name, value in self.facts[self.cursor + 1 :] if fact_in(value, answer) and not fact_in(value, text)
        ]
        if leaked:
            return self._fallback(
                text, rounds_used, f"it gave away {', '.join(leaked)} before {self.facts[self.cursor][0]}"
            )
        self._advance(answer)
        self.history.append((text, answer))
        return answer

    def _advance(self, said: str) -> None:
        """Move the cursor past the last fact that `said` reveals."""
        for index in range(len(self.facts) - 1, self.cursor - 1, -1):
            if fact_in(self.facts[index][1], said):
                self.cursor = index + 1
                return

    def _fallback(self, text: str, rounds_used: int, reason: str) -> str | None:
        self.errors.append(f"llm user, round {rounds_used + 1}: {reason}; the scripted reply was used")
        answer = scripted_reply(self.user, text, rounds_used)
        if answer is not None:
            self._advance(answer)
            self.history.append((text, answer))
        return answer


def make_persona_user(spec: TaskSpec, *, llm: LLMConfig | None = None, seed: int = 0, **_: Any) -> PersonaUser:
    if llm is None:
        raise CoworkEnvError(
            "the llm user needs an endpoint: the run's LLM endpoint (base URL and model, or a connection)"
        )
    return PersonaUser(spec.user, llm, seed=seed)


USERS.add("llm", make_persona_user)
