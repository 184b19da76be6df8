"""`coworkenv.fileio`: the one JSON reader refuses what would break later code, with the file's name; the staged
writer leaves an output either as it was or whole."""

from __future__ import annotations

import pytest

from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import MAX_DEPTH, parse_json, read_json, staged, write_output


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[" * 100_000, "nested deeper"),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "nested deeper"),
        ('{"a": "\\ud800"}', "lone surrogate"),
        ('{"\\udfff": 1}', "lone surrogate"),
        ('{"a": 1e999}', "too large"),
        ('{"a": NaN}', "not valid JSON"),
        ("9" * 5000, "not valid JSON"),
        ('{"a": 1', "not valid JSON"),
    ],
)
def test_parse_json_refuses_with_the_name(text, needle):
    with pytest.raises(CoworkEnvError, match=needle) as info:
        parse_json(text, "in.json")
    assert str(info.value).startswith("in.json: ")


def test_parse_json_keeps_what_is_fine():
    depth = MAX_DEPTH
    assert parse_json("[" * depth + "]" * depth, "x") is not None
    assert parse_json('{"a": "\\ud83d\\ude00", "b": 1.5}', "x") == {
        "a": "😀",
        "b": 1.5,
    }  # a surrogate pair is one character


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda p: p.mkdir(), "is a directory"),
        (lambda p: p.write_bytes(b"\xff{}"), "not UTF-8"),
        (lambda p: None, "no such file"),
    ],
)
def test_read_json_names_the_file(tmp_path, make, needle):
    path = tmp_path / "input.json"
    make(path)
    with pytest.raises(CoworkEnvError, match=needle) as info:
        read_json(path)
    assert str(path) in str(info.value)


def test_a_failed_block_leaves_the_output_as_it_was(tmp_path):
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "old.txt").write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), staged(dest, folder=True) as folder:
        (folder / "new.txt").write_text("new", encoding="utf-8")
        raise RuntimeError("the command failed half-way")
    assert [p.name for p in tmp_path.iterdir()] == ["out"], "no temporary folder is left behind"
    assert [p.name for p in dest.iterdir()] == ["old.txt"]


def test_a_finished_block_replaces_the_output_whole(tmp_path):
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "old.txt").write_text("old", encoding="utf-8")
    with staged(dest, folder=True) as folder:
        (folder / "new.txt").write_text("new", encoding="utf-8")
        assert not (dest / "new.txt").exists(), "nothing appears under the name before the block ends"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert [p.name for p in dest.iterdir()] == ["new.txt"]
    write_output(tmp_path / "nested" / "file.json", "{}")
    assert (tmp_path / "nested" / "file.json").read_text(encoding="utf-8") == "{}"


@pytest.mark.parametrize(
    ("where", "folder", "needle"),
    [
        ("a-file/below", False, "a parent of it is a file"),
        ("a-dir", False, "is a directory"),
        ("a-file", True, "is a file"),
    ],
)
def test_a_bad_destination_is_refused_before_any_work(tmp_path, where, folder, needle):
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    (tmp_path / "a-dir").mkdir()
    ran = []
    with pytest.raises(CoworkEnvError, match=needle), staged(tmp_path / where, folder=folder):
        ran.append(True)
    assert not ran


def test_a_failed_write_names_the_destination_not_the_temporary(tmp_path):
    """`--out` under /proc, say: the parent exists, the write fails; the error is about the file asked for."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    dest = tmp_path / "out.parquet"
    with pytest.raises(CoworkEnvError) as raised, staged(dest) as tmp:
        pq.write_table(
            pa.table({"a": [1]}), str(tmp / "no" / "such")
        )  # pyarrow's own OSError, the temporary in its text
    assert str(raised.value) == f"{dest}: cannot write: No such file or directory"
    with pytest.raises(CoworkEnvError, match=f"^{dest}: cannot write: No such file or directory$"), staged(dest) as tmp:
        open(tmp / "below", "w")  # noqa: SIM115  (an OSError whose filename is below the temporary)
    assert list(tmp_path.iterdir()) == []
