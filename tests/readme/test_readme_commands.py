"""The README's commands, run as written, in the README's order, in a fresh copy of the repository (what git tracks,
nothing built or downloaded but the `.venv` that `make` sets up), with their output piped to a file as in a log: every
`bash` block line by line in one shell per block (so `eval "$(coworkenv airflow-env)"` carries over to the lines
after it), every `python` block through the project's interpreter. Only the lines of `NOT_RUN` are left out, each for
its reason. Every command must exit 0 and print no traceback; a long one must print progress lines although its
output is not a terminal."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("readme")]

NOT_RUN = {
    "make test": "this is the test suite itself",
    "make airflow-standalone": "a server that runs until it is stopped: tests/dags/test_browser_ui.py starts it and walks the UI as the README says",
}
"""Lines (by their start) that are not run, with the reason. The endpoint line runs against a local OpenAI-compatible
server on port 8000 (tests/support/instant_endpoint.py) when that port is free."""
ENDPOINT_LINE = "--llm-base-url http://127.0.0.1:8000/v1"
SECRET = "sk-readme-walk-key-0123456789"


def blocks(text: str) -> list[tuple[str, list[str]]]:
    """(language, lines) of every fenced `bash` and `python` block, in order."""
    found = re.findall(r"^```(bash|python)\n(.*?)^```", text, flags=re.S | re.M)
    return [(lang, [line for line in body.splitlines() if line.strip()]) for lang, body in found]


def test_the_readme_has_the_blocks_this_walk_expects():
    found = blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert found[0] == ("bash", [line for line in found[0][1] if line.startswith("make ")]) and found[0][1][
        0
    ].startswith("make demo")
    lines = [line for _, block in found for line in block]
    assert sum(line.startswith(tuple(NOT_RUN)) for line in lines) == len(
        NOT_RUN
    )  # each reason still names a README line
    assert sum(ENDPOINT_LINE in line for line in lines) == 1
    for line in lines:  # placeholders a user would have to replace are not "as written"
        assert not re.search(r"<[a-z][^>]*>|path/to|my_tasks|my-model\.gguf", line), line


def fresh_copy(dest: Path) -> Path:
    """The working tree as a clone has it (tracked and new files that git does not ignore, with their times, so that
    make finds its `.venv` up to date), with a `.venv` of its own (`copy_venv`). A `.venv` here older than what it was
    made from would make the copy's `make demo` reinstall everything: refused instead."""
    stamp = ROOT / ".venv" / ".installed"
    newer = [
        f
        for f in ("pyproject.toml", "requirements.lock")
        if not stamp.exists() or (ROOT / f).stat().st_mtime > stamp.stat().st_mtime
    ]
    assert not newer, f"{', '.join(newer)} changed after .venv was set up: run `make setup` (make test does) first"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name, follow_symlinks=False)
    copy_venv(ROOT / ".venv", dest)
    return dest


def copy_venv(venv: Path, dest: Path) -> None:
    """`dest/.venv` as `make setup` would make it in the copy, without installing the lock again (minutes): its own
    interpreter, the copy's package on its path (what the editable install does), this `.venv`'s third-party packages
    after it (a plain path line, so that this `.venv`'s own .pth files, its editable install of this checkout among them,
    are not read), and every script of `venv/bin` pointed at the copy's interpreter. Sharing the checkout's `.venv` as
    it is would run this checkout's code, with its data root and Airflow home, not the copy's."""
    target = dest / ".venv"
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(target)], check=True)  # type: ignore[attr-defined]
    lib = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
    (target / lib / "coworkenv.pth").write_text(f"{dest}\n")
    (target / lib / "shared.pth").write_text(f"{venv / lib}\n")
    for script in (venv / "bin").iterdir():
        head, _, rest = (
            script.read_bytes().partition(b"\n") if script.is_file() and not script.is_symlink() else (b"", b"", b"")
        )
        if head.startswith(f"#!{venv}/bin/python".encode()) and not (target / "bin" / script.name).exists():
            (target / "bin" / script.name).write_bytes(f"#!{target}/bin/python\n".encode() + rest)
            (target / "bin" / script.name).chmod(0o755)
    shutil.copy2(venv / ".installed", target / ".installed")


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def script(lang: str, lines: list[str], endpoint: bool) -> str:
    """One block as a bash script that runs each line, marks where each starts and stops at the first that fails."""
    if lang == "python":
        return ".venv/bin/python - <<'PYTHON'\n" + "\n".join(lines) + "\nPYTHON\n"
    out = []
    for i, line in enumerate(lines):
        skip = next((why for start, why in NOT_RUN.items() if line.startswith(start)), None)
        if ENDPOINT_LINE in line and not endpoint:
            skip = "port 8000 is taken here"
        out.append(f"echo {shlex.quote(f'::: {i}: {line[:60]}')} >&2")
        out.append(
            f": not run: {skip}"
            if skip
            else f'{line}\nrc=$?; [ $rc -eq 0 ] || {{ echo "::: failed ($rc): {i}" >&2; exit $rc; }}'
        )
    return "\n".join(out) + "\n"


