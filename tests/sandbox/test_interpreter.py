"""What the sandbox's Python is made of: a venv's .pth files may add packages from outside it (a venv layered on
another's packages), and bubblewrap must bind those, and only those, or its workers cannot import them."""

from __future__ import annotations

import json
from pathlib import Path

from coworkenv.sandbox.interpreter import PythonLayout, current_layout, linked_package_dirs


def _site(tmp_path: Path) -> tuple[Path, Path, Path]:
    site = tmp_path / "venv" / "lib" / "site-packages"
    shared = tmp_path / "other-venv" / "site-packages"
    checkout = tmp_path / "checkout"
    (shared / "re2-1.1.dist-info").mkdir(parents=True)
    (checkout / "coworkenv").mkdir(parents=True)
    (site / "inner-0.1.dist-info").mkdir(parents=True)
    return site, shared, checkout


def test_a_pth_line_naming_installed_packages_outside_the_venv_is_bound(tmp_path: Path):
    site, shared, checkout = _site(tmp_path)
    (site / "shared.pth").write_text(f"# packages of another venv\n{shared}\n\n")
    (site / "project.pth").write_text(f"{checkout}\n")  # an editable install: the checkout, no .dist-info
    (site / "hook.pth").write_text("import sys\n")
    (site / "missing.pth").write_text(f"{tmp_path / 'gone'}\n")
    (site / "inside.pth").write_text(".\n")  # the site dir itself is bound already
    assert linked_package_dirs((site,)) == (shared.resolve(),)


def test_a_relative_pth_line_is_read_from_its_site_dir(tmp_path: Path):
    site, shared, _ = _site(tmp_path)
    (site / "rel.pth").write_text("../../../other-venv/site-packages\n")
    assert linked_package_dirs((site,)) == (shared.resolve(),)


def test_linked_dirs_are_among_the_read_only_roots(tmp_path: Path):
    site, shared, _ = _site(tmp_path)
    layout = current_layout()
    layered: PythonLayout = layout.model_copy(update={"linked_dirs": (shared,)})
    assert shared in layered.read_only_roots() and shared not in layout.read_only_roots()
    assert set(layout.read_only_roots()) <= set(layered.read_only_roots())


def test_every_package_folder_a_layered_venv_imports_from_is_bound(tmp_path: Path):
    """A venv whose .pth names this venv's packages (what the README walk builds for its copy): every folder on its
    path that holds installed distributions must lie below a root that bubblewrap binds."""
    import subprocess
    import sys
    import sysconfig

    repo = Path(__file__).resolve().parents[2]
    venv = tmp_path / "layered"
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(venv)], check=True)  # type: ignore[attr-defined]
    purelib = Path(sysconfig.get_paths()["purelib"])
    site = venv / purelib.relative_to(sys.prefix)
    (site / "project.pth").write_text(f"{repo}\n")
    (site / "shared.pth").write_text(f"{purelib}\n")
    probe = (
        "import json, sys, pathlib\nfrom coworkenv.sandbox.interpreter import current_layout\n"
        "print(json.dumps([sys.path, [str(r) for r in current_layout().read_only_roots()]]))"
    )
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe], check=True, capture_output=True, text=True, cwd=tmp_path
    )
    path, roots = json.loads(out.stdout)
    packages = [Path(p).resolve() for p in path if p and Path(p).is_dir() and any(Path(p).glob("*.dist-info"))]
    assert purelib.resolve() in packages
    unbound = [p for p in packages if not any(p.is_relative_to(Path(r).resolve()) for r in roots)]
    assert not unbound, f"bubblewrap would hide {unbound}"
