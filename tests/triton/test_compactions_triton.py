"""Compaction kernels on the Triton backend (real kernels, under Triton's interpreter without
a GPU): the cases of ``tests/cpu/test_compactions.py``, each a count launch and a write launch
whose blocks place their selected values by a prefix sum."""

from __future__ import annotations

import os
import sys

import pytest
from requires_triton import require_triton

require_triton()
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cpu"))
from test_compactions import CASES, check_case  # noqa: E402 - the cases, written once


@pytest.mark.parametrize("name", list(CASES))
def test_a_selection_read_other_than_by_a_reduction_is_a_compaction_kernel_on_triton(name):
    check_case(name, "triton")


def test_its_blocks_place_their_values_by_a_prefix_sum():
    import tcompile as tc

    fn, calls = CASES["hypot_of_selected"]
    compiled = tc.compile(fn, backend="triton", fullgraph=True)
    compiled(*calls[0])
    kernel = compiled.__tc_compiled__.entries[-1].report.compiled.sources["kernels"]
    assert "if FILL:" in kernel and "tl.cumsum(" in kernel, kernel
