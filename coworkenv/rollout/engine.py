"""The rollout engine (docs/design/agents-and-rollouts.md, "Rollouts"): N tasks × k trials of one agent, each trial a record
appended to a resumable trials file as it finishes.

How the agent is driven is its mode: `local` agents (plain policies) run one trial per job in a pool of sandboxed
workers (the `trial` job; runtime `none`: in this process, or a process pool of `workers`); `batch` agents step up
to `batch_size` episodes in lock-step, one `reply_batch` call per tick; `async` agents run one asyncio task per
episode, at most `concurrency` at once, awaiting `areply`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from coworkenv.agents.base import AGENTS, Agent, Reply, Request, load_agent
from coworkenv.episode.session import BadMessage, Clock, EpisodeSession
from coworkenv.errors import CoworkEnvError
from coworkenv.rollout import local
from coworkenv.rollout.local import run_local_trial, trial_from_payload, trial_payload
from coworkenv.rollout.trial_record import TrialRecord, error_text, failed_record, session_record, trial_seed
from coworkenv.rollout.trials_file import TrialStore
from coworkenv.sandbox.choices import IN_PROCESS, RUNTIME_CHOICES, either
from coworkenv.spec.task import TaskSpec

DEFAULT_EPISODE_WALL_S = 600.0
"""Seconds per episode (`episode_wall_s`). Sized for the slowest agents it is meant for, local models on a CPU: a
135M-parameter model on two cores makes about 20 tokens/s per sequence, so a reply of up to 256 new tokens takes about
13 s, plus a few seconds of prompt; ten turns come to about 200 s of the episode's own time. 600 s leaves three times
that for a slower or busier machine, and still ends a runaway episode. For `batch` agents the limit counts the
episode's own time only (see `run_trials`), so the batch size does not eat into it."""
SANDBOX_GRACE_S = 30.0
"""A sandboxed trial's budget is its episode's wall-clock limit plus this (worker start, grading, the record)."""
TRIAL_OUTPUT_BYTES = 32_000_000
"""The largest trial record a sandboxed worker may send back; a larger one fails the trial (`sandbox_output`)."""
DEFAULT_BATCH_SIZE = 48
DEFAULT_CONCURRENCY = 64

Progress = Callable[[int], None]
UserFactory = Callable[[TaskSpec], Any]


@dataclass(frozen=True, slots=True)
class Trial:
    spec: TaskSpec
    trial: int
    seed: int

    @property
    def key(self) -> tuple[str, int]:
        return self.spec.id, self.trial


@dataclass(frozen=True)
class Settings:
    agent: Agent
    agent_spec: str
    max_turns: int | None
    wall_s: float
    user: UserFactory | None


