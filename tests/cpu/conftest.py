"""The ``loops`` fixture: the native loops the cpu backend makes in a test."""

from __future__ import annotations

import pytest


@pytest.fixture
def loops(monkeypatch, tmp_path) -> list:
    """The `NativeLoop` s the cpu backend makes, in order (in a cache directory of the test's)."""
    native_loops = pytest.importorskip("tcompile.backend.cpu.native_loops", reason="needs numba")
    monkeypatch.setenv("TCOMPILE_CACHE_DIR", str(tmp_path))
    made = []
    real = native_loops.NativeLoop.__init__

    def recording(self, *args, **kwargs):
        real(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(native_loops.NativeLoop, "__init__", recording)
    return made
