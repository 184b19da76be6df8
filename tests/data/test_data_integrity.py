"""Releases checked against their manifest on read: a missing, damaged, extra or miscounted Parquet part is refused
by `read_table`, the SQL catalog and `export` with one error naming the file; a broken `LATEST` or data root is named.

Each case damages a real published release the way a disk, a copy or a hand edit would.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from coworkenv.data import catalog
from coworkenv.data.export import export_release
from coworkenv.data.integrity import release_problems
from coworkenv.data.layout import FileEntry, content_hash_of
from coworkenv.data.publisher import publish_release
from coworkenv.data.reader import latest_release, read_manifest, read_table, verify_release
from coworkenv.data.root import open_root
from coworkenv.errors import CoworkEnvError
from tests.support.releases import edit_manifest


@pytest.fixture
def release(tmp_path, tables) -> Path:
    """A fresh copy of the fixture run's release under `tmp_path/root`; its directory."""
    manifest = publish_release(tables, data_root=str(tmp_path / "root"), run_id="run-1", parent=None, config={})
    return tmp_path / "root" / "releases" / manifest.release_id


def _part(release: Path, table: str, index: int = 0) -> Path:
    manifest = json.loads((release / "manifest.json").read_text())
    return release / manifest["files"][table][index]["path"]


def _refused_everywhere(release: Path, table: str, match: str, tmp_path: Path) -> None:
    """read_table, the catalog and export all refuse, naming the file; export leaves nothing behind."""
    root = release.parent.parent
    with pytest.raises(CoworkEnvError, match=match):
        read_table(root, "latest", table)
    with pytest.raises(CoworkEnvError, match=match):
        catalog.connect(root)
    out = tmp_path / "export"
    with pytest.raises(CoworkEnvError, match=match):
        export_release(root, "latest", out, "jsonl")
    assert (
        list(tmp_path.glob("export*")) == [] and [p for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    )  # no temporary


def test_an_intact_release_passes_and_its_hashes_are_remembered(release):
    root = open_root(str(release.parent.parent))
    manifest = read_manifest(root)
    assert release_problems(root, manifest) == [] and release_problems(root, manifest, fresh=True) == []
    remembered = json.loads((release.parent.parent / ".verified" / f"{manifest.release_id}.json").read_text())
    assert len(remembered) == sum(len(entries) for entries in manifest.files.values())


def test_a_file_changed_behind_its_timestamp_is_caught_by_verify(release):
    """The memory of hashed files trusts size, modification time and inode; `--verify` trusts nothing."""
    root = release.parent.parent
    catalog.connect(root).close()
    victim = _part(release, "rl")
    st = victim.stat()
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    with open(victim, "r+b") as f:  # in place: same inode, same size
        f.write(bytes(data))
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))
    catalog.connect(root).close()
    with pytest.raises(CoworkEnvError, match="content differs from the manifest"):
        catalog.connect(root, verify=True)
    os.utime(victim)  # an ordinary write moves the time: then every read hashes it again
    with pytest.raises(CoworkEnvError, match="content differs from the manifest"):
        read_table(root, "latest", "rl")


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.update(content_hash=m.pop("content_hashes")),
        lambda m: m.pop("files"),
        lambda m: m.update(extra_key=1),
        lambda m: m["content_hashes"].pop("rl"),
        lambda m: m["content_hashes"].update(rl="0" * 64),
    ],
    ids=[
        "content_hashes renamed",
        "files missing",
        "unknown key",
        "a table's hash missing",
        "a hash that is not the file list's",
    ],
)
def test_a_manifest_edited_by_hand_is_refused_by_every_reader(release, tmp_path, edit):
    edit_manifest(release, edit)
    _refused_everywhere(release, "tasks", "manifest", tmp_path)
    with pytest.raises(CoworkEnvError, match="manifest"):
        verify_release(release.parent.parent)


def test_a_missing_part_is_refused_not_read_as_fewer_rows(release, tmp_path):
    victim = _part(release, "tasks", 1)
    victim.unlink()
    _refused_everywhere(release, "tasks", f"damaged release .*{victim.relative_to(release)}: missing", tmp_path)


