"""The eight simulated services; importing this package registers every tool in `TOOLS`."""

from coworkenv.workspace.services import calendar, chat, contacts, docs, files, mail, sheets, tickets  # noqa: F401
