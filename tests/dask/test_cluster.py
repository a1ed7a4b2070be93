"""Compiled functions on Dask arrays computed by a real `LocalCluster` of worker processes:
results equal plain Dask's, kernels are built once per worker (not per task), and a worker
killed in the middle of a computation is replaced, its tasks run again, the result still
right."""

from __future__ import annotations

import os
import signal
import time

import dask.array as da
import numpy as np
import pytest
from test_dask_arrays import (
    UNEVEN,
    A,
    column_sums,
    periodic_heat,
    shrinking_smoother,
    softmax_rows,
    transcendental_chain,
)

import tcompile as tc
from tcompile.backend.dask import chunk_kernels


def built_kernels() -> dict[str, int]:
    """What this worker process has built: kernel key -> id of the compiled region."""
    return {key: id(built) for key, built in chunk_kernels._BUILT.items()}


def forget_built_kernels() -> None:
    chunk_kernels._BUILT.clear()


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_results_on_worker_processes_equal_plain_dask(cluster_client, backend):
    if backend == "cpu":
        pytest.importorskip("numba")
    x, y = da.from_array(A, chunks=UNEVEN), da.from_array(A[::-1].copy(), chunks=UNEVEN)
    cases = [(softmax_rows, (x,)), (transcendental_chain, (x, y)), (column_sums, (x,)),
             (periodic_heat, (x, 0.1)), (shrinking_smoother, (x,))]  # fmt: skip
    for fn, args in cases:
        got, plain = cluster_client.compute([tc.compile(fn, backend=backend)(*args), fn(*args)],
                                            sync=True)  # fmt: skip
        if backend == "eager":
            np.testing.assert_array_equal(got, plain, strict=True)
        else:
            np.testing.assert_allclose(got, plain, rtol=1e-6, atol=1e-12)


def test_kernels_are_built_once_per_worker(cluster_client):
    cluster_client.run(forget_built_kernels)
    compiled = tc.compile(softmax_rows)
    x = da.from_array(A, chunks=((20,) * 12, (90,)))  # 12 tasks for 2 workers
    cluster_client.compute(compiled(x), sync=True)
    first = cluster_client.run(built_kernels)
    for _ in range(2):
        cluster_client.compute(compiled(x), sync=True)
    (key,) = {k.key for k in _kernels(compiled, x)}
    assert any(first.values())
    assert cluster_client.run(built_kernels) == first  # the same objects: never built again
    assert all(list(built) in ([], [key]) for built in first.values())


def _kernels(compiled, x):
    report = tc.explain(softmax_rows)(x).reports[0]
    return [step.kernel for step in report.compiled.fn.steps if hasattr(step, "kernel")]


def test_a_worker_killed_mid_computation_is_replaced_and_the_result_is_right(cluster_client):
    pause = 0.15
    base = da.from_array(A, chunks=((10,) * 24, (90,)))
    # input chunks that take a while, so that the kill falls in the middle of the work
    slow = base.map_blocks(lambda b: (time.sleep(pause), b)[1], dtype=A.dtype)
    result = cluster_client.compute(tc.compile(transcendental_chain)(slow, slow))
    time.sleep(4 * pause)
    assert not result.done()
    pids = cluster_client.run(os.getpid)
    os.kill(next(iter(pids.values())), signal.SIGKILL)
    got = result.result(timeout=120)
    np.testing.assert_array_equal(got, transcendental_chain(A, A), strict=True)
