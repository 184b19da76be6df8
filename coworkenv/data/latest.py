"""Moving `LATEST` (docs/datasets.md, "Atomicity"): only to a complete task release, and never back to an older one.

"Newer" is the order `list_releases` gives: the manifest's `created_at` (set when the release's tables are written),
then the release id. A publisher moves `LATEST` to its release only if `LATEST` names none, an unreadable one, or an
older one; a publisher that finishes after a newer release took `LATEST` leaves it there.

- **Local filesystems**: the new `LATEST` is written to a claimed temporary (fsynced); then, under `releases/.lock`,
  `LATEST` is read, compared and the temporary renamed over it (or dropped). Two publishers compare-and-swap one
  after the other, so `LATEST` never goes back, not even for a moment.
- **Object stores** (`s3://`, `gs://`, `memory://`, any non-local fsspec filesystem) have no rename and no portable
  compare-and-swap on an existing object. A single-object put is atomic (a reader sees the old or the new `LATEST`,
  never a mix) and the first `LATEST` is created with a create-only write (`mode="create"`: `If-None-Match: *` on
  S3), so two first publishers cannot both create it. Moving an existing `LATEST` is read, compare, write, then
  verify: the publisher lists the complete task releases and, if one newer than what it wrote is there, writes that
  one instead, and repeats until a read of `LATEST` names its release or a newer one. Two publishers racing between
  one's read and its write can leave an older id in `LATEST` for that moment, but the last writer's check sees the
  newer complete release (its manifest was written before its publisher touched `LATEST`, and reads and listings
  are strongly consistent on S3, GCS and Azure), so once every publisher has returned `LATEST` names the newest.
  It costs one listing and one manifest read per release, per publish that had to write.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import suppress
from datetime import datetime

from coworkenv.data.claims import claim, registry_lock, tmp_name
from coworkenv.data.layout import LATEST_FILE, TASKS_KIND, Manifest
from coworkenv.data.reader import complete_manifest, latest_release, list_releases
from coworkenv.data.root import RELEASES_DIR, DataRoot
from coworkenv.errors import CoworkEnvError
from coworkenv.fileio import fsync_dir

ROUNDS = 50
"""Write-and-verify rounds on object stores before giving up (each round is another publisher's newer write)."""


def _order(manifest: Manifest) -> tuple[datetime, str]:
    """The order of `list_releases`: oldest first."""
    return (manifest.created_at, manifest.release_id)


def _current(root: DataRoot) -> tuple[str | None, Manifest | None]:
    """What `LATEST` names and that release's manifest (None where there is none, or it or LATEST is unreadable:
    a damaged pointer is replaced rather than blocking every later publish)."""
    try:
        current = latest_release(root)
        return current, complete_manifest(root, current) if current else None
    except CoworkEnvError:
        return None, None


def _behind(current: Manifest | None, manifest: Manifest) -> bool:
    """Whether `LATEST` (its release's manifest `current`) should move to `manifest`'s release."""
    return current is None or (current.release_id != manifest.release_id and _order(current) < _order(manifest))


def advance_latest(root: DataRoot, manifest: Manifest, checkpoint: Callable[[str], None]) -> str | None:
    """Point `LATEST` at `manifest`'s (complete, task) release unless it names a newer one; what `LATEST` names after.

    `checkpoint` is the publisher's fault hook (stages `latest_temp_written` locally, `latest_checked` elsewhere)."""
    if manifest.kind != TASKS_KIND:
        raise CoworkEnvError(
            f"release {manifest.release_id} is a {manifest.kind} release: only task releases move {LATEST_FILE}"
        )
    if root.local:
        return _advance_local(root, manifest, checkpoint)
    return _advance_remote(root, manifest, checkpoint)


def _advance_local(root: DataRoot, manifest: Manifest, checkpoint: Callable[[str], None]) -> str | None:
    target = root.join(RELEASES_DIR, LATEST_FILE)
    tmp = root.join(RELEASES_DIR, tmp_name(LATEST_FILE))
    fd = claim(root, tmp, directory=False)
    try:
        os.write(fd, f"{manifest.release_id}\n".encode())
        os.fsync(fd)
        checkpoint("latest_temp_written")
        with registry_lock(root):
            current_id, current = _current(root)
            if not _behind(current, manifest):
                os.unlink(tmp)
                return current_id
            os.replace(tmp, target)
            fsync_dir(root.releases)
            return manifest.release_id
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    finally:
        os.close(fd)


def _newest_task_release(root: DataRoot) -> Manifest | None:
    tasks = [m for m in list_releases(root) if m.kind == TASKS_KIND]
    return max(tasks, key=_order) if tasks else None


def _advance_remote(root: DataRoot, manifest: Manifest, checkpoint: Callable[[str], None]) -> str | None:
    path = root.join(RELEASES_DIR, LATEST_FILE)
    wanted = manifest
    for _ in range(ROUNDS):
        current_id, current = _current(root)
        if not _behind(current, wanted):
            return current_id
        # No LATEST when read: create-only, so of two first publishers one wins and the other compares again.
        create = current_id is None and not root.fs.exists(path)
        checkpoint("latest_checked")
        try:
            root.fs.pipe_file(path, f"{wanted.release_id}\n".encode(), **({"mode": "create"} if create else {}))
        except FileExistsError:
            continue
        # Verify: a newer complete release may have taken LATEST between our read and our write; it wins.
        newest = _newest_task_release(root)
        if newest is not None and _order(newest) > _order(wanted):
            wanted = newest
    raise CoworkEnvError(
        f"{root.url_of(path)} kept changing under {ROUNDS} rounds of write-and-verify; release {manifest.release_id} is "
        "complete: publish the run again to move LATEST"
    )
