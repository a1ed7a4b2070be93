"""Every test starts and ends with a fresh compiler: no cache, counter or log left behind."""

from __future__ import annotations

import pytest

import tcompile as tc


@pytest.fixture(autouse=True)
def fresh_compiler_state():
    tc.reset()
    yield
    tc.reset()