def run_trials(
    specs: Iterable[TaskSpec],
    agent: str | Agent,
    *,
    trials: int = 1,
    workers: int = 2,
    store: str | os.PathLike[str] | None = None,
    runtime: str = "auto",
    max_turns: int | None = None,
    episode_wall_s: float = DEFAULT_EPISODE_WALL_S,
    user: str | UserFactory = "scripted",
    progress: Progress | None = None,
    seed: int = 0,
    batch_size: int | None = None,
    concurrency: int | None = None,
) -> list[TrialRecord]:
    """Every (task, trial) of `specs` × `range(trials)` played by `agent` (a spec string or a loaded agent); the
    records in task order, then trial order.

    `store`: the trials file (None: none); trials it already holds are not run again. `runtime`: the sandbox of
    `local` agents (`auto`, `bwrap`, `rlimit`; `none` runs them unsandboxed, trusted specs only). `max_turns`:
    assistant turns per episode (default: the task's `turn_budget`). `episode_wall_s`: seconds per episode; an episode
    past it fails (`wall_timeout`; in the sandbox, one past it plus `SANDBOX_GRACE_S` is stopped: `sandbox_timeout`).
    `local` and `async` episodes count wall-clock time from their start (an async one starts once one of the `concurrency`
    slots is free); `batch` episodes count their own time (`EpisodeSession`'s `own` clock): the `latency_s` the agent
    reports for each of their replies plus their own tool calls and simulated-user replies, not the time they wait
    while the rest of the batch is generated and applied. `user`: `scripted` (the spec's rules) or a factory spec →
    simulated user (in-process modes only). `progress(n_done)`: called with the number of finished trials (resumed
    ones included) as each finishes. `seed`: the run's seed; each trial's is `trial_seed(seed, task_id, trial)`.
    `batch_size` / `concurrency`: episodes in flight for `batch` / `async` agents (default: the agent's own
    `batch_size` / `concurrency`, else 48 / 64).
    """
    specs = list(specs)
    ids = [s.id for s in specs]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise CoworkEnvError(f"task id {dup!r} appears twice in the suite")
    if trials < 1 or workers < 1:
        raise CoworkEnvError("trials and workers must be at least 1")
    if not episode_wall_s > 0:
        raise CoworkEnvError("episode_wall_s must be positive")
    if runtime not in RUNTIME_CHOICES:
        raise CoworkEnvError(f"unknown runtime {runtime!r}; choose {either(RUNTIME_CHOICES)}")
    loaded = load_agent(agent) if isinstance(agent, str) else agent
    settings = Settings(
        loaded, agent if isinstance(agent, str) else loaded.label, max_turns, float(episode_wall_s), _user_factory(user)
    )
    todo = [Trial(s, t, trial_seed(seed, s.id, t)) for s in specs for t in range(trials)]
    with TrialStore(store) if store is not None else _NoStore() as kept:
        done = _resume(kept.records, loaded, todo)
        counter = _Counter(progress, sum(1 for t in todo if t.key in done))

        def keep(record: TrialRecord) -> None:
            kept.append(record)
            done[record.key] = record
            counter.step()

        pending = [t for t in todo if t.key not in done]
        if pending:
            if loaded.mode == "local":
                _run_local(settings, pending, keep, workers=workers, runtime=runtime)
            elif loaded.mode == "batch":
                _run_batch(
                    settings, pending, keep, batch_size or getattr(loaded, "batch_size", None) or DEFAULT_BATCH_SIZE
                )
            elif loaded.mode == "async":
                size = concurrency or getattr(loaded, "concurrency", None) or DEFAULT_CONCURRENCY
                asyncio.run(_run_async(settings, pending, keep, size))
            else:
                raise CoworkEnvError(f"agent {loaded.label!r} has an unknown mode {loaded.mode!r}")
    return [done[t.key] for t in todo]


class _NoStore:
    records: list[TrialRecord] = []

    def __enter__(self) -> _NoStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        pass

    def append(self, record: TrialRecord) -> None:
        pass


class _Counter:
    def __init__(self, progress: Progress | None, start: int):
        self.progress, self.n = progress, start
        if progress is not None and start:
            progress(start)

    def step(self) -> None:
        self.n += 1
        if self.progress is not None:
            self.progress(self.n)


def _resume(records: list[TrialRecord], agent: Agent, todo: list[Trial]) -> dict[tuple[str, int], TrialRecord]:
    """The stored records of this run's trials; a file of another agent's trials, or of another seed, is refused."""
    other = next((r for r in records if r.agent != agent.label), None)
    if other is not None:
        raise CoworkEnvError(
            f"the trials file holds trials of agent {other.agent!r}, not {agent.label!r}: use one file per agent"
        )
    stored = {r.key: r for r in records}
    done = {}
    for t in todo:
        record = stored.get(t.key)
        if record is None:
            continue
        if record.seed != t.seed:
            raise CoworkEnvError(
                f"the trials file was made with another seed (trial {t.spec.id}/{t.trial}): use the same seed or another file"
            )
        done[t.key] = record
    return done


def _user_factory(user: str | UserFactory | None) -> UserFactory | None:
    if user is None or user == "scripted":
        return None
    if callable(user):
        return user
    raise CoworkEnvError(f"unknown simulated user {user!r}: 'scripted', or a factory that makes one per task")


# --------------------------------------------------------------------------------------------- local


