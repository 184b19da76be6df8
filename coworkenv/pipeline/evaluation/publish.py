"""Stage publish: the gated tables as a release of kind `eval`, carrying the run's config and the checkpoint's
identity; LATEST keeps pointing at the newest task release."""

from __future__ import annotations

import logging

from coworkenv.data.layout import Manifest
from coworkenv.pipeline.evaluation.run_files import model_identity, read_config, suite_info
from coworkenv.pipeline.rundir import RunDir

log = logging.getLogger(__name__)


def publish(run: RunDir) -> Manifest:
    """The gated tables as a release of kind `eval` (LATEST keeps pointing at the newest task release)."""
    from coworkenv.data.publisher import publish_release
    from coworkenv.pipeline.release_tables import published, require_passed, staged_table_files

    config = read_config(run)
    require_passed(run)
    parent = suite_info(run).get("release_id")
    manifest = publish_release(
        staged_table_files(run),
        data_root=run.data_root,
        run_id=run.run_id,
        parent=parent,
        config={**config.model_dump(mode="json"), **model_identity(run)},
        kind="eval",
    )
    log.info("%s", published(manifest, run))
    return manifest
