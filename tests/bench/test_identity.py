"""`bench/identity.py` (docs/benchmarks.md, "Identical outputs"): the check behind every "outputs are identical"."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support import ROOT, bench_script

SCRIPT = ROOT / "bench" / "identity.py"


def identity():
    return bench_script("identity")


def test_a_changed_missing_or_extra_item_is_named():
    differences = identity().differences
    old = [["a", "1"], ["b", "2"], ["c", "3"]]
    assert differences(old, [list(x) for x in old]) == []
    assert differences(old, [["a", "1"], ["b", "9"], ["c", "3"]]) == ["b"]
    assert differences(old, [["a", "1"], ["c", "3"], ["d", "4"]]) == ["b", "d"]
    assert differences([*old, ["a", "5"]], [*old, ["a", "6"]]) == ["a"]  # a name twice: each of its items counts


def test_the_part_digest_depends_on_names_hashes_and_order():
    digest = identity().part_digest
    base = digest([["a", "1"], ["b", "2"]])
    assert base == digest([["a", "1"], ["b", "2"]])
    assert (
        len(
            {base, digest([["b", "2"], ["a", "1"]]), digest([["a", "1"], ["b", "3"]]), digest([["x", "1"], ["b", "2"]])}
        )
        == 4
    )


@pytest.mark.slow
def test_the_documented_command_compares_every_part_against_the_last_commit():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--n", "40", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode in (0, 1), done.stderr
    result = json.loads(done.stdout)
    assert set(result["parts"]) == {"generate", "oracle trajectory", "battery", "battery from JSON", "replay+grade"}
    assert result["parts"]["generate"]["items"] == 40
    assert (
        result["parts"]["battery"]["items"] == result["parts"]["replay+grade"]["items"] >= len(result["task_files"]) > 0
    )
    # The verdict from a spec object and from its JSON is the same verdict.
    assert result["parts"]["battery"]["new"] == result["parts"]["battery from JSON"]["new"]
    unchanged = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "coworkenv"], cwd=ROOT).returncode == 0
    if unchanged:  # a clean checkout (CI): the package is the last commit's, so every output must be too
        assert result["identical"] and done.returncode == 0, result["parts"]