def _agent_module(spec_text: str) -> str | None:
    """The module that registered the agent's kind, when it is not one a worker imports anyway."""
    kind = spec_text.partition(":")[0]
    if kind not in AGENTS:
        raise CoworkEnvError(
            f"agent {spec_text!r}: a local agent runs in worker processes, made from its spec string; "
            "register its kind in AGENTS, or run it with runtime none and one worker"
        )
    module = getattr(AGENTS.get(kind), "__module__", None)
    return None if module is None or module.startswith("coworkenv.") else module


def _run_local(
    s: Settings, pending: list[Trial], keep: Callable[[TrialRecord], None], *, workers: int, runtime: str
) -> None:
    if runtime == IN_PROCESS and (workers == 1 or len(pending) == 1 or s.user is not None):
        for t in pending:
            keep(
                run_local_trial(
                    t.spec, s.agent, trial=t.trial, seed=t.seed, max_turns=s.max_turns, wall_s=s.wall_s, user=s.user
                )
            )
        return
    if s.user is not None:
        raise CoworkEnvError(
            "a simulated user other than the scripted one needs an in-process run (runtime none, or a batch or async agent)"
        )
    module = None if runtime == IN_PROCESS else _agent_module(s.agent_spec)
    payloads = [
        trial_payload(
            t.spec.to_json(),
            s.agent_spec,
            agent_module=module,
            trial=t.trial,
            seed=t.seed,
            max_turns=s.max_turns,
            wall_s=s.wall_s,
        )
        for t in pending
    ]

    def record_of(t: Trial, output: Any, error: str | None) -> TrialRecord:
        if error is None:
            try:
                record = TrialRecord.model_validate(output)
                if record.key == t.key:
                    return record
                error = f"bad_output: the worker answered for trial {record.task_id}/{record.trial}"
            except ValueError as exc:
                error = error_text("bad_output", str(exc))
        return failed_record(t.spec, agent=s.agent.label, model=s.agent.model, trial=t.trial, seed=t.seed, error=error)

    if runtime == IN_PROCESS:
        local.AGENTS_MADE[(s.agent_spec, "")] = s.agent  # the forked workers use this very agent
        _process_pool(pending, payloads, workers, lambda i, out, err: keep(record_of(pending[i], out, err)))
        return
    from coworkenv.judge.sandbox_jobs import run_jobs_judged
    from coworkenv.rollout import jobs  # noqa: F401  (registers the `trial` job)
    from coworkenv.sandbox.limits import Limits
    from coworkenv.validate.judging import spec_pairs

    budget = s.wall_s + SANDBOX_GRACE_S
    limits = Limits(wall_s=budget, cpu_s=budget, output_bytes=TRIAL_OUTPUT_BYTES)

    def on_result(r: Any) -> None:
        keep(
            record_of(
                pending[r.index], r.output, None if r.ok else error_text(r.error_code or "sandbox_error", r.error)
            )
        )

    # local agents are deterministic per trial: one that asks about a pair the spec does not foresee runs again with it
    pairs = {t.spec.id: spec_pairs(t.spec.to_json()) for t in pending}
    run_jobs_judged(
        "trial",
        payloads,
        [pairs[t.spec.id] for t in pending],
        workers=min(workers, len(payloads)),
        runtime=runtime,
        limits=limits,
        budget_s=budget,
        on_result=on_result,
    )


def _process_pool(
    pending: list[Trial], payloads: list[str], workers: int, done: Callable[[int, Any, str | None], None]
) -> None:
    """Runtime `none` with several workers: forked processes, which inherit the agents registered here (a test's
    own, say) and, unlike spawned ones, do not re-run the caller's main script. ProcessPoolExecutor forks them all
    before it starts its own thread."""
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(workers, len(payloads)), mp_context=context) as pool:
        futures = {pool.submit(trial_from_payload, p): i for i, p in enumerate(payloads)}
        try:
            for future in concurrent.futures.as_completed(futures):
                try:
                    output, error = future.result(), None
                except concurrent.futures.process.BrokenProcessPool as exc:
                    raise CoworkEnvError(
                        f"the process pool died ({exc}); finished trials are kept: run again to continue"
                    ) from None
                except Exception as exc:  # noqa: BLE001 - e.g. a spec the worker could not read: this trial fails
                    output, error = None, error_text("job_error", exc)
                done(futures[future], output, error)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # what has not started is not run
            raise


