"""The Python a sandbox runs (the base interpreter, the venv's site dirs, the `coworkenv` package and the boot
program) and the whole environment it starts with: nothing of ours is inherited, credentials least of all."""

from __future__ import annotations

import os
import site
import stat
import sys
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from coworkenv.sandbox import boot
from coworkenv.sandbox.limits import SandboxError


class PythonLayout(BaseModel):
    """Where the pieces of the sandbox's Python live on this machine (all mounted read-only by bwrap)."""

    model_config = ConfigDict(frozen=True)

    executable: Path  # the real base interpreter (not the venv symlink)
    base_prefix: Path
    venv_prefix: Path | None
    site_dirs: tuple[Path, ...]  # the venv's site-packages (processed for .pth files)
    package_dir: Path  # .../coworkenv
    boot_file: Path  # the boot program, run as a script
    extra_paths: tuple[Path, ...] = ()
    # packages outside the venv that its .pth files add (a venv layered on another's packages): without a bind,
    # bwrap's workers would see the .pth line but not the folder it names
    linked_dirs: tuple[Path, ...] = ()

    def read_only_roots(self) -> list[Path]:
        roots = [self.base_prefix, self.executable.parent]
        if self.venv_prefix is not None:
            roots.append(self.venv_prefix)
        roots += [*self.site_dirs, *self.linked_dirs, self.package_dir, self.boot_file]
        return roots


def linked_package_dirs(site_dirs: tuple[Path, ...]) -> tuple[Path, ...]:
    """The folders that the .pth files of `site_dirs` put on the path and that hold installed distributions. A folder
    without a `.dist-info` (a checkout behind an editable install) is left out: binding it would show the sandbox the
    whole checkout, data included, where only the package is meant to be seen."""
    inside = [s.resolve() for s in site_dirs]
    found: list[Path] = []
    for site_dir in site_dirs:
        for pth in sorted(site_dir.glob("*.pth")):
            try:
                lines = pth.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue  # site.addpackage skips an unreadable file too
            for line in lines:
                if not line.strip() or line.startswith(("#", "import ", "import\t")):
                    continue  # what site.addpackage skips or runs
                folder = (site_dir / line.rstrip()).resolve()
                if (
                    folder.is_dir()
                    and folder not in found
                    and not any(folder.is_relative_to(s) for s in inside)
                    and any(folder.glob("*.dist-info"))
                ):
                    found.append(folder)
    return tuple(found)


def current_layout() -> PythonLayout:
    """The layout of the Python running this process."""
    base_prefix = Path(os.path.realpath(sys.base_prefix))
    candidates = [getattr(sys, "_base_executable", "") or "", sys.executable]
    executable = next((Path(os.path.realpath(c)) for c in candidates if c and os.path.exists(c)), None)
    if executable is None:
        raise SandboxError("cannot find the Python interpreter to run in the sandbox")
    venv = Path(sys.prefix).resolve() if sys.prefix != sys.base_prefix else None
    site_dirs = tuple(
        Path(p)
        for p in site.getsitepackages()
        if os.path.isdir(p) and venv is not None and Path(p).resolve().is_relative_to(venv)
    )
    package_dir = Path(__file__).resolve().parents[1]  # coworkenv/, this being coworkenv/sandbox/interpreter.py
    return PythonLayout(
        executable=executable,
        base_prefix=base_prefix,
        venv_prefix=venv,
        site_dirs=site_dirs,
        package_dir=package_dir,
        boot_file=Path(boot.__file__).resolve(),
        extra_paths=(package_dir.parent,),
        linked_dirs=linked_package_dirs(site_dirs),
    )


def world_reachable(path: Path) -> bool:
    """Whether a user with no relation to the owners can reach `path` (x on every ancestor, r+x on it)."""
    try:
        parts = [Path("/"), *[Path(*path.parts[: i + 1]) for i in range(1, len(path.parts))]]
        for p in parts[:-1]:
            if not os.stat(p).st_mode & stat.S_IXOTH:
                return False
        mode = os.stat(path).st_mode
        return bool(mode & stat.S_IROTH) and (not stat.S_ISDIR(mode) or bool(mode & stat.S_IXOTH))
    except OSError:
        return False


def sandbox_env(scratch: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a sandboxed process: nothing of ours (no credentials) is inherited."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        # one thread per numeric library: threads count against RLIMIT_NPROC (and results stay reproducible)
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    env.update(extra or {})
    return env
