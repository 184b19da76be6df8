"""`train.checkpoint.bf16_pays`: bfloat16 autocast only on a CPU that has the instructions and measurably gains from
them (some that report AVX512-BF16 run it slower than float32)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from coworkenv.train import checkpoint


def test_the_probe_measures_a_ratio():
    ratio = checkpoint.bf16_speed_ratio(tokens=64, repeats=2)
    assert math.isfinite(ratio) and ratio > 0


@pytest.mark.parametrize(
    ("flags", "ratio", "pays"),
    [
        ("fpu avx2", 0.5, False),  # no native bfloat16: emulated, never used (and not measured)
        ("fpu avx512f avx512_bf16", 1.6, False),  # the instructions, yet slower than float32
        ("fpu avx512f avx512_bf16", 0.6, True),
        ("fpu amx_bf16", 0.9, True),
    ],
)
def test_bf16_is_used_where_the_cpu_has_it_and_the_probe_shows_a_gain(monkeypatch, flags, ratio, pays):
    import torch

    measured = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(Path, "read_text", lambda self, **kw: flags if str(self) == "/proc/cpuinfo" else "")
    monkeypatch.setattr(checkpoint, "bf16_speed_ratio", lambda: measured.append(1) or ratio)
    assert checkpoint.bf16_pays.__wrapped__() is pays
    assert measured == ([1] if "bf16" in flags else [])
