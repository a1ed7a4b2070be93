"""Random loops behave exactly like eager: loop nodes, their first run replayed, bodies that
write into arrays, slices whose bounds follow the index or are read from arrays, inner loops,
``np.add.at``, and ``while`` loops on a residual.

A small grammar generates the body of

    def prog(x, y, vals, cols, bounds, n):   # x, y: float64 (8,); a CSR-like (vals, cols,
        N = x.shape[0]                        # bounds) with n rows; n: the trip count
        acc = np.zeros_like(x); out = <np.zeros or np.empty>(N); out[:] = 0.0
        s = np.float64(0.0); h = np.zeros(N); change = 1.0
        <for i in range(n): | i = 0; while <change > 1e-3 and i < n, i < n and change > 1e-3,
                                             not (change <= 1e-3 or i >= n)>:>
            <statements>
        return acc, out, s, h, x, y

Each program runs eagerly and compiled (eager backend) by `check_same_calls` on several trip
counts: results bitwise, mutated arguments, aliasing, stdout. Most bodies are loop nodes (a
test below says how many); the others unroll or break, which must be exact too.
"""

from __future__ import annotations

import textwrap
import warnings

import numpy as np
from harness import check_same_calls
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import tcompile as tc

STATEMENTS = [
    "acc = acc + x * i",
    "acc = acc * 0.5 + y",
    "y = y * 0.9 + acc * 0.1",
    "acc[i % N] = x[i % N] + 1.0",
    "x[i % N] += y[(i + 1) % N]",
    "t = x[: i % N + 1].sum()\nacc = acc + t",
    "x += 0.25",
    "y[1:] = y[:-1] + acc[1:]",
    "out[i % N] = acc.sum()",
    "z = np.sqrt(np.abs(acc)) - y\nacc = acc + z",
    "acc = np.maximum(acc, x)",
    "w = acc.copy()\nw[0] = i\nacc = w",
    "s = s + np.float64(i) * 0.5",
    "acc = acc + s",
    "y = y[::-1].copy()",
    "x[:] = x * 0.5",
    "acc = acc / (1.0 + i)",
    "for j in range(3):\n    acc[j] = acc[j] + y[j] * j",
    "for j in range(i):\n    out[j % N] = out[j % N] + 0.5 * j",
    "s = s + vals[bounds[i] : bounds[i + 1]].sum()",
    "out[i % N] = vals[bounds[i] : bounds[i + 1]] @ x[cols[bounds[i] : bounds[i + 1]]]",
    "np.add.at(h, cols[:3], x[:3] * (i + 1))",
    "e = np.empty(3)\ne[:] = acc[:3]\nacc = acc + e.sum()",
]

WHILE_TAIL = "change = np.abs(acc).max() * 0.5**i\ni = i + 1"
HEADS = {  # the loop's head by kind: the while conditions' tests in each order CPython compiles
    "for": "for i in range(n):",
    "while": "i = 0\nwhile change > 1e-3 and i < n:",
    "while ints first": "i = 0\nwhile i < n and change > 1e-3:",
    "while not or": "i = 0\nwhile not (change <= 1e-3 or i >= n):",
}


def program(statements: list[str], pre: str, kind: str) -> str:
    body = "\n".join(statements + ([WHILE_TAIL] if kind != "for" else []))
    head = HEADS[kind]
    return (
        "def prog(x, y, vals, cols, bounds, n):\n"
        "    N = x.shape[0]\n"
        "    acc = np.zeros_like(x)\n"
        f"    out = {pre}(N)\n"
        "    out[:] = 0.0\n"
        "    s = np.float64(0.0)\n"
        "    h = np.zeros(N)\n"
        "    change = 1.0\n"
        + textwrap.indent(head, "    ")
        + "\n"
        + textwrap.indent(body, "        ")
        + "\n    return acc, out, s, h, x, y\n"
    )


def make(source: str):
    namespace = {"np": np}
    exec(compile(source, "<loop program>", "exec"), namespace)  # noqa: S102
    return namespace["prog"]


def arguments(seed: int, n: int) -> tuple:
    rng = np.random.default_rng(seed)
    bounds = np.concatenate([[0], np.cumsum(rng.integers(0, 3, n))]).astype(np.int64)
    return (rng.standard_normal(8), rng.standard_normal(8), rng.standard_normal(bounds[-1]),
            rng.integers(0, 8, bounds[-1]), bounds, n)  # fmt: skip


programs = st.builds(
    program,
    st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=5),
    st.sampled_from(["np.zeros", "np.empty"]),
    st.sampled_from(list(HEADS)),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=programs, seed=st.integers(0, 2**16))
def test_random_loops_match_eager(source, seed):
    note(source)
    calls = [(arguments(seed + k, n), {}) for k, n in enumerate((5, 7, 3, 1))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # compared by check_same_calls on both sides
        check_same_calls(make(source), calls, fullgraph=False)


def test_most_random_for_loops_are_loop_nodes():
    # the grammar is not vacuous: its for loops become loop nodes (the while form with an
    # `and` on a Python int is a Python condition: not a node, by design)
    captured = 0
    for k, statements in enumerate(zip(STATEMENTS, STATEMENTS[1:] + STATEMENTS[:1])):
        tc.reset()
        explained = tc.explain(make(program(list(statements), "np.zeros", "for")))(*arguments(k, 6))
        captured += any(record.captured for record in explained.loops)
    assert captured == len(STATEMENTS)


def test_each_while_head_is_a_while_loop_node():
    for kind in [k for k in HEADS if k != "for"]:
        tc.reset()
        explained = tc.explain(make(program(["acc = acc + x * i"], "np.zeros", kind)))(
            *arguments(0, 6)
        )
        assert [r.kind for r in explained.loops if r.captured] == ["while"], (kind, explained)
