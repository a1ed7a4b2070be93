"""While loops on array conditions as ``while_loop`` nodes: ``while change > tol:`` whose
condition is computed from arrays would break the graph on every iteration (its truth is data);
instead the rest of the loop becomes one node that computes the condition in its body and reads
it once per iteration.

CPython compiles ``while cond: body`` as a test before the loop (jump to the exit if false),
then the body, then the test again at the bottom, jumping back to the body's start: on 3.11
one backward conditional jump, on 3.12+ a forward conditional jump to the exit followed by an
unconditional jump back (`loop_shape` reads both). The capture starts at whichever test first
meets an array condition:

- the bottom test: the first iteration was traced into the frame's graph already (which is what
  makes ``change = 1.0; while change > tol: ...`` work: ``change`` becomes a NumPy scalar in
  the first iteration, and keeps that kind from then on);
- the top test: the body must keep its values' kinds from before the loop.

The body (the loop's statements and its bottom condition) is traced once into a graph of its
own (`loop_body.BodyTrace`); its outputs are the condition and the carried locals. The node
``while_loop(cond, *carried, *read)`` runs it while the condition holds
(`loop_nodes.WhileLoop`, printed as a ``while`` statement); zero iterations give back the carried values as they were, so a
local the body sets and the code after the loop reads must have a value of the same kind before
the loop. Anything else breaks the graph at the condition as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..bytecode import analysis
from ..bytecode.if_shapes import TESTS, boolean_chain
from ..ir.loop_nodes import WhileLoop
from ..ir.node import RAISE, SILENT
from ..values.arrays import NumpyValue
from ..values.core import UNBOUND, Value
from .conds import numpy_bool
from .loop_body import (
    BodyTrace,
    NotCaptured,
    Snapshot,
    capture_once,
    carriable,
    check_restart,
    python_number,
    same_constant,
)
from .loop_record import LoopRecord


@dataclass(frozen=True)
class LoopShape:
    """A while loop around a conditional jump: the body is ``instrs[start:bottom]`` (ending with
    the condition's code), ``bottom`` the bottom test, ``exit`` the first instruction after the
    loop; the loop goes on while the condition is true (false for ``negate``)."""

    start: int
    bottom: int
    exit: int
    negate: bool


def loop_shape(instrs, at: int) -> LoopShape | None:
    """The while loop whose top or bottom test is the conditional jump ``instrs[at]``, if any."""
    bottom = _bottom_test(instrs, at)
    if bottom is not None:
        return bottom
    test = instrs[at]
    if test.opname not in TESTS or test.target <= at:
        return None
    # A top test: it jumps to the exit when the loop does not run; the bottom test ends the loop
    # just before the exit, going back to the instruction after the top test.
    for candidate in (test.target - 1, test.target - 2):
        shape = _bottom_test(instrs, candidate) if candidate > at else None
        if shape is not None and shape.start == at + 1 and shape.exit == test.target:
            top_negate = test.opname == "POP_JUMP_IF_TRUE"  # runs on when the jump is not taken
            return shape if shape.negate == top_negate else None
    return None


def _bottom_test(instrs, at: int) -> LoopShape | None:
    test = instrs[at]
    if test.opname not in TESTS or boolean_chain(instrs, at) is not None:
        return None  # (the first test of `while a or b:` jumps back too: the last one decides)
    jumps_if_true = test.opname == "POP_JUMP_IF_TRUE"
    if test.target <= at:  # 3.11: a conditional jump back to the body's start
        return LoopShape(test.target, at, at + 1, negate=not jumps_if_true)
    after = instrs[at + 1] if at + 1 < len(instrs) else None
    if (
        after is not None
        and after.opname == "JUMP"
        and after.target <= at
        and test.target == at + 2
        and instrs[after.target].opname != "FOR_ITER"  # an if ending a for loop's body
    ):
        # 3.12+: a jump to the exit when the loop ends, else an unconditional jump back
        return LoopShape(after.target, at, test.target, negate=jumps_if_true)
    return None


def condition_tests(instrs, shape: LoopShape) -> frozenset[int]:
    """The tests before the bottom one that its condition is made of (``while a and b:``,
    ``while a or b:``), each a jump where it decides (to the exit, or back to the body's start):
    a cond node computes the condition there (`bytecode.if_shapes.boolean_chain`), so they do not leave the
    body."""
    tests, last = set(), shape.bottom
    for at in range(shape.bottom - 1, shape.start - 1, -1):
        chain = boolean_chain(instrs, at) if instrs[at].opname in TESTS else None
        if chain is not None and chain.join == last:
            tests.add(at)
            last = at
    return frozenset(tests)


def compares_for_test(tx) -> bool:
    """Whether the comparison being traced gives the bool a test of the condition of the while
    loop whose body is traced jumps on (``n < maxiter`` in ``while n < maxiter and z <= 4.0:``,
    ``n`` carried): that bool is a node of the graph, where pinning ``n`` would end the
    capture."""
    tests = tx.state.graph_tests
    return bool(tests) and tx.ip < len(tx.instrs) and id(tx.instrs[tx.ip]) in tests


def graph_test(tx, inst, value: Value) -> Value:
    """What the conditional jump ``inst`` tests: at a test of the condition of the while loop
    whose body is traced, a bool of the graph (`compares_for_test`) as a NumPy bool, so that a
    cond node computes the condition (`bytecode.if_shapes.boolean_chain`)."""
    return numpy_bool(tx, value) if id(inst) in tx.state.graph_tests else value


def capture(tx, inst, cond: NumpyValue) -> LoopRecord | None:
    """At a conditional jump on an array condition: if it is a while loop's test, make the rest
    of the loop one node and go on after the loop. None when it is not a loop's test; else
    the loop's record (not captured: the caller breaks the graph as before)."""
    shape = loop_shape(tx.instrs, tx.ip - 1)
    if shape is None:
        return None
    where = inst.line or 0
    try:
        loop = capture_once(tx, shape.start, shape.bottom, shape.start, shape.bottom,
                            lambda snapshot: _capture(tx, shape, cond, snapshot),
                            condition_tests(tx.instrs, shape))  # fmt: skip
    except NotCaptured as why:
        record = LoopRecord(tx.code.co_filename, where, 0, False, reason=str(why), kind="while")
        tx.state.loops.append(record)
        return record
    record = LoopRecord(tx.code.co_filename, where, 0, True, loop.body.op_count(),
                        body=loop.body.python_code(), kind="while")  # fmt: skip
    tx.state.loops.append(record)
    tx.ip = shape.exit
    return record


def hint(record: LoopRecord) -> str:
    """What a graph break at a while loop's test tells of why the loop is no node."""
    return (
        f"This is the test of a while loop, which could not become one while_loop node: "
        f"{record.reason}."
    )


def _capture(tx, shape: LoopShape, cond: NumpyValue, snapshot: Snapshot) -> WhileLoop:
    body = BodyTrace(tx, shape.start, shape.bottom, snapshot, "while")
    entry = body.read_inputs()
    live_after = analysis.live_locals_at(tx.code, tx.instrs[shape.exit].offset)
    carried = {
        name: v
        for name, v in entry.items()
        if (carriable(v) or python_number(v)) and (name in body.loaded or name in live_after)
    }
    placeholders = body.carry(carried)
    state = tx.state
    tests = frozenset(id(tx.instrs[at]) for at in condition_tests(tx.instrs, shape))
    saved, state.graph_tests = state.graph_tests, state.graph_tests | tests
    try:
        left = body.run(shape.bottom)
    finally:
        state.graph_tests = saved
    if len(left) != 1 or not isinstance(left[0], NumpyValue):
        raise NotCaptured("the loop's condition is not computed from arrays in the body")
    ends = _carried_ends(tx, body, entry, placeholders, live_after)
    read = body.finish([left[0], *ends], [])
    loop = WhileLoop(body.graph, len(carried), negate=shape.negate)
    example = body.run_on_examples(loop, placeholders, read, (), (cond, *carried.values(), *read))
    # Its test is Python's ``bool``, which raises for an array of several values.
    test_risk = SILENT if np.ndim(cond.example) == 0 and np.ndim(left[0].example) == 0 else RAISE
    body.add_node(loop, (cond, *carried.values(), *read), example, list(carried), "while_loop",
                  risk=test_risk, counted=True)  # fmt: skip
    return loop


def _carried_ends(tx, body: BodyTrace, entry, placeholders, live_after) -> list[Value]:
    """The carried values at the end of the body, checking that each iteration starts as the
    first did; other locals the body sets must be temporaries, or keep their constant."""
    ends = []
    for name in body.stored:
        end = tx.locals.get(name, UNBOUND)
        if check_restart(name, end, placeholders, entry, body.loaded):
            ends.append(end)
        elif name in live_after and not same_constant(entry[name], end):
            raise NotCaptured(
                f"{name} is set in the body ({end.describe()}) and read after it, but has no "
                "value of that kind before the loop (with no iteration, it would keep that one)"
            )
    return ends
