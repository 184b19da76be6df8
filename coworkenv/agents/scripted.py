"""The scripted agents `oracle` and `null`: one fresh scripted policy (`coworkenv.episode.scripted`) per episode."""

from __future__ import annotations

from coworkenv.agents.base import AGENTS
from coworkenv.episode.scripted import NullPolicy, ScriptedPolicy
from coworkenv.errors import CoworkEnvError
from coworkenv.spec.task import TaskSpec

SCRIPTS: dict[str, type[ScriptedPolicy] | type[NullPolicy]] = {"oracle": ScriptedPolicy, "null": NullPolicy}


class ScriptedAgent:
    """`oracle` and `null` as agents: one fresh scripted policy per episode, run anywhere (mode `local`)."""

    mode = "local"
    model = ""

    def __init__(self, kind: str, target: str | None = None):
        if target:
            raise CoworkEnvError(f"agent {kind!r} takes no target (got {kind}:{target})")
        self.kind = self.label = kind

    def policy(self, spec: TaskSpec, *, seed: int = 0) -> ScriptedPolicy | NullPolicy:
        return SCRIPTS[self.kind](spec)


for _kind in SCRIPTS:
    AGENTS.add(_kind, lambda target=None, _kind=_kind, **_: ScriptedAgent(_kind, target))
