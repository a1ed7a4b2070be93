"""Random programs that branch on data behave exactly like eager (issue 23): cond nodes (``if``
/``else``, ``if`` alone, ``and`` tests, conditional expressions, asserts that pass and fail),
nested, inside loop nodes and around them, next to sizes from data (``x[m].sum()``,
``np.nonzero``) and masked stores.

A small grammar generates the body of

    def prog(x, y, n):                # x, y: float64 (8,); n: the trip count
        N = x.shape[0]
        acc = np.zeros_like(x); s = np.float64(0.0); k = 0
        for i in range(n):
            <statements>              # each one a leaf, or an ``if`` holding statements
        <statements>
        return acc, s, k, x, y

Each program runs eagerly and compiled (eager backend) by `check_same_calls` on several inputs
and trip counts: results bitwise, mutated arguments, raised errors. Most branches are cond nodes
(a test below says so); the others break, which must be exact too.
"""

from __future__ import annotations

import importlib.util
import textwrap
import warnings

import numpy as np
import pytest
from harness import check_same_calls
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import tcompile as tc

LEAVES = [
    "acc = acc + x * i",
    "acc = acc * 0.5 + y",
    "s = s + x[i % N]",
    "s = s * 0.5",
    "k = k + 1",
    "x[i % N] = y[i % N] * 2.0",
    "acc[i % N] += 1.0",
    "y = y * 0.9 + acc * 0.1",
    "s = s + acc[acc > 0].sum()",
    "hits = np.nonzero(acc > s)[0]\nacc[hits] = 0.0",
    "acc[x < 0] = s",
    "acc = np.where(x > y, acc, -acc)",
    "s = s + 1.0 if x[i % N] > 0 else s - 1.0",
    "assert abs(s) < 40.0",
]

TESTS = [
    "x[i % N] > 0",
    "acc.sum() > s",
    "x[i % N] > 0 and y[i % N] < 0.5",
    "s > 1.0 or x.max() > 1.5",
    "np.count_nonzero(acc > 0) > 3",
]


def render(statement) -> str:
    """A leaf's text, or ``(test, then, otherwise)`` as an ``if`` (``otherwise`` may be empty)."""
    if isinstance(statement, str):
        return statement
    test, then, otherwise = statement
    text = f"if {test}:\n" + textwrap.indent(block(then), "    ")
    if otherwise:
        text += "\nelse:\n" + textwrap.indent(block(otherwise), "    ")
    return text


def block(statements) -> str:
    return "\n".join(render(s) for s in statements)


statements = st.recursive(
    st.sampled_from(LEAVES),
    lambda inner: st.tuples(
        st.sampled_from(TESTS),
        st.lists(inner, min_size=1, max_size=3),
        st.lists(inner, max_size=2),
    ),
    max_leaves=6,
)


def program(body: list, after: list) -> str:
    return (
        "def prog(x, y, n):\n"
        "    N = x.shape[0]\n"
        "    acc = np.zeros_like(x)\n"
        "    s = np.float64(0.0)\n"
        "    k = 0\n"
        "    i = 1\n"
        + (
            "    for i in range(n):\n" + textwrap.indent(block(body), "        ") + "\n"
            if body
            else ""
        )
        + (textwrap.indent(block(after), "    ") + "\n" if after else "")
        + "    return acc, s, k, x, y\n"
    )


programs = st.builds(
    program,
    st.lists(statements, min_size=1, max_size=3),
    st.lists(statements, max_size=2),
)
# no loop around them: the graph's branches are cond nodes of its own, which the kernel
# backends run (`backend/fused/lowering/conds.py`)
straight_programs = st.builds(program, st.just([]), st.lists(statements, min_size=1, max_size=4))


def make(source: str):
    namespace = {"np": np}
    exec(compile(source, "<cond program>", "exec"), namespace)  # noqa: S102
    return namespace["prog"]


def arguments(seed: int, n: int) -> tuple:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(8), rng.random(8), n


def check(source: str, seed: int, backend: str) -> None:
    note(source)
    calls = [(arguments(seed + k, n), {}) for k, n in enumerate((5, 7, 3, 0))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # compared by check_same_calls on both sides
        check_same_calls(make(source), calls, fullgraph=False, backend=backend)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=programs, seed=st.integers(0, 2**16))
def test_random_branches_on_data_match_eager(source, seed):
    check(source, seed, "eager")


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="the cpu backend needs numba")
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=programs, seed=st.integers(0, 2**16))
def test_random_branches_on_data_match_eager_on_the_cpu_backend(source, seed):
    """Native loops compile the branches; a side that leaves a carried array alone gives that
    very array back (it once came back as a view of it)."""
    check(source, seed, "cpu")


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="the cpu backend needs numba")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=straight_programs, seed=st.integers(0, 2**16))
def test_random_branches_on_data_match_eager_in_the_cpu_kernels(source, seed):
    """The fused runtime runs each cond node's side taken as a program of kernels (its sums in
    NumPy's pairwise order: bit for bit)."""
    from tcompile.backend.cpu.kernels import fused_backend

    check(source, seed, fused_backend)


def test_most_random_branches_are_cond_nodes():
    # the grammar is not vacuous: an ``if`` on each test around each leaf is one cond node
    # (inside the loop node), not a break
    captured = 0
    for k, (test, leaf) in enumerate(zip(TESTS * 3, LEAVES)):
        tc.reset()
        source = program([(test, [leaf], [LEAVES[(k + 1) % len(LEAVES)]])], [])
        explained = tc.explain(make(source))(*arguments(k, 4))
        captured += explained.graph_break_count == 0 and bool(explained.conds or explained.loops)
    # (3.12+ compiles an assert that ends a loop's body as a jump back to the loop's head:
    # a branch with one there breaks, 2 of the 14)
    assert captured >= len(LEAVES) - 2, captured
