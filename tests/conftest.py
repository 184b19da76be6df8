"""Shared test setup: never reach a model hub; fixtures that several test folders use."""

from __future__ import annotations

import os

for _key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
    os.environ.setdefault(_key, "1")
