"""Stage publish: the staged tables as the run's release (atomic; the same run id always gives the same release)."""

from __future__ import annotations

from coworkenv.data.layout import Manifest
from coworkenv.data.publisher import publish_release
from coworkenv.data.reader import latest_release
from coworkenv.pipeline.build import staged_tables
from coworkenv.pipeline.rundir import RunDir


def publish(run: RunDir) -> Manifest:
    config = run.config()
    return publish_release(staged_tables(run), data_root=run.data_root, run_id=run.run_id, parent=latest_release(run.data_root),
                           config=config.model_dump(mode="json"))  # fmt: skip
