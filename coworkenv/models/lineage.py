"""Where a checkpoint comes from, read from the files its maker left in it: `training.json` (a training job: the job,
its config, the release, the base model, the code version) or `coworkenv_model.json` (the card of the tiny model, or of
a base imported from a GGUF file: its provenance); a transformers folder with neither is `external`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from coworkenv.errors import CoworkEnvError, format_validation_error
from coworkenv.fileio import read_json
from coworkenv.models.entry import TRAINING_JOBS, Job
from coworkenv.models.verify import verify_model_dir
from coworkenv.train.checkpoint import TRAINING_FILE
from coworkenv.train.gguf import is_import_card, lineage_config
from coworkenv.train.tiny import CARD


class Lineage(BaseModel):
    """What a checkpoint says about how it was made."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    job: Job
    base_model: str | None = Field(None, description="The folder the job started from.")
    training_release: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    code_version: str | None = None


def check_checkpoint(path: Path) -> None:
    """A folder the registry may take in: its files make the model its config describes (`models.verify`)."""
    if not path.is_dir():
        raise CoworkEnvError(f"{path}: no such checkpoint folder")
    verify_model_dir(path)


def _object(path: Path) -> dict[str, Any]:
    data = read_json(path)
    if not isinstance(data, dict):
        raise CoworkEnvError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def _job(record: dict[str, Any], where: Path) -> Job:
    """The record's job; an RL record may name its method (`grpo`, `gdpo`) rather than the job."""
    config = record.get("config") if isinstance(record.get("config"), dict) else {}
    for value in (record.get("job"), record.get("method"), config.get("method")):
        if value in TRAINING_JOBS:
            return value
    raise CoworkEnvError(f"{where}: job {record.get('job')!r} is not a training job ({', '.join(TRAINING_JOBS)})")


def _text(record: dict[str, Any], key: str, where: Path) -> str | None:
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        raise CoworkEnvError(f"{where}: {key} is {type(value).__name__}, not text")
    return value


def read_lineage(checkpoint: Path) -> Lineage:
    training, card = checkpoint / TRAINING_FILE, checkpoint / CARD
    if training.exists():
        record = _object(training)
        config = record.get("config", {})
        if not isinstance(config, dict):
            raise CoworkEnvError(f"{training}: config is {type(config).__name__}, not an object")
        return Lineage(
            job=_job(record, training),
            base_model=_text(record, "base_model", training),
            training_release=_text(record, "release_id", training),
            config=config,
            code_version=_text(record, "code_version", training),
        )
    if card.exists():
        record = _object(card)
        if is_import_card(record):
            try:
                return Lineage(job="import", config=lineage_config(record))
            except ValidationError as exc:
                raise CoworkEnvError(
                    format_validation_error(exc, f"{card}: not a valid card of an imported model")
                ) from None
        config = record.get("config")
        return Lineage(job="tiny", config=config if isinstance(config, dict) else {})
    return Lineage(job="external")