# --------------------------------------------------------------------------------------------- batch and async


def _session(s: Settings, t: Trial, clock: Clock = "wall") -> EpisodeSession:
    return EpisodeSession(
        t.spec, max_turns=s.max_turns, wall_s=s.wall_s, user=None if s.user is None else s.user(t.spec), clock=clock
    )


def _request(session: EpisodeSession, t: Trial) -> Request:
    return Request(messages=list(session.messages), tools=session.tools, seed=t.seed)


def _apply(session: EpisodeSession, reply: Any) -> str | None:
    """Apply one reply; the reason the trial fails, if it does."""
    if not isinstance(reply, Reply):
        return f"bad_output: the agent returned {type(reply).__name__}, not a Reply"
    if reply.error:
        return error_text("reply_error", reply.error)
    if reply.full:
        session.stop("context")
        return None
    try:
        session.apply(
            reply.message,
            latency_s=reply.latency_s,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            format_error=reply.format_error,
        )
    except BadMessage as exc:
        return error_text("bad_output", str(exc))
    return None


def _finished(s: Settings, t: Trial, session: EpisodeSession, error: str | None) -> TrialRecord:
    return session_record(session, agent=s.agent.label, model=s.agent.model, trial=t.trial, seed=t.seed, error=error)


def _run_batch(s: Settings, pending: list[Trial], keep: Callable[[TrialRecord], None], batch_size: int) -> None:
    """Lock-step: each tick, one `reply_batch` with a request per open episode; finished ones are refilled."""
    queue = deque(pending)
    open_: list[tuple[Trial, EpisodeSession]] = []
    while queue or open_:
        while queue and len(open_) < batch_size:
            t = queue.popleft()
            open_.append(
                (t, _session(s, t, clock="own"))
            )  # each tick waits for the whole batch: not the episode's time
        errors: list[str | None]
        try:
            replies = s.agent.reply_batch([_request(session, t) for t, session in open_])  # type: ignore[attr-defined]
            if not isinstance(replies, list) or len(replies) != len(open_):
                got = len(replies) if isinstance(replies, list) else type(replies).__name__
                errors = [f"bad_output: reply_batch answered {got} for {len(open_)} requests"] * len(open_)
            else:
                errors = [_apply(session, reply) for (_, session), reply in zip(open_, replies, strict=True)]
        except Exception as exc:  # noqa: BLE001 - the batch failed: every episode in it fails, the run goes on
            errors = [error_text("agent_error", exc)] * len(open_)
        still = []
        for (t, session), error in zip(open_, errors, strict=True):
            if error is not None or session.done:
                keep(_finished(s, t, session, error))
            else:
                still.append((t, session))
        open_ = still


async def _run_async(s: Settings, pending: list[Trial], keep: Callable[[TrialRecord], None], concurrency: int) -> None:
    slots = asyncio.Semaphore(concurrency)

    async def one(t: Trial) -> None:
        async with slots:  # the episode's clock starts here: waiting for a slot is not its time
            session, error = _session(s, t), None
            while not session.done and error is None:
                remaining = s.wall_s - session.used()
                try:
                    if remaining <= 0:
                        raise TimeoutError
                    async with asyncio.timeout(
                        remaining
                    ):  # not wait_for, which on 3.11 wraps each turn in a task of its own
                        reply = await s.agent.areply(_request(session, t))  # type: ignore[attr-defined]
                except TimeoutError:
                    session.stop("wall")
                    break
                except Exception as exc:  # noqa: BLE001 - the agent's failure fails this trial only
                    error = error_text("agent_error", exc)
                    break
                error = _apply(session, reply)
            keep(_finished(s, t, session, error))

    try:
        await asyncio.gather(*(one(t) for t in pending))
    finally:
        aclose = getattr(s.agent, "aclose", None)
        if aclose is not None:  # the agent's connections belong to this loop, which ends here
            await aclose()