def walk(base: Path) -> tuple[Path, str]:
    """The whole README walked once in a copy under `base`: (the copy, its log)."""
    from tests.support.instant_endpoint import instant_endpoint

    work = fresh_copy(base / "coworkenv")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("COWORKENV_", "AIRFLOW", "HF_", "TRANSFORMERS_", "PYTEST", "COLUMNS"))
    }
    env["OPENAI_API_KEY"] = SECRET
    log = work / "walk.log"
    endpoint = _port_free(8000)
    with instant_endpoint(port=8000) if endpoint else _nothing():
        for n, (lang, lines) in enumerate(blocks((work / "README.md").read_text(encoding="utf-8"))):
            with log.open("a") as out:
                out.write(f"\n===== block {n} ({lang})\n")
                out.flush()
                proc = subprocess.run(
                    ["bash", "-c", script(lang, lines, endpoint)],
                    cwd=work,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    timeout=3600,
                    check=False,
                )
            text = log.read_text(encoding="utf-8", errors="replace")
            assert proc.returncode == 0, f"README block {n} failed:\n{text[-6000:]}"
    return work, log.read_text(encoding="utf-8", errors="replace")


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        return None


@pytest.fixture
def checkout_folder() -> Iterator[Path]:
    """Where the copy goes: a folder of its own in the system's temporary folder, readable by the sandbox's user as a
    checkout must be (README). Not under pytest's base folder: any pytest process (one a test starts included) makes
    `pytest-of-<user>` private again, and the sandbox's workers could then no longer import the copy's package."""
    base = Path(tempfile.mkdtemp(prefix="coworkenv-readme-"))
    base.chmod(0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def test_every_readme_command_runs_as_written_from_a_fresh_copy(checkout_folder):
    """One test for the whole walk (it takes minutes): a module-scoped fixture shared by several tests would be walked
    once per xdist worker that runs one of them, since pytest-xdist's `loadgroup` does not keep a group on one worker
    under pytest 9.2 (pytest-dev/pytest-xdist#1386)."""
    work, text = walk(checkout_folder)
    assert "Traceback (most recent call last)" not in text
    assert SECRET not in text
    # what the walk made is where the README says
    for made in (
        "out/oracle.json",
        "out/claw.jsonl",
        "out/hf/dataset_dict.json",
        "out/tiny/profile.json",
        "out/compare",
        "models/tiny-sft",
        "models/tiny-gdpo",
        "models/tiny-ddp",
        "models/tiny-ddp-2",
        "models/tiny-dpo",
        "out/pairs.parquet",
        "data/releases/LATEST",
        ".airflow/logs/demo.log",
    ):
        assert (work / made).exists(), made
    assert "current version" in text or "kept" in text  # the promotion's decision is printed
    long_work_prints_progress_lines(text)
    the_export_loads_as_the_readme_says(work)


def long_work_prints_progress_lines(text: str) -> None:
    """Piped output is not silent: the demo passes the nightly DAG's progress on, and the commands print theirs (once:
    under `accelerate launch` only the main process reports)."""
    demo = text.split("===== block 1")[0]
    passed_on = re.findall(r"^  ([\w ]+): \d+/\d+ \(\d+%\), .*(?:ETA|done in)", demo, re.M)
    assert {"baseline trials", "rollout trials", "training sft", "evaluation trials"} <= set(passed_on), demo[-3000:]
    assert re.search(r"^training: \d+/100 \(\d+%\), .*done in", text, re.M)
    assert re.search(r"^playing: \d+/\d+ \(\d+%\), .*done in", text, re.M)
    idle = re.findall(r"^ *[\w ]+: 0/\d+ \(0%\), done in.*", text, re.M)  # a second process's bar that never moved
    assert not idle, idle


def the_export_loads_as_the_readme_says(work: Path) -> None:
    import datasets

    tables = datasets.load_from_disk(str(work / "out" / "hf"))
    assert tables["sft"].num_rows > 0 and "messages" in tables["sft"].column_names
