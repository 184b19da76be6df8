"""Building blocks of service state: the strict record base and the value types records are made of.

A service's state model (in `workspace/services/<service>.py`) is built from these; the runtime workspace holds
exactly the JSON dump of those models, as plain dicts.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from coworkenv.timeutil import parse_instant


def _iso_instant(value: str) -> str:
    parse_instant(value)  # raises ValueError with a clear message
    return value


Instant = Annotated[str, AfterValidator(_iso_instant)]
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Scalar = str | int | FiniteFloat | bool | None


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)


class Identity(Record):
    """Who the agent acts as: the sender of its mail, the author of its posts and comments."""

    name: str = "Me"
    email: str = "me@acme.test"
