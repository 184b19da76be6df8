"""Episode: reset(spec) → step(tool call) / message(text) → finish(answer) → Evidence."""

from __future__ import annotations

from functools import partial
from typing import Any

from coworkenv.episode.evidence import Evidence
from coworkenv.episode.prepared import prepared
from coworkenv.episode.user import ScriptedUser, UserSimulator
from coworkenv.spec.task import TaskSpec
from coworkenv.workspace.runtime import DEFAULT_MAX_WRITE_BYTES, Workspace

ACTIVE: Any = object()
"""An episode's default judge: whichever is active when it finishes."""


def _active_judge() -> Any:
    from coworkenv.judge.endpoint import active_judge  # the endpoint's client loads only where an episode is graded

    return active_judge()


class EpisodeFinished(RuntimeError):
    """A step after `finish`: a bug in the caller, not bad agent behaviour."""


class Episode:
    def __init__(
        self,
        spec: TaskSpec,
        *,
        max_write_bytes: int = DEFAULT_MAX_WRITE_BYTES,
        user: UserSimulator | None = None,
        judge: Any = ACTIVE,
    ):
        """`user` answers the assistant's messages in a live episode (default: the spec's scripted user); `judge`
        goes with the evidence to the checks that need one (default: the judge active when the episode finishes,
        `judge.endpoint.active_judge`; None: none)."""
        self.judge = judge
        self.spec = spec
        self._prepared = prepared(spec)
        self.user: UserSimulator = ScriptedUser(spec.user) if user is None else user
        # Sections are shared with the spec until a write copies one: most calls only read.
        self.workspace = Workspace(
            dict(self._prepared.initial),
            allowed=self._prepared.allowed,
            fault_rate=spec.faults.rate,
            fault_seed=spec.faults.seed,
            max_write_bytes=max_write_bytes,
            copy_section=self._prepared.copy_section,
        )
        self.says: list[str] = []
        self.texts: list[str] = []
        """Every assistant message's text so far, in order (`Evidence.texts`; the final answer joins at `finish`)."""
        self.user_rounds = 0
        self._evidence: Evidence | None = None

    @property
    def done(self) -> bool:
        return self._evidence is not None

    def step(self, name: str, arguments: str | dict[str, Any] | None) -> dict[str, Any]:
        """Run one tool call; the result (or error) is what the agent sees."""
        self._check_open()
        return self.workspace.call(name, arguments)

    def narrate(self, text: str) -> None:
        """The text that came with an assistant message's tool calls: read by checks with `scope: messages`, never
        seen by the user. Empty text is no message."""
        self._check_open()
        if text:
            self.texts.append(text)

    def message(self, text: str, *, may_end: bool = True) -> str | None:
        """An assistant message without tool calls. Returns the user's reply; None means no reply.

        With `may_end` (live episodes) an unanswered message ends the episode as the final answer; replay
        passes False for every message but the last, which it then gives to `finish`.
        """
        self._check_open()
        reply = self.user.reply(text, self.user_rounds)
        if reply is None and may_end:
            self.finish(text)
            return None
        self.says.append(text)
        self.texts.append(text)
        if reply is not None:
            self.user_rounds += 1
        return reply

    def finish(self, answer: str) -> Evidence:
        if self._evidence is None:
            final = self.workspace.state
            initial = self.spec.initial_state
            self._evidence = Evidence(
                task_id=self.spec.id,
                calls=tuple(self.workspace.audit),
                answer=answer or "",
                says=tuple(self.says),
                texts=(*self.texts, answer or ""),
                user_rounds=self.user_rounds,
                initial_state=initial,
                final_state=final,
                final_json=partial(self._prepared.state_json, final),
                # Read tools never mutate state, so only services a write touched can differ.
                written=tuple(sorted(self.workspace.written)),
                judge=self.judge if self.judge is not ACTIVE else _active_judge(),
            )
        return self._evidence

    @property
    def evidence(self) -> Evidence:
        if self._evidence is None:
            raise RuntimeError("the episode has not finished")
        return self._evidence

    def _check_open(self) -> None:
        if self._evidence is not None:
            raise EpisodeFinished(f"episode for task {self.spec.id!r} has finished")
