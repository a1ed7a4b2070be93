"""Loop nodes on the triton backend: a loop's body is a program of its own, its kernels compiled
once and launched per iteration, its carried arrays kept on the device (`DeviceLoop`). Results
match NumPy's within a few ULP; where the results' identity would differ (a body giving back its
inputs), the graph runs in NumPy as a whole, exactly. (The whole differential corpus, loops
included, runs on this backend in test_corpus_triton.py.)"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from requires_triton import require_triton

require_triton()

import tcompile as tc  # noqa: E402
from tcompile.backend.fused.plan import DeviceLoop  # noqa: E402
from tcompile.widgets import CellOptions, CellRun, CellSource  # noqa: E402
from tcompile.widgets.kernels_tab import kernels_html  # noqa: E402

# A kernel of the benchmark corpus (plain NumPy): the figures of bench/gpu_loops.py depend on it.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from loop_kernels import histogram_add_at  # noqa: E402

rng = np.random.default_rng(0)


def jacobi(u, steps):
    for _ in range(steps):
        u[1:-1] = 0.5 * u[1:-1] + 0.25 * (u[:-2] + u[2:])
    return u


def heat(u, c):
    for _ in range(30):
        v = u.copy()
        v[1:-1] = u[1:-1] + c * (u[:-2] - 2 * u[1:-1] + u[2:])
        u = v
    return u


def relax(x, tol):
    change = 1.0
    while change > tol:
        y = (
            0.25 * np.concatenate([x[:1], x[:-1]])
            + 0.5 * x
            + 0.25 * np.concatenate([x[1:], x[-1:]])
        )
        change = np.abs(y - x).max()
        x = y
    return x


def counted_sweeps(f, tol):
    u = np.zeros_like(f)
    change, sweeps = np.inf, 0
    while change > tol:
        v = u.copy()
        v[1:-1] = 0.5 * (u[:-2] + u[2:]) + f[1:-1]
        change = np.max(np.abs(v - u))
        u = v
        sweeps += 1  # an int counter: carried by the loop, a host value on the device
    return u, sweeps


def row_sums(m):
    acc = np.zeros(m.shape[1])
    for i, row in enumerate(m):
        acc = acc * 0.5 + row * i
    return acc


def inplace_body(a):
    for _ in range(4):
        a += 1
    return a


def plan_of(compiled) -> str:
    return compiled.__tc_compiled__.entries[-1].report.compiled.sources["plan"]


def device_loops(compiled) -> list:
    runner = compiled.__tc_compiled__.entries[-1].report.compiled.fn
    return [s for p in runner.programs.values() if p for s in p.steps if isinstance(s, DeviceLoop)]


@pytest.mark.parametrize(
    ("fn", "make"),
    [
        (jacobi, lambda: (rng.standard_normal(64), 25)),
        (heat, lambda: (rng.standard_normal(40), 0.2)),
        (relax, lambda: (rng.standard_normal(32), 1e-4)),
        (row_sums, lambda: (rng.standard_normal((7, 5)),)),
        (histogram_add_at, lambda: (rng.random((6, 40)), 8)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_loop_runs_as_a_device_loop(fn, make):
    args = make()
    compiled = tc.compile(fn, backend="triton", fullgraph=True)
    got = compiled(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    expected = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert len(device_loops(compiled)) == 1, plan_of(compiled)
    assert "launched per iteration on the device" in plan_of(compiled)


def test_a_while_loop_counting_its_sweeps_is_a_device_loop():
    f = np.linspace(0.0, 1.0, 12) * 0.01
    compiled = tc.compile(counted_sweeps, backend="triton", fullgraph=True)
    (u, sweeps), (want_u, want_sweeps) = compiled(f, 1e-8), counted_sweeps(f, 1e-8)
    assert type(sweeps) is int and sweeps == want_sweeps
    np.testing.assert_allclose(u, want_u, rtol=1e-12, atol=1e-15)
    assert len(device_loops(compiled)) == 1, plan_of(compiled)


def scatter_steps(hist, idx, w, steps):
    for _ in range(steps):
        np.add.at(hist, idx, w)
        w = 0.5 * w
    return w


def test_an_index_out_of_range_in_a_body_raises_numpys_error_after_the_loop():
    # the body's kernels share the loop call's error flag, checked once after the loop: the
    # call fails, the caller's array is untouched, and the eager rerun raises NumPy's error
    compiled = tc.compile(scatter_steps, backend="triton")
    hist, want = np.zeros(4), np.zeros(4)
    compiled(hist, np.array([0, 3, 3]), np.ones(3), 5)
    scatter_steps(want, np.array([0, 3, 3]), np.ones(3), 5)
    np.testing.assert_allclose(hist, want, rtol=1e-12)
    bad, bad_want = hist.copy(), hist.copy()
    with pytest.raises(IndexError, match="out of bounds") as raised:
        scatter_steps(bad_want, np.array([0, 4]), np.ones(2), 5)
    with pytest.raises(IndexError, match="out of bounds") as got:
        compiled(bad, np.array([0, 4]), np.ones(2), 5)
    assert str(got.value) == str(raised.value)
    np.testing.assert_array_equal(bad, bad_want)


def test_np_add_at_in_a_body_is_a_scatter_kernel():
    compiled = tc.compile(histogram_add_at, backend="triton", fullgraph=True)
    samples = rng.random((5, 30))
    np.testing.assert_allclose(compiled(samples, 4), histogram_add_at(samples, 4), rtol=1e-12)
    (loop,) = device_loops(compiled)
    runner = compiled.__tc_compiled__.entries[-1].report.compiled.fn
    body = next(p for p in runner.programs.values() if p).bodies[id(loop)]
    (program,) = [p for p in body.programs.values() if p]
    sources = [c.source.text for c in program.compiled.values()]
    assert any("tl.atomic_add" in text for text in sources), sources
    # (the row the index selects is still a host step: its offset is only known per iteration)
    assert not [
        e
        for e in program.plan.externs
        if e.node.target is not None and getattr(e.node.target, "__name__", "") == "at"
    ], program.plan


def test_the_report_lists_the_loop_and_its_body():
    compiled = tc.compile(heat, backend="triton")
    compiled(rng.standard_normal(40), 0.2)
    details = compiled.__tc_compiled__.entries[-1].report.compiled.details
    (loop,) = [d for d in details if getattr(d, "kind", "") == "loop"]
    assert (
        loop.name.startswith("loop heat_graph_loop")
        and "np.copy" in loop.source
        or "copy" in loop.source
    )
    assert "launch once per iteration" in loop.notes[0]
    body = loop.parts()  # made at the loop's first run, which the call above was
    assert body and {k.kind for k in body} == {"pointwise"}, body
    assert any("v[1:-1] = u[1:-1]" in line for k in body for line in k.lines)
    page = kernels_html(CellRun(CellSource("x\n", 1, "<c>", "c"), CellOptions(backend="triton"),
                                [compiled.__tc_compiled__.entries[-1].report], seconds=0.1))  # fmt: skip
    assert "Its body's kernels:" in page and f"<code>{body[0].name}</code>" in page
    from tcompile.widgets.kernels_tab import kernel_counts

    assert "1 loop" in kernel_counts(compiled.__tc_compiled__.entries[-1].report.compiled)


def test_the_body_is_compiled_once_for_every_trip_count():
    compiled = tc.compile(jacobi, backend="triton")
    for steps in (5, 9, 17, 3):  # the count becomes a graph input after the second value
        u = rng.standard_normal(50)
        np.testing.assert_allclose(compiled(u.copy(), steps), jacobi(u.copy(), steps), rtol=1e-12)
    (loop,) = device_loops(compiled)
    runner = compiled.__tc_compiled__.entries[-1].report.compiled.fn
    body = next(p for p in runner.programs.values() if p).bodies[id(loop)]
    assert len(body.programs) <= 2  # the first iteration's input layout, then the body's own
    assert tc.counters()["recompiles"] == 1


def test_a_loop_writing_device_arrays_in_place():
    torch = require_triton()
    compiled = tc.compile(jacobi, backend="triton")
    u = rng.standard_normal(40)
    expected = jacobi(u.copy(), 6)
    tensor = torch.tensor(u, device=compiled_device())
    assert compiled(tensor, 6) is tensor  # written in place, given back itself, as NumPy does
    np.testing.assert_allclose(tensor.cpu().numpy(), expected, rtol=1e-12)


def compiled_device() -> str:
    from tcompile.backend.triton import device

    return str(device.current_device().torch_device)


def test_a_body_giving_back_its_input_runs_in_numpy():
    compiled = tc.compile(inplace_body, backend="triton")
    a = np.ones(3)
    assert compiled(a) is a and np.array_equal(a, np.full(3, 5.0))
    runner = compiled.__tc_compiled__.entries[-1].report.compiled.fn
    assert any("gives back its inputs" in why for why in runner.in_numpy_because.values())


def stepped_rows(x, dt):
    t = 0.0
    n = 0
    acc = np.zeros(x.shape[1])
    for row in x:
        acc = acc + row * t
        t += dt
        n += 2
    return acc, t, n


def stepped_while(x):
    t = 0.0
    while (x > 1.0).any():
        x = x * 0.5
        t += 0.25
    return x, t


@pytest.mark.parametrize("fn, calls", [
    (stepped_rows, [(rng.random((4, 3)), 0.1), (rng.random((6, 3)), 0.1),
                    (rng.random((5, 3)), 0.3), (rng.random((4, 3)), 0.1)]),
    (stepped_while, [(rng.random(5) * 8,), (rng.random(5) * 64,), (rng.random(5) * 0.5,)]),
])  # fmt: skip
def test_numbers_carried_by_loops_over_several_trip_counts(fn, calls):
    """A Python float or int a loop carries, once a new row count makes the count symbolic
    (the loop then runs on the host, its numbers taken from its results as Python values)."""
    compiled = tc.compile(fn, backend="triton")
    for args in calls:
        want = fn(*(a.copy() if isinstance(a, np.ndarray) else a for a in args))
        got = compiled(*(a.copy() if isinstance(a, np.ndarray) else a for a in args))
        for g, w in zip(got, want):
            assert type(g) is type(w) and np.allclose(g, w, rtol=1e-12)
