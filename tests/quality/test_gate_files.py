"""The gates over stored tables (`run_gate_files`, what a run's gate stage calls) give exactly what they give over the
same tables in memory (`run_gate`): the frames are built batch by batch, with the bulky columns as stand-ins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.quality import GATES, GateFailed
from coworkenv.quality.gates import run_gate, run_gate_files
from tests.quality.test_gates import CASES, STAGE_TABLES, Case, frames_for, put


def _stored(frames: dict[str, pd.DataFrame], folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for name, df in frames.items():
        files[name] = folder / f"{name}.parquet"
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), files[name])
    return files


def _verdict(run: Any) -> dict[str, Any]:
    """What a gate said (its result, or the failed one), without the time it took."""
    try:
        result = run()
    except GateFailed as failed:
        result = failed.result
    data = result.model_dump()
    data["statistics"].pop("seconds")
    return data


def _same_both_ways(stage: str, frames: dict[str, pd.DataFrame], folder: Path, batch_size: int, chunk_rows: int = 100_000) -> dict[str, Any]:
    files = _stored(frames, folder)
    whole = _verdict(lambda: run_gate(stage, {name: pq.read_table(path) for name, path in files.items()}))
    streamed = _verdict(lambda: run_gate_files(stage, files, batch_size=batch_size, chunk_rows=chunk_rows))
    assert streamed == whole
    return streamed


@pytest.mark.parametrize("case", CASES, ids=[f"{case.stage}:{case.name}" for case in CASES])
def test_every_corruption_is_judged_the_same_from_files(case: Case, clean_frames: dict[str, pd.DataFrame], tmp_path: Path, gx_loaded: None) -> None:
    frames = frames_for(case.stage, clean_frames)
    case.corrupt(frames)
    # Parts of 50 rows: every table is judged in two parts or more, and rows that share a key fall into different ones.
    verdict = _same_both_ways(case.stage, frames, tmp_path, batch_size=7, chunk_rows=50)
    assert not verdict["success"] and verdict["failures"]


@pytest.mark.parametrize("stage", sorted(STAGE_TABLES))
@pytest.mark.parametrize("batch_size", [1, 13, 100_000])
def test_clean_tables_pass_from_files_in_any_batch_size(stage: str, batch_size: int, clean_frames: dict[str, pd.DataFrame], tmp_path: Path,
                                                        gx_loaded: None) -> None:  # fmt: skip
    assert _same_both_ways(stage, frames_for(stage, clean_frames), tmp_path, batch_size)["success"]


def test_nulls_and_unparsable_json_in_bulky_columns_are_reported_as_they_are(clean_frames: dict[str, pd.DataFrame], tmp_path: Path,
                                                                              gx_loaded: None) -> None:  # fmt: skip
    frames = frames_for("rollouts", clean_frames)
    put(frames["trajectories"], [0, 5], "messages_json", "{not json")
    put(frames["trajectories"], 3, "messages_json", None)
    put(frames["sft"], 2, "tools", "[unclosed")
    verdict = _same_both_ways("rollouts", frames, tmp_path, batch_size=4)
    failed = {f"{f['table']}.{f['rule']}": f for f in verdict["failures"]}
    assert failed["trajectories.messages_json_parses"]["examples"] == [{"trajectory_id": frames["trajectories"]["trajectory_id"][i],
                                                                        "messages_json": "{not json"} for i in (0, 5)]  # fmt: skip
    assert failed["trajectories.not_null.messages_json"]["unexpected_count"] == 1
    assert failed["sft.tools_json_parses"]["unexpected_count"] == 1


def test_a_table_judged_in_parts_adds_them_up_as_one(clean_frames: dict[str, pd.DataFrame], tmp_path: Path, gx_loaded: None) -> None:
    """Parts of 20 rows: a task id repeated 59 rows later, a null and bad values in three parts are counted and
    quoted as over the whole table, and the row count is the table's."""
    frames = frames_for("validated", clean_frames)
    tasks = frames["tasks"]
    put(tasks, 59, "task_id", tasks["task_id"].iat[0])
    put(tasks, [5, 25, 45], "difficulty", 9)
    put(tasks, 30, "family", None)
    verdict = _same_both_ways("validated", frames, tmp_path, batch_size=7, chunk_rows=20)
    failed = {f"{f['table']}.{f['rule']}": f for f in verdict["failures"]}
    assert failed["tasks.unique_task_id"]["unexpected_count"] == 2
    assert [e["task_id"] for e in failed["tasks.unique_task_id"]["examples"]] == [tasks["task_id"].iat[0]] * 2
    assert failed["tasks.difficulty_1_5"]["unexpected_count"] == 3 and len(failed["tasks.difficulty_1_5"]["examples"]) == 3
    assert failed["tasks.not_null.family"]["element_count"] == 60
    assert verdict["statistics"]["tables"]["tasks"]["rows"] == 60


def test_a_key_of_lists_fails_uniqueness_both_ways(clean_frames: dict[str, pd.DataFrame], tmp_path: Path, gx_loaded: None) -> None:
    """Hostile rows whose key holds lists: no plain value, so no row passes `unique_trial`, and nothing crashes."""
    frames = frames_for("evaluated", clean_frames)
    results = frames["eval_results"]
    results["model"] = [[model] for model in results["model"]]
    verdict = _same_both_ways("evaluated", frames, tmp_path, batch_size=7, chunk_rows=50)
    failed = {f"{f['table']}.{f['rule']}": f for f in verdict["failures"]}
    assert failed["eval_results.unique_trial"]["unexpected_count"] == len(results)


def test_empty_tables_from_files(clean_frames: dict[str, pd.DataFrame], tmp_path: Path, gx_loaded: None) -> None:
    frames = {name: df.iloc[0:0] for name, df in frames_for("rollouts", clean_frames).items()}
    assert not _same_both_ways("rollouts", frames, tmp_path, batch_size=5)["success"]  # `not_empty` fails the same way


def test_a_suite_expecting_more_of_a_bulky_column_is_refused(monkeypatch: pytest.MonkeyPatch, clean_frames: dict[str, pd.DataFrame],
                                                             tmp_path: Path) -> None:  # fmt: skip
    from dataclasses import replace

    gate = GATES.get("rollouts")
    monkeypatch.setitem(GATES._items, "rollouts", replace(gate, bulky={**gate.bulky, "trajectories": ("messages_json", "family")}))
    with pytest.raises(CoworkEnvError, match="reads bulky column"):
        run_gate_files("rollouts", _stored(frames_for("rollouts", clean_frames), tmp_path))