def test_a_truncated_part_is_refused_by_its_size(release, tmp_path):
    victim = _part(release, "tasks")
    size = victim.stat().st_size
    victim.write_bytes(victim.read_bytes()[: size // 2])
    _refused_everywhere(
        release, "tasks", f"{victim.relative_to(release)}: {size // 2} bytes, the manifest lists {size}", tmp_path
    )


def test_a_same_size_corruption_is_found_on_every_read(release, tmp_path):
    """Bytes flipped inside the data pages keep the size and the footer: only SHA-256 sees it, on every read path."""
    victim = _part(release, "rl")
    data = bytearray(victim.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 16] = bytes(b ^ 0xFF for b in data[middle : middle + 16])
    victim.write_bytes(bytes(data))
    root = release.parent.parent
    with pytest.raises(CoworkEnvError, match=f"{victim.relative_to(release)}: content differs from the manifest"):
        catalog.connect(root)
    with pytest.raises(CoworkEnvError, match=f"{victim.relative_to(release)}: content differs from the manifest"):
        catalog.connect(root, verify=True)
    with pytest.raises(CoworkEnvError, match="content differs"):
        read_table(root, "latest", "rl")
    with pytest.raises(CoworkEnvError, match="content differs"):
        export_release(root, "latest", tmp_path / "export", "jsonl", tables=["rl"])
    assert not (tmp_path / "export").exists()
    assert verify_release(root) == [f"{victim.relative_to(release)}: content differs from the manifest"]


def test_an_unlisted_part_is_refused(release, tmp_path):
    extra = _part(release, "rl").with_name("part-9.parquet")
    extra.write_bytes(_part(release, "rl").read_bytes())
    _refused_everywhere(release, "rl", f"{extra.relative_to(release)}: not listed in manifest.json", tmp_path)


def test_a_footer_row_count_differing_from_the_manifest_is_refused(release, tmp_path):
    victim = _part(release, "tasks")
    listed = pq.read_metadata(victim).num_rows

    def claim_one_more(manifest: dict) -> None:
        manifest["files"]["tasks"][0]["rows"] += 1
        manifest["row_counts"]["tasks"] += 1

    edit_manifest(release, claim_one_more)
    expected = f"{victim.relative_to(release)}: {listed} rows in its Parquet footer, the manifest lists {listed + 1}"
    _refused_everywhere(release, "tasks", expected, tmp_path)


def test_row_counts_differing_from_the_file_list_are_refused(release, tmp_path):
    edit_manifest(release, lambda m: m["row_counts"].update(rl=m["row_counts"]["rl"] + 5))
    _refused_everywhere(release, "rl", "rl: its files list .* rows, the manifest's row_counts", tmp_path)


def test_a_failed_export_leaves_the_previous_output_untouched(release, tmp_path):
    """A part damaged behind an intact footer and a matching manifest (as if published so) fails the export half-way:
    the tables written before it go with the temporary folder and the previous export stays as it was."""
    root = release.parent.parent
    out = tmp_path / "export"
    export_release(root, "latest", out, "jsonl", tables=["rl"])
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    victim = _part(release, "validations")
    data = bytearray(victim.read_bytes())
    data[4:2048] = bytes(len(data[4:2048]))  # zero the first data pages, keep header and footer

    def relist(manifest: dict) -> None:
        import hashlib

        entry = next(e for e in manifest["files"]["validations"] if release / e["path"] == victim)
        entry["sha256"] = hashlib.sha256(bytes(data)).hexdigest()
        manifest["content_hashes"]["validations"] = content_hash_of(
            [FileEntry(**e) for e in manifest["files"]["validations"]]
        )

    victim.write_bytes(bytes(data))
    edit_manifest(release, relist)
    with pytest.raises(CoworkEnvError, match=f"{victim.name}: unreadable"):
        export_release(root, "latest", out, "jsonl", tables=["tasks", "validations"], overwrite=True)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export", "root"]


# --- a broken LATEST or data root ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda latest: latest.write_bytes(b"\xff\xfe r-\x80\n"), "LATEST: not UTF-8 text"),
        (lambda latest: latest.mkdir(), "LATEST: cannot read"),
        (lambda latest: latest.write_text("../../etc\n"), "LATEST names '../../etc', which is not a complete release"),
    ],
    ids=["non-utf8", "directory", "not-an-id"],
)
def test_a_broken_latest_is_named(tmp_path, make, match):
    (tmp_path / "releases").mkdir()
    make(tmp_path / "releases" / "LATEST")
    with pytest.raises(CoworkEnvError, match=match):
        latest_release(tmp_path)
    with pytest.raises(CoworkEnvError, match=match):
        catalog.connect(tmp_path)


def test_a_data_root_that_is_a_file_is_named(tmp_path):
    (tmp_path / "file").write_text("x")
    for root in (tmp_path / "file", tmp_path / "file" / "below"):
        with pytest.raises(CoworkEnvError, match=f"{tmp_path / 'file'} is not a directory"):
            open_root(str(root))
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "releases").write_text("x")
    with pytest.raises(CoworkEnvError, match="releases is not a directory"):
        latest_release(tmp_path / "d")


@pytest.mark.parametrize(
    "path",
    [
        "../other/part-0.parquet",
        "/etc/passwd.parquet",
        "tasks/\x00part-0.parquet",
        "tasks//part-0.parquet",
        "tasks/part-0.csv",
    ],
)
def test_a_manifest_entry_outside_the_release_is_refused(path: str):
    from pydantic import ValidationError

    from coworkenv.data.layout import FileEntry

    with pytest.raises(ValidationError, match="is not a Parquet file inside the release"):
        FileEntry(path=path, rows=1, bytes=1, sha256="0" * 64)
    assert FileEntry(path="tasks/family=mail_triage/part-0.parquet", rows=1, bytes=1, sha256="0" * 64).rows == 1
