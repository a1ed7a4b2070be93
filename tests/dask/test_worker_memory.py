"""A Dask worker drops LLVM's pages once its chunk kernels are built (`worker_memory`): they
leave its resident memory, and LLVM still works after (a new kernel compiles and runs right);
a process that is not a worker keeps them."""

from __future__ import annotations

import os
import sys

import dask.array as da
import numpy as np
import pytest
from test_dask_arrays import column_sums, softmax_rows

import tcompile as tc
from tcompile.backend.dask import worker_memory

numba = pytest.importorskip("numba")
pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="Linux only")

MIB = 1 << 20
# chunks large enough for the cpu backend's kernels (smaller ones run NumPy's code: `tiers`)
WIDE = np.random.default_rng(3).standard_normal((240, 2048))


def _compile_and_run_a_new_function(offset: float) -> float:
    """LLVM at work: a numba function of its own, compiled and called."""
    source = f"def f(a):\n    return (a * 2.0 + {offset}).sum()\n"
    namespace: dict = {}
    exec(compile(source, f"<llvm check {offset}>", "exec"), namespace)
    return numba.njit(namespace["f"])(np.arange(10.0))


def test_released_pages_leave_resident_memory_and_llvm_still_works():
    _compile_and_run_a_new_function(1.0)
    before = worker_memory.compiler_resident_bytes()
    assert before > 10 * MIB  # compiling touched LLVM's code
    assert worker_memory.release_compiler_pages() > 0
    after = worker_memory.compiler_resident_bytes()
    assert after < before / 4
    assert _compile_and_run_a_new_function(3.0) == 120.0  # read back from the file as needed


def test_a_process_that_is_not_a_worker_keeps_them():
    _compile_and_run_a_new_function(5.0)
    before = worker_memory.compiler_resident_bytes()
    worker_memory.settle()
    assert worker_memory.compiler_resident_bytes() >= before


def _llvm_state() -> tuple[bool, float]:
    """A worker's: whether numba is loaded, and LLVM's resident MiB."""
    return "numba" in sys.modules, worker_memory.compiler_resident_bytes() / MIB


def test_workers_drop_them_after_building_kernels_and_results_stay_right(cluster_client):
    x = da.from_array(WIDE, chunks=((20,) * 12, (2048,)))
    for fn in (softmax_rows, column_sums):  # the second builds a kernel after the first dropped
        got = cluster_client.compute(tc.compile(fn, backend="cpu")(x), sync=True)
        np.testing.assert_allclose(got, fn(WIDE), rtol=1e-12, atol=1e-12)
        states = cluster_client.run(_llvm_state)
        assert any(loaded for loaded, _ in states.values()), states  # the kernels ran
        assert all(mib < 8 for _, mib in states.values()), states
