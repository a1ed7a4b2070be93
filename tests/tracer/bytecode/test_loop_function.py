"""The plain loop (tracer/bytecode/loop_function.py): a split loop run as one plain function,
entered at its head with its state, handing back the state where the loop runs out (or its
budget does), and the driver's verdict on whether the compiled body pays (`PayCheck`)."""

from __future__ import annotations

import dis
import types

import pytest

from tcompile.tracer.bytecode import analysis
from tcompile.tracer.bytecode.body_function import CONTINUE, RETURNED
from tcompile.tracer.bytecode.loop_function import EXHAUSTED, LoopSpec, loop_code
from tcompile.tracer.loops.loop_driver import PayCheck


def plain_loop(fn, budgeted=False):
    """(the plain loop of ``fn``'s first loop, its state's names)."""
    code = fn.__code__
    instrs = list(dis.get_instructions(code))
    loop_op = next((i for i in instrs if i.opname == "FOR_ITER"), None)
    if loop_op is not None:
        head = loop_op.offset
        start = next(i.offset for i in instrs if i.offset > head)
    else:  # a while loop: the loop around its first division
        inside = next(i.offset for i in instrs if i.opname == "BINARY_OP" and i.argrepr == "/")
        head = start = analysis.outermost_loop_head(code, inside)
    state = analysis.in_argument_order(code, analysis.live_locals_at(code, head))
    spec = LoopSpec(code, head, start, state, (), budgeted)
    cells = tuple(types.CellType() for _ in spec.cell_names) or None
    return types.FunctionType(loop_code(spec), fn.__globals__, "loop", None, cells), state


def count_above(xs, t):
    n = 0
    for v in xs:
        if v > t:
            n += 1
    return n


def first_above(xs, t):
    for i, v in enumerate(xs):
        if v > t:
            return i
    return -1


def find_or_else(xs, t):
    for v in xs:
        if v == t:
            found = v
            break
    else:
        found = None
    return found, "after"


def halve_until(x, t):
    steps = 0
    while x > t:
        x = x / 2
        steps += 1
    return x, steps


def test_an_exhausted_loop_hands_back_its_state():
    loop, state = plain_loop(count_above)
    assert state == ("n", "t")
    assert loop(0, 1, iter([0, 2, 3, 1])) == (EXHAUSTED, 2, 1)


def test_a_return_inside_the_loop_is_the_frames_return():
    loop, _ = plain_loop(first_above)
    assert loop(5, iter(enumerate([1, 9, 2]))) == (RETURNED, 1)


def test_a_break_runs_the_rest_of_the_frame_and_the_else_clause_only_when_exhausted():
    loop, state = plain_loop(find_or_else)
    values = dict.fromkeys(state)
    values["t"] = 3
    assert loop(*values.values(), iter([1, 3, 5])) == (RETURNED, (3, "after"))
    assert loop(*values.values(), iter([1, 5]))[0] == EXHAUSTED  # the else clause comes after


def test_a_while_loop_runs_to_its_exit_and_the_rest_of_the_frame():
    loop, state = plain_loop(halve_until)
    assert state == ("steps", "t", "x")
    assert loop(0, 1.0, 10.0) == (RETURNED, halve_until(10.0, 1.0))


@pytest.mark.parametrize("budget", [1, 2, 3])
def test_a_budgeted_loop_stops_after_that_many_iterations_with_its_state(budget):
    loop, _ = plain_loop(count_above, budgeted=True)
    items = iter([5, 5, 5, 5, 5])
    assert loop(0, 1, items, budget) == (CONTINUE, budget, 1)
    assert len(list(items)) == 5 - budget  # the iterator goes on where the budget ran out


def test_a_budgeted_while_loop_goes_on_from_the_state_it_handed_back():
    loop, _ = plain_loop(halve_until, budgeted=True)
    tag, steps, t, x = loop(0, 1.0, 64.0, 2)
    assert (tag, steps, x) == (CONTINUE, 2, 16.0)
    assert loop(steps, t, x, 100) == (RETURNED, halve_until(64.0, 1.0))


def test_a_budget_larger_than_the_loop_ends_as_the_loop_does():
    loop, _ = plain_loop(count_above, budgeted=True)
    assert loop(0, 0, iter([1, 2]), 10) == (EXHAUSTED, 2, 0)


# -- the driver's verdict -------------------------------------------------------------------------


def decide(chunks):
    """A `PayCheck` told of chunks (ns per iteration), compiled and plain in turn."""
    check = PayCheck()
    for n, ns in enumerate(chunks):
        check.timed(n % 2 == 1, ns, 1)
    return check


def test_a_compiled_body_much_slower_than_plain_python_does_not_pay_after_two_rounds():
    check = decide([2000, 100] * PayCheck.ROUNDS)
    assert check.verdict is None  # a first round says so: a second one is timed
    check = decide([2000, 100] * (2 * PayCheck.ROUNDS))
    assert "took 2 µs per iteration, the plain loop 0.1 µs" in check.verdict


def test_a_round_disturbed_once_keeps_the_compiled_body():
    slow_round = [2000, 1000] * PayCheck.ROUNDS  # other processes slowed the compiled chunks
    check = decide(slow_round[: PayCheck.ROUNDS + 1] + [1000, 1000] * PayCheck.ROUNDS)
    assert check.verdict == ""


def test_a_compiled_body_about_as_fast_as_plain_python_is_kept():
    check = decide([1030, 1000, 990, 1000, 1100, 1000, 1000, 1000, 1020])
    assert check.verdict == ""


def test_no_verdict_before_enough_pairs_and_only_adjacent_chunks_pair():
    check = decide([2000, 100] * (PayCheck.ROUNDS // 2))  # each chunk pairs with the next
    assert len(check.pairs) == PayCheck.ROUNDS - 2 and check.verdict is None
    check.untimed()  # a chunk that compiled something: the next one waits for a partner
    check.timed(False, 2000, 1)
    assert len(check.pairs) == PayCheck.ROUNDS - 2 and check.verdict is None


def test_a_drift_over_the_loop_does_not_decide_it():
    # each pair is timed close together: the slow late phase cancels out
    check = decide([100, 100, 105, 100, 2000, 1950, 2100, 2000, 1990, 2000])
    assert check.verdict == ""


def test_a_body_recompiled_on_every_iteration_runs_plainly():
    check = PayCheck()
    for _ in range(PayCheck.RECOMPILED - 1):
        check.iteration(True)
    check.iteration(False)  # one warm iteration starts the count again
    assert check.verdict is None
    for _ in range(PayCheck.RECOMPILED):
        check.iteration(True)
    assert "compiled again on each of 5 iterations in a row" in check.verdict
