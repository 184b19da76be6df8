"""The simulated services, one module each; importing this package registers every service and its tools.

A new service is a module here (state model, tools, `register_service(...)`) plus its name in `SERVICE_ORDER`,
which fixes the order of the workspace's fields and of the tool catalog.
"""

import importlib

SERVICE_ORDER = ("files", "mail", "calendar", "contacts", "sheets", "docs", "tickets", "chat", "records", "web")

for _name in SERVICE_ORDER:
    importlib.import_module(f"{__name__}.{_name}")
