"""How a loop runs, decided here and nowhere else. There are three ways:

unrolled    the default: the interpreter goes on through the loop's bytecode, and the graph
            gets one copy of the body per iteration (known items, a short loop, a body that
            traces differently every time, a backend that takes no loop nodes).
loop node   one node for the rest of the loop, its body traced once (the backend takes loop
            nodes): at ``FOR_ITER``, a for loop over items made from their position
            (`for_loops`); at a conditional jump on an array, a while loop's test
            (`while_loops`). Where the body does not allow it, the loop's record says why,
            and it unrolls (for) or the graph breaks at the test (while).
split       a graph break inside a loop: the loop stays Python around its body, compiled as
            a function of its own (`split_loop`, run by `loop_driver`).
"""

from __future__ import annotations

from ..bytecode import if_shapes
from ..config import config
from . import conds, for_loops, split_loop, while_loops
from .loop_record import LoopRecord


def at_for_iter(tx, inst, it) -> bool:
    """At a loop's ``FOR_ITER`` over the iterator ``it``: True when the rest of the loop became
    one node (the translator goes on after the loop), False to unroll it."""
    return it.origin is not None and for_loops.capture(tx, inst, it)


def at_array_test(tx, inst, value) -> LoopRecord | None:
    """At a conditional jump on the array ``value``: the record of the while loop it tests, if
    it is one (captured: the translator goes on after the loop), else None."""
    return while_loops.capture(tx, inst, value) if tx.state.loop_nodes else None


def compares_for_test(tx) -> bool:
    """Whether the comparison being traced is one a while loop's condition tests, or one an
    ``if`` in a loop body being captured jumps on: a bool of the graph
    (`while_loops.compares_for_test`, `compares_for_branch`)."""
    return while_loops.compares_for_test(tx) or compares_for_branch(tx)


def compares_for_branch(tx) -> bool:
    """In a loop body traced to be one loop node, a comparison an ``if`` jumps on right after
    (``if j - 1 >= 0:``, ``j`` the loop's index): a bool of the graph, so that the ``if`` may
    be a cond node, where pinning the index to its value would unroll the loop."""
    state = tx.state
    if state.loop_watch is None or not (state.loop_nodes and config.cond_nodes):
        return False
    return tx.ip < len(tx.instrs) and tx.instrs[tx.ip].opname in if_shapes.TESTS


def tested_value(tx, inst, value):
    """What the conditional jump ``inst`` tests: ``value``, or the NumPy bool of a bool of the
    graph a while loop's condition or an ``if`` in a captured loop body tests
    (`while_loops.graph_test`, `compares_for_branch`)."""
    value = while_loops.graph_test(tx, inst, value)
    return conds.numpy_bool(tx, value) if tx.state.loop_watch is not None else value


def at_array_branch(tx, inst, value) -> str | None:
    """At a conditional jump on the array ``value`` that is no while loop's test: None when
    the ``if`` became one cond node (`conds`; the translator goes on after it), else why not
    ("" where the jump is no ``if``)."""
    if not (tx.state.loop_nodes and config.cond_nodes):
        return ""
    return conds.capture(tx, inst, value)


def branch_break_hint(reason: str) -> str:
    """What a graph break at a branch on data adds to its hints: why it is no cond node."""
    return f"This branch could not become one cond node: {reason}."


def test_break_hint(record: LoopRecord) -> str:
    """What a graph break at a while loop's test adds to its hints: why the loop is no node."""
    return while_loops.hint(record)


def at_break(code, loop_at: int, frame_code, instrs, registry) -> split_loop.Split | str:
    """A graph break inside the loop at ``loop_at``: how the loop runs split, or why it cannot
    (the frame then runs eagerly from the break)."""
    return split_loop.find(code, loop_at, frame_code, instrs, registry)
