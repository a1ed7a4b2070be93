"""Cond nodes on the Triton backend (real kernels, under Triton's interpreter without a GPU):
the cases of ``tests/cpu/test_fused_conds.py``, whose predicate is read on the host and whose
side taken runs as a program of Triton kernels of its own."""

from __future__ import annotations

import os
import sys

import pytest
from requires_triton import require_triton

require_triton()
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cpu"))
from test_fused_conds import CASES, check_case  # noqa: E402 - the cases, written once


@pytest.mark.parametrize("name", list(CASES))
def test_a_cond_runs_the_side_its_predicate_picks_on_triton(name):
    check_case(name, "triton")
