"""Facts about original bytecode (tracer/bytecode/analysis.py), checked on functions small enough
to work out by hand: which locals are live at a statement, which statements sit in a loop, the
argument a zero-argument ``super()`` reads, and the instruction after an offset."""

from __future__ import annotations

import dis

import pytest

from tcompile.tracer.bytecode import analysis


def line_start(fn, line: int) -> int:
    """Offset of the first instruction of ``fn``'s ``line`` (counted from the ``def`` line)."""
    wanted = fn.__code__.co_firstlineno + line
    return next(i.offset for i in dis.get_instructions(fn) if i.positions.lineno == wanted)


def first(fn, opname: str) -> int:
    return next(i.offset for i in dis.get_instructions(fn) if i.opname == opname)


def live(fn, line: int) -> set[str]:
    return set(analysis.live_locals_at(fn.__code__, line_start(fn, line)))


def looping(fn, line: int) -> bool:
    return analysis.in_loop(fn.__code__, line_start(fn, line))


def straight(a, b):
    c = a + 1
    d = c * 2
    return d + b


def branches(a, b, c):
    if a:
        return b
    return c


def overwritten(a, b):
    a = b
    return a


def test_a_local_is_live_until_its_last_read():
    assert [live(straight, n) for n in (1, 2, 3)] == [{"a", "b"}, {"b", "c"}, {"b", "d"}]


def test_each_branch_keeps_only_what_it_reads():
    assert [live(branches, n) for n in (1, 2, 3)] == [{"a", "b", "c"}, {"b"}, {"c"}]


def test_a_local_written_before_any_read_is_dead():
    assert live(overwritten, 1) == {"b"}


def total(xs, k):
    t = 0
    for v in xs:
        t = t + v * k
    return t


def test_a_for_loop_keeps_what_later_iterations_read():
    assert live(total, 1) == {"xs", "k"}
    assert live(total, 2) == {"xs", "t", "k"}  # before the iterator is made
    assert set(analysis.live_locals_at(total.__code__, first(total, "FOR_ITER"))) == {"t", "k"}
    assert live(total, 3) == {"t", "v", "k"}
    assert live(total, 4) == {"t"}


def lagging(xs):
    out = 0
    prev = 0
    for v in xs:
        out = out + prev
        prev = v
    return out


def test_a_value_carried_to_the_next_iteration_is_live_until_it_is_replaced():
    assert live(lagging, 4) == {"out", "prev", "v"}
    assert live(lagging, 5) == {"out", "v"}  # prev is about to be overwritten


@pytest.mark.parametrize(("line", "inside"), [(1, False), (2, False), (3, True), (4, False)])
def test_for_loop_body_is_in_a_loop(line, inside):
    assert looping(total, line) is inside
    assert analysis.in_loop(total.__code__, first(total, "FOR_ITER"))


def nested(n):
    t = 0
    for i in range(n):
        for j in range(i):
            t = t + j
        t = t * 2
    return t


@pytest.mark.parametrize(
    ("line", "inside"), [(1, False), (2, False), (3, True), (4, True), (5, True), (6, False)]
)
def test_nested_loops(line, inside):
    # line 3 builds the inner iterator: once per outer iteration
    assert looping(nested, line) is inside


def test_nested_loops_liveness():
    assert live(nested, 3) == {"i", "t"}
    assert live(nested, 5) == {"t"}  # the next outer iteration rebinds i


def countdown(n):
    t = 0
    while n > 0:
        t = t + n
        n = n - 1
    return t


def until(n):
    while True:
        n = n - 1
        if n < 3:
            break
    return n


def test_while_loops():
    # CPython tests a while condition once before the loop, then again at the end of the body.
    assert [looping(countdown, n) for n in (1, 2, 3, 4, 5)] == [False, False, True, True, False]
    assert live(countdown, 4) == {"n", "t"}
    assert live(countdown, 5) == {"t"}
    assert [looping(until, n) for n in (2, 3, 5)] == [True, True, False]


def fallback(x, default):
    y = default
    try:
        y = x + 1
        z = y * 2
    except TypeError:
        return default
    return z


def test_a_try_body_keeps_what_its_handler_reads():
    assert live(fallback, 3) == {"x", "default"}
    # default is read only if ``y * 2`` raises: live through the handler edge
    assert live(fallback, 4) == {"y", "default"}
    assert live(fallback, 7) == {"z"}


def recovering(x, manager):
    with manager:
        y = 1 / x
    try:
        y = y + 1
    except TypeError:
        y = 0
    return y


@pytest.mark.parametrize("line", [1, 2, 4, 5, 7])
def test_handlers_that_jump_back_are_not_loops(line):
    # 3.12+ jumps from a with-block's exit handler back to the code after the block
    assert not looping(recovering, line)


class Base:
    def value(self):
        return 1


class Child(Base):
    def value(self):
        return super().value() + 1

    def plain(self, other):
        return other


def test_zero_argument_super_keeps_self_alive():
    code = Child.value.__code__
    assert analysis.implicit_self(code) == "self"
    assert analysis.implicit_self(Child.plain.__code__) is None
    # After ``super().value()`` nothing reads self: it stays, for a resume function's super().
    assert "self" in analysis.live_locals_at(code, first(Child.value, "BINARY_OP"))
    assert analysis.live_locals_at(Child.plain.__code__, line_start(Child.plain, 1)) == {"other"}


def test_next_offset_skips_cache_entries():
    listed = [i for i in dis.get_instructions(straight) if i.opname != "CACHE"]
    add = next(n for n, i in enumerate(listed) if i.opname == "BINARY_OP")
    assert analysis.next_offset(straight.__code__, listed[add].offset) == listed[add + 1].offset
    assert listed[add + 1].offset - listed[add].offset > 2  # BINARY_OP has an inline cache


def stores_and_adds(y, v, i):
    total = 0.0
    y[i] = total
    w = total + v * 2.0
    total = w
    return total


def passes_on(f):
    total = 0.0
    f(total)
    return [total, 1.0]


def chosen(c):
    total = 0.0
    return total if c else 1.0


def consumers(fn, name: str, line: int):
    found = analysis.read_consumers(fn.__code__, name, line_start(fn, line))
    return None if found is None else sorted((ins.opname, place) for ins, place in found)


def test_the_instruction_that_takes_each_read_of_a_local():
    # After ``total = 0.0``: the value stored by ``y[i] = ...`` (under the key and the array)
    # and the left operand of ``+``; the read in ``return total`` sees the value of ``w``.
    assert consumers(stores_and_adds, "total", 2) == [("BINARY_OP", 1), ("STORE_SUBSCR", 2)]


def test_a_read_whose_value_a_jump_takes_on_is_not_followed():
    assert consumers(passes_on, "total", 2) == [("BUILD_LIST", 1), ("CALL", 0)]
    assert consumers(chosen, "total", 2) is None  # a jump, then a return: not followed
