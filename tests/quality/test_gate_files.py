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


def _same_both_ways(
    stage: str, frames: dict[str, pd.DataFrame], folder: Path, batch_size: int, chunk_rows: int = 100_000
) -> dict[str, Any]:
    files = _stored(frames, folder)
    whole = _verdict(lambda: run_gate(stage, {name: pq.read_table(path) for name, path in files.items()}))
    streamed = _verdict(lambda: run_gate_files(stage, files, batch_size=batch_size, chunk_rows=chunk_rows))
    assert streamed == whole
    return streamed


@pytest.mark.parametrize("case", CASES, ids=[f"{case.stage}:{case.name}" for case in CASES])
def test_every_corruption_is_judged_the_same_from_files(
    case: Case, clean_frames: dict[str, pd.DataFrame], tmp_path: Path, gx_loaded: None
) -> None:
    frames = frames_for(case.stage, clean_frames)
    case.corrupt(frames)
    # Parts of 50 rows: every table is judged in two parts or more, and rows that share a key fall into different ones.
    verdict = _same_both_ways(case.stage, frames, tmp_path, batch_size=7, chunk_rows=50)
    assert not verdict["success"] and verdict["failures"]


@pytest.mark.parametrize("stage", sorted(STAGE_TABLES))
@pytest.mark.parametrize("batch_size", [1, 13, 100_000])
def test_clean_tables_pass_from_files_in_any_batch_size(
    stage: str, batch_size: int, clean_frames: dict[str, pd.DataFrame], tmp_path: Path, gx_loaded: None
) -> None:
    assert _same_both_ways(stage, frames_for(stage, clean_frames), tmp_path, batch_size)["success"]


def test_nulls_and_unparsable_json_in_bulky_columns_are_reported_as_they_are(
    clean_frames: dict[str, pd.DataFrame], tmp_path: Path, gx_loaded: None
) -> None:
    frames = frames_for("rollouts", clean_frames)
    put(frames["trajectories"], [0, 5], "messages_json", "{not json")
    put(frames["trajectories"], 3, "messages_json", None)
    put(frames["sft"], 2, "tools", "[unclosed")
    verdict = _same_both_ways("rollouts", frames, tmp_path, batch_size=4)
    failed = {f"{f['table']}.{f['rule']}": f for f in verdict["failures"]}
    assert failed["trajectories.messages_json_parses"]["examples"] == [
        {"trajectory_id": frames["trajectories"]["trajectory_id"][i], "messages_json": "{not json"} for i in (0, 5)
    ]
    assert failed["trajectories.not_null.messages_json"]["unexpected_count"] == 1
    assert failed["sft.tools_json_parses"]["unexpected_count"] == 1


def test_a_table_judged_in_parts_adds_them_up_as_one(
    clean_frames: dict[str, pd.DataFrame], tmp_path: Path, gx_loaded: None
) -> None:
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
    assert (
        failed["tasks.difficulty_1_5"]["unexpected_count"] == 3 and len(failed["tasks.difficulty_1_5"]["examples"]) == 3
    )
    assert failed["tasks.not_null.family"]["element_count"] == 60
    assert verdict["statistics"]["tables"]["tasks"]["rows"] == 60


def test_a_key_of_lists_fails_uniqueness_both_ways(
    clean_frames: dict[str, pd.DataFrame], tmp_path: Path, gx_loaded: None
) -> None:
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


def test_a_suite_expecting_more_of_a_bulky_column_is_refused(
    monkeypatch: pytest.MonkeyPatch, clean_frames: dict[str, pd.DataFrame], tmp_path: Path
) -> None:
    from dataclasses import replace

    gate = GATES.get("rollouts")
    monkeypatch.setitem(
        GATES._items, "rollouts", replace(gate, bulky={**gate.bulky, "trajectories": ("messages_json", "family")})
    )
    with pytest.raises(CoworkEnvError, match="reads bulky column"):
        run_gate_files("rollouts", _stored(frames_for("rollouts", clean_frames), tmp_path))


