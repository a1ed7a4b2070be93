"""What became of the loops in a compiled call, and the arguments the loop-node tests build:
shared by test_loop_nodes.py and its neighbours (raising bodies, recompiles)."""

from __future__ import annotations

import warnings

import numpy as np

import tcompile as tc
from tcompile.tracer.ir.loop_nodes import LoopSpec

# --- what became of the loops -----------------------------------------------------------------


def loop_targets(graph) -> list:
    """The loop nodes' targets in ``graph`` and, recursively, in their bodies."""
    found = []
    for node in graph.nodes:
        if isinstance(node.target, LoopSpec):
            found.append(node.target)
            found += loop_targets(node.target.body)
    return found


def graph_shape(fn, builder, backend="eager"):
    """(loop nodes in all graphs, ops of all graphs, printed graphs) of one explained call."""
    args = builder()
    explained = tc.explain(fn, backend=backend)(*(args if isinstance(args, tuple) else (args,)))
    targets = [r for g in explained.graphs for r in loop_targets(g)]
    ops = sum(g.op_count() for g in explained.graphs)
    code = "\n".join(g.python_code() for g in explained.graphs)
    return targets, ops, code


def assert_loops(fn, builder, loops: int, max_ops: int | None = None, backend="eager") -> None:
    __tracebackhide__ = True
    with warnings.catch_warnings():  # compared by the differential tests, not here
        warnings.simplefilter("ignore")
        targets, ops, code = graph_shape(fn, builder, backend)
    assert len(targets) == loops, f"{len(targets)} loop nodes, expected {loops}:\n{code}"
    top_level = code.count("_loop_") if loops else 0
    assert (top_level > 0) == (loops > 0), f"printed graph and loop nodes disagree:\n{code}"
    if max_ops is not None:
        assert ops <= max_ops, f"{ops} graph ops, at most {max_ops} expected:\n{code}"


# --- builders ---------------------------------------------------------------------------------


def line(n=16, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(n).astype(dtype)


def mat(rows=6, cols=4, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype(dtype)


def positive(n=5, seed=0):
    return np.random.default_rng(seed).uniform(2.5, 6.0, n)


def spd_matrix(n, seed=0):
    m = np.random.default_rng(seed).random((n, n))
    return m @ m.T + n * np.eye(n)
