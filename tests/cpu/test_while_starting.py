"""A graph compiled for the cpu backend while numba is still starting (`backend/cpu/
while_starting.py`): its first call runs the graph's NumPy code and waits for nothing, the
next call makes the kernels, and the report shows each code when it runs. numba's start is
made to look unfinished here (it is over before any test: tests/conftest.py); the real start,
in a fresh process, is in test_native_loops.py's disk-cache test."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tcompile as tc

pytest.importorskip("numba", reason="the cpu backend needs numba")

from tcompile.backend import cpu  # noqa: E402 - after the skip
from tcompile.backend.cpu import numba_start, while_starting  # noqa: E402
from tcompile.tracer.ir.compiled_graph import KernelInfo  # noqa: E402


@pytest.fixture
def starting(monkeypatch):
    """numba's start looks unfinished to graphs compiled from now on."""
    monkeypatch.setattr(numba_start, "ready", lambda: False)


def smooth(v):
    out = v.copy()
    for i in range(1, v.shape[0] - 1):
        out[i] = (v[i - 1] + v[i] + v[i + 1]) / 3
    return out


def norm(a, b):
    return np.sqrt(a * a + b * b) * 2.0


def report(compiled):
    return compiled.__tc_compiled__.entries[-1].report


def kernels(rep) -> list:
    return [d for d in rep.compiled.details if isinstance(d, KernelInfo)]


def test_a_loop_graph_runs_its_numpy_code_first_and_its_native_loop_from_the_second_call(
    starting, loops
):
    v = np.random.default_rng(0).standard_normal(1000)
    compiled = tc.compile(smooth, backend="cpu")
    first = compiled(v)
    assert first.tobytes() == smooth(v).tobytes()  # NumPy's own code, bit for bit
    rep = report(compiled)
    assert loops == [] and kernels(rep) == []
    assert while_starting.WAITING in rep.sources["backend"]
    second = compiled(v)
    np.testing.assert_allclose(second, smooth(v), rtol=1e-15)
    assert [loop.dispatcher is not None for loop in loops] == [True]
    assert [k.kind for k in kernels(rep)] == ["native loop"]
    assert "native loops" in rep.compiled.sources
    assert while_starting.WAITING not in rep.sources["backend"]
    compiled(v)
    assert len(loops) == 1  # made once


def test_a_loop_free_graph_makes_its_kernels_at_the_call_after_its_numpy_code(starting):
    a, b = np.random.default_rng(1).standard_normal((2, 50_000))
    compiled = tc.compile(norm, backend="cpu")
    want = norm(a, b).tobytes()
    # the first call takes the trace's results, the second runs the NumPy code
    assert [compiled(a, b).tobytes() for _ in range(2)] == [want, want]
    rep = report(compiled)
    assert kernels(rep) == [] and while_starting.WAITING in rep.sources["backend"]
    np.testing.assert_allclose(compiled(a, b), norm(a, b), rtol=1e-15)
    assert [k.kind for k in kernels(rep)] == ["pointwise"]
    assert "kernels" in rep.compiled.sources
    assert while_starting.WAITING not in rep.sources["backend"]


def test_kernels_that_cannot_be_made_leave_the_numpy_code_running_with_a_warning(
    starting, monkeypatch
):
    def broken(graph, example_inputs, eager):
        raise RuntimeError("no machine code today")

    monkeypatch.setattr(cpu, "_compiled", broken)
    v = np.arange(50.0) ** 2
    compiled = tc.compile(smooth, backend="cpu")
    compiled(v)
    with pytest.warns(RuntimeWarning, match="could not make a graph's kernels .*no machine code"):
        second = compiled(v)
    third = compiled(v)  # no second warning, nor a second try
    assert second.tobytes() == third.tobytes() == smooth(v).tobytes()
    assert "not made (RuntimeError: no machine code today)" in report(compiled).sources["backend"]


def test_two_threads_making_the_second_call_at_once_make_the_kernels_once(starting, monkeypatch):
    made = []
    real = cpu._compiled

    def counting(*args):
        made.append(threading.get_ident())
        return real(*args)

    monkeypatch.setattr(cpu, "_compiled", counting)
    v = np.random.default_rng(2).standard_normal(500)
    compiled = tc.compile(smooth, backend="cpu")
    compiled(v)
    results, go = [], threading.Barrier(2)

    def call():
        go.wait()
        results.append(compiled(v))

    threads = [threading.Thread(target=call) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 1 and len(results) == 2
    for result in results:
        np.testing.assert_allclose(result, smooth(v), rtol=1e-15)
