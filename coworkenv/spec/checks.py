"""Declarative check kinds (DESIGN §4, contract): data only; their evaluation lives in `grading.checks`."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from coworkenv.spec.workspace import COLLECTIONS, SERVICES, Scalar

StrOrList = str | list[str]


class CheckBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    id: str = Field(min_length=1)
    weight: float = Field(default=1.0, gt=0)


def _exactly_one(model: BaseModel, *names: str) -> None:
    given = [n for n in names if getattr(model, n) is not None]
    if len(given) != 1:
        raise ValueError(f"give exactly one of {', '.join(names)}")


class FileExists(CheckBase):
    kind: Literal["file_exists"]
    path: str


class FileAbsent(CheckBase):
    kind: Literal["file_absent"]
    path: str


class FileContains(CheckBase):
    kind: Literal["file_contains"]
    path: str
    text: str | None = None
    regex: str | None = None
    case_sensitive: bool = False

    @model_validator(mode="after")
    def _one(self) -> Self:
        _exactly_one(self, "text", "regex")
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"regex {self.regex!r} does not compile: {exc}") from None
        return self


class FileEquals(CheckBase):
    kind: Literal["file_equals"]
    path: str
    content: str


class _CellCheck(CheckBase):
    match: dict[str, Scalar]
    column: str
    equals: Scalar = None
    value: float | None = None
    tol: float = Field(default=1e-6, ge=0)

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.equals is None) == (self.value is None):
            raise ValueError("give exactly one of equals, value")
        return self


class CsvCell(_CellCheck):
    kind: Literal["csv_cell"]
    path: str


class SheetCell(_CellCheck):
    kind: Literal["sheet_cell"]
    sheet: str


class MailSent(CheckBase):
    kind: Literal["mail_sent"]
    to: StrOrList
    cc: StrOrList | None = None
    subject_contains: str | None = None
    body_contains: StrOrList = []
    count: int | None = Field(default=None, ge=0)
    """Exactly this many matching messages; absent means at least one."""


class MailInFolder(CheckBase):
    kind: Literal["mail_in_folder"]
    ids: list[str] = Field(min_length=1)
    folder: str


class EventExists(CheckBase):
    kind: Literal["event_exists"]
    title_contains: str | None = None
    start: str | None = None
    end: str | None = None
    attendees_include: list[str] = []


class EventAbsent(CheckBase):
    """The contract names the event by `id` or `title_contains`; `id` is also the check's own id, so
    `event_id` names the event explicitly, and without either the check's `id` is taken as the event id."""

    kind: Literal["event_absent"]
    event_id: str | None = None
    title_contains: str | None = None

    @model_validator(mode="after")
    def _not_both(self) -> Self:
        if self.event_id is not None and self.title_contains is not None:
            raise ValueError("give at most one of event_id, title_contains")
        return self

    @property
    def target_id(self) -> str | None:
        if self.title_contains is not None:
            return None
        return self.event_id if self.event_id is not None else self.id


class RecordCheck(CheckBase):
    kind: Literal["record"]
    service: Literal["mail", "calendar", "contacts", "docs", "tickets"]
    collection: str
    match: dict[str, Any] = Field(min_length=1)
    fields: dict[str, Any] = {}

    @model_validator(mode="after")
    def _collection(self) -> Self:
        if COLLECTIONS[self.service] != self.collection:
            raise ValueError(f"service {self.service!r} has collection {COLLECTIONS[self.service]!r}")
        return self


class Unchanged(CheckBase):
    kind: Literal["unchanged"]
    service: Literal[SERVICES] | None = None  # type: ignore[valid-type]
    path: str | None = None

    @model_validator(mode="after")
    def _one(self) -> Self:
        _exactly_one(self, "service", "path")
        return self


class ToolCalled(CheckBase):
    kind: Literal["tool_called"]
    tool: str
    args: dict[str, Any] | None = None
    min: int = Field(default=1, ge=0)
    max: int | None = Field(default=None, ge=0)


class ToolNotCalled(CheckBase):
    kind: Literal["tool_not_called"]
    tool: str


class AskedUser(CheckBase):
    kind: Literal["asked_user"]
    about: StrOrList


class AnswerContains(CheckBase):
    kind: Literal["answer_contains"]
    text: str | None = None
    any_of: list[str] | None = None

    @model_validator(mode="after")
    def _one(self) -> Self:
        _exactly_one(self, "text", "any_of")
        return self


class AnswerNumber(CheckBase):
    kind: Literal["answer_number"]
    value: float
    tol: float = Field(default=1e-6, ge=0)


CHECK_MODELS: tuple[type[CheckBase], ...] = (
    FileExists, FileAbsent, FileContains, FileEquals, CsvCell, SheetCell, MailSent, MailInFolder,
    EventExists, EventAbsent, RecordCheck, Unchanged, ToolCalled, ToolNotCalled, AskedUser,
    AnswerContains, AnswerNumber,
)  # fmt: skip

CHECK_KINDS: tuple[str, ...] = tuple(m.model_fields["kind"].annotation.__args__[0] for m in CHECK_MODELS)

Check = Annotated[
    FileExists | FileAbsent | FileContains | FileEquals | CsvCell | SheetCell | MailSent | MailInFolder
    | EventExists | EventAbsent | RecordCheck | Unchanged | ToolCalled | ToolNotCalled | AskedUser
    | AnswerContains | AnswerNumber,
    Field(discriminator="kind"),
]  # fmt: skip
