"""Stage publish: the staged tables as the run's release (atomic; the same run id always gives the same release), only
once they have passed the gates."""

from __future__ import annotations

from coworkenv.data.layout import Manifest
from coworkenv.data.publisher import publish_release
from coworkenv.data.reader import latest_release
from coworkenv.pipeline.build import staged_tables
from coworkenv.pipeline.gate import require_passed
from coworkenv.pipeline.rundir import RunDir


def publish(run: RunDir) -> Manifest:
    config = run.config()
    require_passed(run)
    return publish_release(staged_tables(run), data_root=run.data_root, run_id=run.run_id, parent=latest_release(run.data_root),
                           config=config.model_dump(mode="json"))  # fmt: skip
