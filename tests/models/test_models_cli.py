"""`coworkenv models` through the console script, as the README gives it: register the tiny model and trained
checkpoints, attach real evaluations, promote (a better one replaces the current version, a worse one is kept out),
list, show, decisions; bad refs and settings as one `error:` line with exit code 2."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_eval_cli import assert_one_line_error, cli, ok
from tests.models.conftest import evaluation_of, trained

pytestmark = pytest.mark.slow


def test_the_registry_from_the_command_line(root, evals, tiny_model_dir, tmp_path):
    def models(*args):
        return cli("models", *args, data_root=root)

    assert "no models registered under" in ok(models())
    assert ok(models("register", tiny_model_dir, "--name", "cw")).startswith("registered cw:v1 (tiny) at ")
    v1 = root / "models" / "cw" / "v0001"
    out = ok(models("register", trained(tmp_path / "sft", tiny_model_dir, base=v1), "--name", "cw"))
    assert out.startswith("registered cw:v2 (sft, parent cw:v1, training release r-train-0001) at ")
    shown = json.loads(ok(models("show", "cw:v2")))
    assert (shown["ref"], shown["job"], shown["parent"], shown["base_model"], shown["status"]) == (
        "cw:v2",
        "sft",
        "cw:v1",
        str(v1),
        "candidate",
    )

    assert_one_line_error(
        models("eval", "cw:v1", "eval-null"), "cw:v1: the evaluation is of agent 'null', not of a checkpoint"
    )
    null_of_v1 = evaluation_of(root, evals["null"], v1)
    out = ok(models("eval", "cw:v1", null_of_v1))
    assert out.startswith(f"cw:v1: evaluation {null_of_v1} on suite8 (hf:v0001): mean score 0.000 [0.000, 0.000]")
    assert ok(models("promote", "cw:v1")).startswith("promoted cw:v1: cw has no current version")
    ok(models("eval", "cw:v2", evaluation_of(root, evals["oracle"], root / "models" / "cw" / "v0002")))
    out = ok(models("promote", "cw:v2", "--margin", "0.5", "--alpha", "0.01"))
    assert out.startswith("promoted cw:v2 over cw:v1: mean score 0.000 → 1.000 on 8 paired task(s)")
    assert out.strip().endswith("current version: cw:v2")
    ok(models("register", trained(tmp_path / "worse", tiny_model_dir, base=tmp_path / "sft"), "--name", "cw"))
    ok(models("eval", "cw:v3", evaluation_of(root, evals["random"], root / "models" / "cw" / "v0003")))
    out = ok(models("promote", "cw:v3"))  # kept: the decision is the output, and the exit code is 0
    assert (
        out.startswith("kept cw:v2, cw:v3 refused: the gain is below the margin 0.02")
        and "current version: cw:v2" in out
    )

    listing = ok(models())
    for version, status, job in (("v1", "retired", "tiny"), ("v2", "current", "sft"), ("v3", "rejected", "sft")):
        assert any(f"│ cw   │ {version}      │ {status}" in line and job in line for line in listing.splitlines()), (
            listing
        )
    assert "1.000 [1.000, 1.000] (suite8)" in listing and "r-train-0001" in listing
    logged = ok(models("decisions", "cw"))
    assert (
        "promotions of cw" in logged
        and logged.count("promoted") >= 2
        and "kept" in logged
        and "+1.000 [+1.000, +1.000]" in logged
    )

    assert_one_line_error(models("show", "cw:v9"), "cw has no version v9")
    assert_one_line_error(models("promote", "nobody"), "no model named 'nobody'")
    assert_one_line_error(models("promote", "cw:v3", "--margin", "-1"), "--margin")
    assert_one_line_error(models("eval", "cw", "no-such-eval"), "not a published evaluation")
    assert_one_line_error(models("register", tmp_path / "missing", "--name", "cw"), "no such checkpoint folder")
    assert_one_line_error(models("decisions", "cw:v1"), "model name")


def test_register_refuses_a_folder_that_is_not_a_checkpoint(tiny_model_dir, tmp_path):
    data = tmp_path / "data"
    for name, text, needle in (("bad", "{bad", "config.json: not valid JSON"), ("empty", "{}", "model_type")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text(text, encoding="utf-8")
        assert_one_line_error(cli("models", "register", tmp_path / name, "--name", "m", data_root=data), needle)
    assert "no models registered under" in ok(cli("models", data_root=data))
    assert ok(cli("models", "register", tiny_model_dir, "--name", "m", data_root=data)).startswith(
        "registered m:v1 (tiny) at "
    )
