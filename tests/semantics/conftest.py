"""Every behaviour test starts and ends with a fresh compiler (no cache, counter or log left)."""

from __future__ import annotations

import pytest

import tcompile as tc


@pytest.fixture(autouse=True)
def fresh_compiler_around_each_semantics_test():
    tc.reset()
    yield
    tc.reset()
