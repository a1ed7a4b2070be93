"""The launch-configuration tuner (backend/triton/autotune.py): every candidate gives NumPy's
results, a kernel that writes what it reads is measured without changing the result, and the
choice is remembered on disk."""

from __future__ import annotations

import json

import numpy as np
import pytest
from requires_triton import require_triton

require_triton()

import tcompile as tc  # noqa: E402
from tcompile.backend import source_files  # noqa: E402
from tcompile.backend.triton import autotune  # noqa: E402


@pytest.fixture
def tuning(monkeypatch):
    monkeypatch.setenv("TCOMPILE_AUTOTUNE", "1")  # the GPU's candidates, under the interpreter
    monkeypatch.setattr(autotune, "_CHOSEN", {})


def test_every_kind_of_kernel_has_candidates_that_fit():
    pointwise = autotune.candidates(
        10_000, 0, reduction=False, persistent=False, interpreting=False
    )
    rows = autotune.candidates(64, 300, reduction=True, persistent=True, interpreting=False)
    long_rows = autotune.candidates(
        8, 100_000, reduction=True, persistent=False, interpreting=False
    )
    assert len(pointwise) > 1 and all(c.RBLOCK is None for c in pointwise)
    assert all(c.RBLOCK == 512 and c.XBLOCK * c.RBLOCK <= 16384 for c in rows)
    assert {c.RBLOCK for c in long_rows} == {512, 2048}


def test_tuning_an_in_place_update_keeps_numpys_result(tuning):
    def bump(x, y):
        x += y * 2
        return x.sum(axis=1)

    x, y = np.arange(2048.0).reshape(2, 1024), np.ones(1024)
    expected_x = x + y * 2
    got = tc.compile(bump, backend="triton")(x, y)
    assert np.allclose(x, expected_x) and np.allclose(got, expected_x.sum(axis=1))
    chosen = json.loads((source_files.cache_dir("triton") / "autotune.json").read_text())
    assert len(chosen) >= 1 and all("XBLOCK" in c for c in chosen.values())
