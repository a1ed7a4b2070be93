"""A counted loop recorded as a CUDA graph (`backend/triton/loop_graphs.py`): what may be
recorded (here and on the GPU), and on a GPU that replays give NumPy's results call after call
(new values, in-place writes, other trip counts and host values, an index error found by a
kernel), while loops and shared memory never recorded."""

from __future__ import annotations

import numpy as np
import pytest
from requires_triton import require_triton

torch = require_triton()

import tcompile as tc  # noqa: E402
from tcompile.backend.triton import device as dev  # noqa: E402
from tcompile.backend.triton import loop_graphs  # noqa: E402

needs_cuda = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (CUDA graphs)"
)
rng = np.random.default_rng(0)


# -- what the host decides a recording by (any device) ------------------------------------------
def test_the_key_holds_host_values_and_array_layouts():
    a, b = torch.zeros(4, 3), torch.zeros(5)
    key = loop_graphs._key([0, 20, a, b, 0.5, np.float32(2)])
    assert key == loop_graphs._key([0, 20, torch.ones(4, 3), torch.ones(5), 0.5, np.float32(2)])
    assert key != loop_graphs._key([0, 21, a, b, 0.5, np.float32(2)])  # another trip count
    assert key != loop_graphs._key([0, 20, a, b, 0.25, np.float32(2)])  # another host value
    assert key != loop_graphs._key([0, 20, a.T, b, 0.5, np.float32(2)])  # another layout


def test_arrays_that_share_memory_or_unknown_arguments_are_never_recorded():
    a = torch.zeros(10)
    assert loop_graphs._key([0, 5, a[:5], a[5:]]) is None  # the graph's copies would not share
    assert loop_graphs._key([0, 5, a, [1, 2]]) is None


def test_nothing_is_recorded_off_a_cuda_device():
    def steps(u, n):
        for _ in range(n):
            u = u * 0.5 + 1.0
        return u

    f = tc.compile(steps, backend="triton")
    for _ in range(3):
        f(np.ones(8), 4)
    programs = _programs(f)
    if dev.current_device().kind != "cuda":
        assert programs and not any(g.recordings for p in programs for g in p.loop_runners.values())


# -- on a GPU --------------------------------------------------------------------------------------
def jacobi(u, steps):
    for _ in range(steps):
        u[1:-1] = 0.5 * u[1:-1] + 0.25 * (u[:-2] + u[2:])
    return u


def heat(u, c, steps):
    for _ in range(steps):
        v = u.copy()
        v[1:-1] = u[1:-1] + c * (u[:-2] - 2 * u[1:-1] + u[2:])
        u = v
    return u


def gather_steps(x, idx, steps):
    for _ in range(steps):
        x = x[idx] * 0.5 + 1.0
    return x


def halve_until(x, tol):
    while x.max() > tol:
        x = x * 0.5
    return x


def _programs(f) -> list:
    entries = f.__tc_compiled__.entries
    runners = [e.report.compiled.fn for e in entries if e.report.compiled is not None]
    return [p for r in runners for p in getattr(r, "programs", {}).values() if p is not None]


def _recordings(f) -> int:
    return sum(len(g.recordings) for p in _programs(f) for g in p.loop_runners.values())


@needs_cuda
def test_replays_follow_new_values_and_write_in_place():
    # the first call runs the trace's own example run; the next one, the plain loop; then one
    # records and replays, and the rest replay
    f = tc.compile(jacobi, backend="triton")
    for _ in range(6):
        u = rng.random(1000)
        want = jacobi(u.copy(), 30)
        got = f(u, 30)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(u, want, rtol=1e-12)  # the caller's array, written in place
    assert _recordings(f) == 1


@needs_cuda
def test_other_trip_counts_and_host_values_are_other_recordings():
    # new values of c and steps recompile first (new entries, each with its own programs), so
    # not every key comes to be recorded; each call is checked either way
    f = tc.compile(heat, backend="triton")
    for c, steps in [(0.1, 10)] * 3 + [(0.2, 10)] * 3 + [(0.1, 12)] * 3 + [(0.1, 10)] * 2:
        u = rng.random(257)
        np.testing.assert_allclose(f(u, c, steps), heat(u, c, steps), rtol=1e-12)
    assert _recordings(f) >= 1


@needs_cuda
def test_an_index_error_a_kernel_finds_in_a_replay_is_numpys():
    f = tc.compile(gather_steps, backend="triton")
    idx = np.arange(64)[::-1].copy()
    for _ in range(5):
        x = rng.random(64)
        np.testing.assert_allclose(f(x, idx, 5), gather_steps(x, idx, 5), rtol=1e-12)
    assert _recordings(f) == 1
    bad = idx.copy()
    bad[3] = 64
    with pytest.raises(IndexError):
        gather_steps(rng.random(64), bad, 5)
    with pytest.raises(IndexError):
        f(rng.random(64), bad, 5)


@needs_cuda
def test_while_loops_are_never_recorded():
    f = tc.compile(halve_until, backend="triton")
    for scale in (10.0, 1000.0, 10.0, 1e6):
        x = rng.random(100) * scale
        np.testing.assert_allclose(f(x, 0.5), halve_until(x, 0.5), rtol=1e-12)
    assert _recordings(f) == 0


@needs_cuda
def test_turned_off_by_the_environment(monkeypatch):
    monkeypatch.setenv("TCOMPILE_CUDA_GRAPHS", "0")
    f = tc.compile(jacobi, backend="triton")
    for _ in range(4):
        u = rng.random(100)
        want = jacobi(u.copy(), 5)
        np.testing.assert_allclose(f(u, 5), want, rtol=1e-12)
    assert _recordings(f) == 0
