"""`coworkenv eval pairs` and `coworkenv train dpo` through the console script, as the README runs them: the tiny model
evaluated on training tasks, its failing trials paired with the oracle's rollouts, DPO on those pairs; bad input as one
`error:` line with exit code 2."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from coworkenv.data.reader import list_releases
from tests.cli.test_eval_cli import assert_one_line_error, cli, ok
from tests.rollout.pair_sources import publish_with_oracle
from tests.support.suites import example_tasks

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::FutureWarning")]

TASKS = ("04_files_region_report", "07_chat_standup_blockers", "13_retrieval_contract_renewal")


@pytest.fixture(scope="module")
def home(tmp_path_factory, tiny_model_dir) -> Path:
    """A task release with the oracle's rollouts, and the tiny model's published evaluation on it (run `eval-tiny`)."""
    home = tmp_path_factory.mktemp("train-dpo")
    training = publish_with_oracle(home / "data", example_tasks(TASKS), "train")
    ok(
        cli(
            "eval",
            "--agent",
            f"hf:{tiny_model_dir}",
            "--suite",
            training.release_id,
            "--trials",
            "1",
            "--max-new-tokens",
            "16",
            "--runtime",
            "none",
            "--workers",
            "1",
            "--run-id",
            "eval-tiny",
            data_root=home / "data",
        )
    )
    return home


def test_pairs_then_dpo_from_an_evaluation_of_the_model(home, tiny_model_dir):
    [evaluation] = [m for m in list_releases(home / "data") if m.kind == "eval"]
    printed = ok(cli("eval", "pairs", evaluation.release_id, "--out", home / "pairs.parquet", data_root=home / "data"))
    assert re.fullmatch(
        rf"3 pair\(s\) from 3 task\(s\) of {evaluation.release_id} \(chosen: 0 the model's own, 3 the oracle's; "
        rf"mean score gap 0\.\d\d\) → .*pairs\.parquet\n",
        printed,
    ), printed
    rows = pq.read_table(home / "pairs.parquet").to_pylist()
    assert {r["rejected_id"].split("/")[1] for r in rows} == {f"hf:{tiny_model_dir.name}"} and {
        r["chosen_source"] for r in rows
    } == {"oracle"}

    out = home / "ckpt"
    printed = ok(
        cli(
            "train",
            "dpo",
            "--model",
            tiny_model_dir,
            "--release",
            evaluation.release_id,
            "--out",
            out,
            "--max-steps",
            "2",
            "--max-length",
            "1024",
            "--logging-steps",
            "1",
            "--warmup-steps",
            "0",
            "--use-cpu",
            data_root=home / "data",
        )
    )
    assert re.search(
        rf"trained 2 step\(s\) on 3 pair\(s\) of evaluation {evaluation.release_id} \(mean score gap 0\.\d\d\) in \d+ s: "
        r"loss 0\.693 → \d\.\d{3}, reward accuracy 0\.00 → \d\.\d\d, margin 0\.000 → -?\d+\.\d{3}",
        printed,
    ), printed
    assert f"evaluate it with: coworkenv eval --agent hf:{out}" in printed and "{'loss'" not in printed
    assert (out / "training.json").is_file() and (out / "curves.png").is_file()
    # the run id, before (or instead of) the release, gives the same pairs
    assert "3 pair(s) from 3 task(s) of eval-tiny" in ok(
        cli("eval", "pairs", "eval-tiny", "--out", home / "p2.parquet", data_root=home / "data")
    )


def test_bad_input_is_one_line(home, tiny_model_dir, tmp_path):
    [training] = [m for m in list_releases(home / "data") if m.kind == "tasks"]
    dpo = ("train", "dpo", "--model", tiny_model_dir, "--out", tmp_path / "o")
    assert_one_line_error(cli(*dpo, "--release", training.release_id, data_root=home / "data"), "is a tasks release")
    assert_one_line_error(
        cli(*dpo, "--release", "eval-tiny", "--min-score-gap", "2", data_root=home / "data"), "--min-score-gap"
    )
    assert_one_line_error(cli(*dpo, data_root=home / "data"), "release")  # no default: pairs need a named evaluation
    assert_one_line_error(
        cli("eval", "pairs", "no-such-eval", "--out", tmp_path / "p.parquet", data_root=home / "data"), "neither"
    )
    assert not (tmp_path / "o").exists() and not (tmp_path / "p.parquet").exists()
