"""Stage publish: the staged tables as the run's release (atomic; the same run id always gives the same release), only
once they have passed the gates. The staged files are streamed into the release's files (`coworkenv.data.serialize`),
never read whole."""

from __future__ import annotations

import logging

from coworkenv.data.layout import Manifest
from coworkenv.data.publisher import publish_release
from coworkenv.data.reader import previous_in_line
from coworkenv.pipeline.release_tables import published, require_passed, staged_table_files
from coworkenv.pipeline.rundir import RunDir

log = logging.getLogger(__name__)


def publish(run: RunDir) -> Manifest:
    config = run.config()
    require_passed(run)
    manifest = publish_release(
        staged_table_files(run),
        data_root=run.data_root,
        run_id=run.run_id,
        parent=previous_in_line(run.data_root, config.lineage, run.run_id),
        config=config.model_dump(mode="json"),
    )
    log.info("%s", published(manifest, run))
    return manifest
