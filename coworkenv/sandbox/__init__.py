"""The sandbox layer: where untrusted task content (LLM-written specs, executable content) is evaluated.

It imports nothing of the library above it (only the standard library, pydantic, `coworkenv.errors` and
`coworkenv.registry`); the layers above bring their own jobs (see `jobs.py`). By concern:

- `choices`: the runtime names users choose from (`auto`, `bwrap`, `rlimit`, and `none`, meaning no sandbox);
- `limits`: `Limits`, `RunResult`, `SandboxError`;
- `boot`: the program every sandboxed Python starts with (rlimits, no_new_privs, seccomp, then the target);
- `seccomp`: the syscall filter; `identity`: the unprivileged uid per sandbox; `layout`: the Python the sandbox
  runs and its environment; `process`: a started sandbox, its pipes, scratch dirs;
- `runtime`: the `Runtime` interface; `rlimit` and `bwrap`: the two runtimes; `selection`: `get_runtime`;
- `jobs`: the job registry; `protocol`: the worker's JSON-lines protocol and error codes; `worker`: the long-lived
  worker (inline jobs), `forked`: its per-request children (untrusted code);
- `handle`: the pool's side of one worker; `pool`: `WorkerPool` and `run_jobs`.

Started as root, both runtimes run the sandboxed code as an unprivileged uid/gid of its own (see `identity.py`);
the rlimit fallback does NOT isolate the network nor hide world-readable files (see `rlimit.py` and the README).
"""
