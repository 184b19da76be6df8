"""`mail_in_folder`: these messages are in this folder after the episode."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from coworkenv.checks.base import (
    DROP,
    CheckBase,
    CheckKind,
    Evidence,
    Fixing,
    Outcome,
    References,
    outcome,
    register_kind,
    unfixable,
)


class MailInFolder(CheckBase):
    kind: Literal["mail_in_folder"]
    ids: list[str] = Field(min_length=1)
    folder: str


def evaluate(check: MailInFolder, ev: Evidence) -> Outcome:
    folders = {m["id"]: m["folder"] for m in ev.final_state["mail"]["messages"]}
    wrong = [i for i in check.ids if folders.get(i) != check.folder]
    return outcome(not wrong, f"all in {check.folder!r}", f"not in {check.folder!r}: {', '.join(wrong)}")


def references(check: MailInFolder, refs: References) -> None:
    for mid in check.ids:
        if not refs.in_any_state(
            lambda s, mid=mid: any(m.get("id") == mid for m in s.get("mail", {}).get("messages", []))
        ):
            refs.miss(mid, "no such mail id, initially or after the oracle")


def recompute(check: dict[str, Any], ev: Evidence, spec: Any) -> Any:
    """The ids that still exist, and the one folder the oracle put them in."""
    folders = {m["id"]: m["folder"] for m in ev.final_state["mail"]["messages"]}
    ids = [i for i in check["ids"] if i in folders]
    if not ids:
        return DROP
    targets = {folders[i] for i in ids}
    return {**check, "ids": ids, "folder": targets.pop()} if len(targets) == 1 else None


def fix_reference(check: dict[str, Any], entry: dict[str, Any], fixing: Fixing) -> str | None:
    """An unknown id is removed; the check goes only when none is left."""
    ref = entry.get("ref")
    if not isinstance(ref, str) or "no such mail id" not in str(entry.get("problem", "")):
        return unfixable(entry)
    check["ids"] = [x for x in check["ids"] if x != ref]
    if not check["ids"]:
        return "none of its mail ids exists"
    fixing.note(f"check {check['id']}: removed unknown mail id {ref!r}")
    return None


KIND = register_kind(
    CheckKind(
        name="mail_in_folder",
        model=MailInFolder,
        evaluate=evaluate,
        references=references,
        recompute=recompute,
        fix_reference=fix_reference,
    )
)