@pytest.mark.parametrize("nulls_first", [True, False], ids=["null-part-first", "null-part-last"])
def test_a_rule_that_raises_on_some_parts_only_is_merged_with_itself(
    nulls_first: bool, clean_frames: dict[str, pd.DataFrame], tmp_path: Path, gx_loaded: None
) -> None:
    """A `difficulty` column of strings: `difficulty_1_5` cannot be evaluated on a part holding them but can on a
    part of nulls, and GX lists a rule that raised first, so each part's results come in another order."""
    frames = frames_for("validated", clean_frames)
    tasks = frames["tasks"]
    texts = [str(v) for v in tasks["difficulty"]]
    tasks["difficulty"] = [None] * 21 + texts[21:] if nulls_first else texts[:21] + [None] * (len(tasks) - 21)
    verdict = _same_both_ways("validated", frames, tmp_path, batch_size=7, chunk_rows=20)
    failed = {f"{f['table']}.{f['rule']}": f for f in verdict["failures"]}
    assert "could not be evaluated" in failed["tasks.difficulty_1_5"]["message"]
    assert failed["tasks.not_null.difficulty"]["unexpected_count"] == (21 if nulls_first else len(tasks) - 21)


def test_rows_are_numbered_from_the_start_of_the_table_in_every_part(
    clean_frames: dict[str, pd.DataFrame], tmp_path: Path, gx_loaded: None
) -> None:
    """Without its id column a table's examples are row numbers: those of the table, not of the part."""
    frames = frames_for("rollouts", clean_frames)
    put(frames["trajectories"], [25, 45], "difficulty", 9)
    frames["trajectories"] = frames["trajectories"].drop(columns=["trajectory_id"])
    verdict = _same_both_ways("rollouts", frames, tmp_path, batch_size=7, chunk_rows=20)
    failed = {f"{f['table']}.{f['rule']}": f for f in verdict["failures"]}
    assert failed["trajectories.difficulty_1_5"]["examples"] == [25, 45]


def test_an_integer_column_with_a_null_reads_alike_in_every_part(
    clean_frames: dict[str, pd.DataFrame], tmp_path: Path, gx_loaded: None
) -> None:
    """A null makes pandas read an integer column as floats; parts without it must too, or their examples read `9`
    where the whole table's read `9.0` (equal as numbers, so the messages are compared)."""
    frames = frames_for("validated", clean_frames)
    tasks = frames["tasks"]
    put(tasks, 3, "difficulty", None)
    put(tasks, 45, "difficulty", 9)
    tasks["difficulty"] = tasks["difficulty"].astype("Int64")  # stored as integers, with a null
    files = _stored(frames, tmp_path)
    assert pq.read_schema(files["tasks"]).field("difficulty").type == pa.int64()
    messages = [
        [
            f["message"]
            for f in _verdict(lambda size=size: run_gate_files("validated", files, batch_size=7, chunk_rows=size))[
                "failures"
            ]
        ]
        for size in (20, 100_000)
    ]
    assert messages[0] == messages[1] and any("9.0" in m for m in messages[0])


def test_a_compound_key_with_a_null_member_is_still_a_key(
    clean_frames: dict[str, pd.DataFrame], tmp_path: Path, gx_loaded: None
) -> None:
    """Two evaluation rows with one key whose `trial` is null (NaN in pandas, never equal to itself) are duplicates, as
    GX's own compound uniqueness has it."""
    frames = frames_for("evaluated", clean_frames)
    results = frames["eval_results"]
    for col in ("eval_id", "model", "task_id"):
        put(results, 100, col, results[col].iat[3])
    results["trial"] = results["trial"].astype("Int64")
    put(results, [3, 100], "trial", None)
    verdict = _same_both_ways("evaluated", frames, tmp_path, batch_size=7, chunk_rows=50)
    failed = {f"{f['table']}.{f['rule']}": f for f in verdict["failures"]}
    assert failed["eval_results.unique_trial"]["unexpected_count"] == 2


def test_a_rule_whose_parts_do_not_add_up_is_refused(
    monkeypatch: pytest.MonkeyPatch, clean_frames: dict[str, pd.DataFrame], tmp_path: Path
) -> None:
    """Uniqueness of a column, say: a duplicate can span two parts. Refused before a row is read."""
    from dataclasses import replace

    from coworkenv.quality.merge import summable

    assert summable("expect_column_values_to_be_in_set") and not summable("expect_column_values_to_be_unique")
    gate = GATES.get("evaluated")
    build = gate.build

    def with_unique() -> dict[str, Any]:
        import great_expectations as gx

        suites = build()
        suites["eval_results"].add_expectation(
            gx.expectations.ExpectColumnValuesToBeUnique(column="task_id", meta={"rule": "unique_task"})
        )
        return suites

    monkeypatch.setitem(GATES._items, "evaluated", replace(gate, build=with_unique))
    with pytest.raises(
        CoworkEnvError, match="expect_column_values_to_be_unique on eval_results cannot be judged a part at a time"
    ):
        run_gate_files("evaluated", _stored(frames_for("evaluated", clean_frames), tmp_path))
