"""Claw-Eval tool names → CoworkEnv tools: an explicit table for the mail, calendar, contacts, helpdesk, knowledge-base
and web services (a few with an argument fixed: closing a ticket is `tickets_update` to `closed`), and a verb rule for
the services that become `records` collections (crm, inventory, finance, …)."""

from __future__ import annotations

from typing import Any

from coworkenv.workspace import TOOLS

TABLE: dict[str, str] = {
    "gmail_list_messages": "mail_search",
    "gmail_search_messages": "mail_search",
    "gmail_get_message": "mail_read",
    "gmail_send_message": "mail_send",
    "gmail_reply_message": "mail_reply",
    "gmail_save_draft": "mail_draft",
    "gmail_create_draft": "mail_draft",
    "gmail_move_message": "mail_move",
    "gmail_delete_message": "mail_delete",
    "gmail_label_message": "mail_label",
    "gmail_mark_read": "mail_mark_read",
    "calendar_list_events": "calendar_list",
    "calendar_get_event": "calendar_list",
    "calendar_create_event": "calendar_create",
    "calendar_update_event": "calendar_update",
    "calendar_delete_event": "calendar_delete",
    "contacts_search": "contacts_search",
    "contacts_list": "contacts_search",
    "contacts_get": "contacts_get",
    "contacts_get_contact": "contacts_get",
    "helpdesk_list_tickets": "tickets_search",
    "helpdesk_search_tickets": "tickets_search",
    "helpdesk_get_ticket": "tickets_get",
    "helpdesk_update_ticket": "tickets_update",
    "helpdesk_create_ticket": "tickets_create",
    "helpdesk_tag_ticket": "tickets_tag",
    "kb_search": "docs_search",
    "kb_list_articles": "docs_search",
    "kb_get_article": "docs_read",
    "notes_list": "docs_search",
    "notes_search": "docs_search",
    "notes_get": "docs_read",
    "notes_create": "docs_create",
    "web_search": "web_search",
    "web_fetch": "web_fetch",
    "send_report": "mail_send",
    "kb_update_article": "docs_update",
    "kb_articles_update": "docs_update",
    "notes_update": "docs_update",
}
"""`send_report` (the injection tasks' exfiltration channel) sends text to a recipient: `mail_send` is that here."""

PINNED: dict[str, tuple[str, dict[str, Any]]] = {
    "helpdesk_close_ticket": ("tickets_update", {"status": "closed"}),
    "helpdesk_resolve_ticket": ("tickets_update", {"status": "resolved"}),
}
"""Tools that are one of ours with an argument fixed: a benchmark's "never close a ticket" stays a prohibition of
`tickets_update` with `status: closed` (and a check that counts closures counts those calls)."""

RECORD_SERVICES = ("crm", "inventory", "finance", "todo", "scheduler", "config", "rss", "orders", "hr")
"""Claw-Eval services with no CoworkEnv service of their own: each fixture file becomes a `records` collection."""

VERBS: dict[str, str] = {
    "list": "records_list",
    "query": "records_list",
    "search": "records_search",
    "find": "records_search",
    "get": "records_get",
    "read": "records_get",
    "view": "records_get",
    "create": "records_create",
    "add": "records_create",
    "place": "records_create",
    "submit": "records_create",
    "log": "records_create",
    "update": "records_update",
    "set": "records_update",
    "edit": "records_update",
    "mark": "records_update",
    "complete": "records_update",
    "delete": "records_delete",
    "remove": "records_delete",
    "cancel": "records_delete",
}


def _singular(word: str) -> str:
    return word[:-3] + "y" if word.endswith("ies") else word[:-1] if word.endswith("s") else word


def _collection(service: str, noun: str, collections: list[str]) -> str | None:
    """The service's collection the tool's noun names (`crm_get_customer` → `crm.customers`); with no noun
    (`todo_list`), the service's only one."""
    own = [c for c in collections if c.split(".", 1)[0] == service]
    if not noun:
        return own[0] if len(own) == 1 else None
    named = [c for c in own if _singular(c.split(".", 1)[1]) == _singular(noun)]
    return named[0] if named else None


def map_tool(name: str, collections: list[str]) -> tuple[str, dict[str, Any]] | None:
    """(CoworkEnv tool, the argument values that pin it down) or None: `crm_update_customer` →
    (`records_update`, {"collection": "crm.customers"}). None too where this build lacks the tool."""
    found = _map(name, collections)
    return found if found is not None and found[0] in TOOLS else None


def _map(name: str, collections: list[str]) -> tuple[str, dict[str, Any]] | None:
    if name in TABLE:
        return TABLE[name], {}
    if name in PINNED:
        tool, args = PINNED[name]
        return tool, dict(args)
    service, _, rest = name.partition("_")
    if service not in RECORD_SERVICES or not rest:
        return None
    verb, _, noun = rest.partition("_")
    target = VERBS.get(verb)
    if target is None:
        return None
    collection = _collection(service, noun, collections)
    return target, ({"collection": collection} if collection else {})
