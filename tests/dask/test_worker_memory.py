"""A Dask worker drops LLVM's pages once its chunk kernels are built (`worker_memory`): they
leave its resident memory, and LLVM still works after (a new kernel compiles and runs right);
a process that is not a worker keeps them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

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


def test_a_task_never_imports_from_numba_while_another_thread_imports_it():
    # a worker's other thread importing numba for its first cpu kernel: importing from numba
    # then deadlocked with that import, or left it a half-made module (found by a fuzz run)
    script = textwrap.dedent("""
        import threading
        from tcompile.backend.dask import worker_memory
        errors = []
        def first_kernel():
            try:
                import numba
                assert numba.njit(lambda a: a + 1)(1) == 2
            except Exception as error:
                errors.append(repr(error))
        thread = threading.Thread(target=first_kernel)
        thread.start()
        while thread.is_alive():
            worker_memory._llvm_ran()
        thread.join()
        print(errors)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


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
