"""Resume functions (tracer/bytecode/resume.py), run differentially: stop the original function at
an offset, hand its live stack and locals to the resume function built for that offset (as the
continuation does after a graph break), and demand the result the original goes on to compute."""

from __future__ import annotations

import sys
import types

import pytest

from tcompile.tracer.bytecode import analysis, features, instructions
from tcompile.tracer.bytecode.resume import (
    RESUME_CODES,
    STACK_CONTEXT,
    STACK_NULL,
    STACK_VALUE,
    ResumeSpec,
    original_location,
    resume_code,
)


class _Stopped(Exception):
    pass


def state_at(fn, args, line: int, hit: int = 1) -> dict:
    """``fn``'s locals the ``hit``-th time it reaches ``line`` (counted from the ``def``); the call
    stops there, so cells and arguments are left as they were at that point."""
    wanted, seen, state = fn.__code__.co_firstlineno + line, 0, {}

    def local_trace(frame, event, arg):
        nonlocal seen
        if event == "line" and frame.f_lineno == wanted:
            seen += 1
            if seen == hit:
                state.update(frame.f_locals)
                raise _Stopped
        return local_trace

    previous = sys.gettrace()
    sys.settrace(lambda frame, event, arg: local_trace if frame.f_code is fn.__code__ else None)
    try:
        fn(*args)
    except _Stopped:
        pass
    finally:
        sys.settrace(previous)
    assert state, f"{fn.__name__} never reached line {line} {hit} times"
    return state


def offset_of_line(fn, line: int) -> int:
    wanted = fn.__code__.co_firstlineno + line
    return next(
        i.offset for i in instructions.original(fn.__code__) if i.positions.lineno == wanted
    )


def resume(fn, offset: int, state: dict, stack=(), cells=None):
    """Build the resume function for ``fn`` at ``offset`` and call it with ``stack`` (pairs of a
    STACK_* kind and a value, bottom first) and the live locals from ``state``."""
    code = fn.__code__
    first = analysis.implicit_self(code)
    bound = set(state) & set(code.co_varnames)
    live = sorted(analysis.live_locals_at(code, offset) & bound, key=lambda n: (n != first, n))
    spec = ResumeSpec(code, offset, tuple(kind for kind, _ in stack), tuple(live))
    info = resume_code(spec)
    if cells is None:
        cells = tuple(types.CellType(state[name]) for name in spec.cell_names)
    resumed = types.FunctionType(info.code, fn.__globals__, "resumed", None, cells or None)
    values = tuple(value for kind, value in stack if kind != STACK_NULL)
    return resumed(*spec.arrange(values, tuple(state[name] for name in live)))


def resume_at_line(fn, args, line: int, *, hit: int = 1, stack=(), cells=None):
    return resume(fn, offset_of_line(fn, line), state_at(fn, args, line, hit), stack, cells)


def polynomial(x, k):
    a = x * k
    b = a + x
    c = b * b - a
    return c + k


@pytest.mark.parametrize("line", [1, 2, 3, 4])
def test_straight_line_code_resumes_at_each_statement(line):
    assert resume_at_line(polynomial, (3, 5), line) == polynomial(3, 5) == 314


def test_a_resume_function_takes_only_the_live_locals():
    offset = offset_of_line(polynomial, 4)
    info = resume_code(ResumeSpec(polynomial.__code__, offset, (), ("c", "k")))
    assert info.code.co_varnames[: info.code.co_argcount] == ("c", "k")
    assert "a" in info.code.co_varnames  # still a local of the copied code, just not passed


def double(x):
    return 2 * x


def combine(a, b):
    return a * 100 + b


def nested_call(x):
    return combine(x, double(x)) + 1


def test_resuming_after_a_call_rebuilds_the_outer_calls_stack_with_its_null():
    # A break at ``double(x)``: the continuation calls it eagerly, then resumes after it with
    # the outer call's callable, NULL and argument still on the stack, and the result on top.
    code = nested_call.__code__
    inner_call = next(i.offset for i in instructions.original(code) if i.opname == "CALL")
    callable_and_null = (
        [(STACK_NULL, None), (STACK_VALUE, combine)]
        if features.NULL_FIRST
        else [(STACK_VALUE, combine), (STACK_NULL, None)]
    )
    stack = [*callable_and_null, (STACK_VALUE, 7), (STACK_VALUE, double(7))]
    after = analysis.next_offset(code, inner_call)
    assert resume(nested_call, after, {}, stack) == nested_call(7) == 715


class Box:
    def __init__(self, size):
        self.size = size

    def scale(self, v):
        return self.size * v


def method_call(box, x):
    return box.scale(double(x)) - 1


def test_resuming_after_a_call_keeps_a_method_and_its_self_below_the_result():
    # Every version loads a method as [function, self]: only a non-method's NULL moves.
    code = method_call.__code__
    inner_call = next(i.offset for i in instructions.original(code) if i.opname == "CALL")
    box = Box(3)
    stack = [(STACK_VALUE, Box.scale), (STACK_VALUE, box), (STACK_VALUE, double(5))]
    after = analysis.next_offset(code, inner_call)
    assert resume(method_call, after, {}, stack) == method_call(box, 5) == 29


def running(xs):
    t = 0
    for v in xs:
        t = t * 10 + v
    return t


@pytest.mark.parametrize("iteration", [1, 2, 4])
def test_a_loop_body_resumes_with_the_iterator_on_the_stack(iteration):
    xs = [1, 2, 3, 4]
    iterator = iter(xs)
    for _ in range(iteration):  # where the original's iterator stands on that iteration
        next(iterator)
    stack = [(STACK_VALUE, iterator)]
    assert resume_at_line(running, (xs,), 3, hit=iteration, stack=stack) == running(xs) == 1234


class Recorder:
    def __init__(self, log: list, suppress: bool = False):
        self.log, self.suppress = log, suppress

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, kind, value, tb):
        self.log.append("exit" if kind is None else f"exit {kind.__name__}")
        return self.suppress


def scaled(x, log):
    with Recorder(log):
        y = x * 2
        y = y + 1
    return y * 10


def test_a_with_block_is_re_entered_and_exited_once():
    eager_log, resumed_log = [], []
    expected = scaled(4, eager_log)
    stack = [(STACK_CONTEXT, Recorder(resumed_log))]
    assert resume_at_line(scaled, (4, []), 3, stack=stack) == expected == 90
    assert resumed_log == eager_log == ["enter", "exit"]


def swallowed(x, log):
    y = -1
    with Recorder(log, suppress=True):
        y = 10 // x
    return y


@pytest.mark.parametrize("x", [0, 5])
def test_an_exception_in_a_resumed_with_block_reaches_its_exit(x):
    eager_log, resumed_log = [], []
    expected = swallowed(x, eager_log)
    stack = [(STACK_CONTEXT, Recorder(resumed_log, suppress=True))]
    assert resume_at_line(swallowed, (x, []), 3, stack=stack) == expected
    assert resumed_log == eager_log


def inverse(x):
    y = 0.0
    try:
        y = 1 / x
        y = y * 2
    except ZeroDivisionError:
        y = -1.0
    return y


@pytest.mark.parametrize(
    ("line", "x"), [(1, 0), (3, 0), (7, 0), (1, 4), (3, 4), (4, 4), (7, 4)]
)  # line 4 is never reached when 1 / 0 raises
def test_a_try_block_keeps_catching_in_the_resume_function(line, x):
    assert resume_at_line(inverse, (x,), line) == inverse(x)


def counting(x):
    n = x

    def bump():
        nonlocal n
        n += 1

    bump()
    bump()
    return n


def test_cells_stay_shared_with_closures_made_before_the_break():
    state = state_at(counting, (10,), 8)  # before the second bump()
    cells = state["bump"].__closure__  # the frame's own cell for n, as the glue passes it
    assert state["n"] == 11
    assert resume(counting, offset_of_line(counting, 8), state, cells=cells) == counting(10) == 12


class Base:
    def value(self):
        return 100


class Child(Base):
    def value(self, k=1):
        t = k * 2
        t = t + 1
        return super().value() + t


def test_a_method_using_super_gets_self_first():
    state = state_at(Child.value, (Child(), 3), 2)
    cells = Child.value.__closure__  # the __class__ cell super() reads
    result = resume(Child.value, offset_of_line(Child.value, 2), state, cells=cells)
    assert result == Child().value(3) == 107


def test_one_resume_code_per_spec_mapped_back_to_the_original():
    code, offset = polynomial.__code__, offset_of_line(polynomial, 3)
    info = resume_code(ResumeSpec(code, offset, (), ("a", "b", "k")))
    assert resume_code(ResumeSpec(code, offset, (), ("a", "b", "k"))) is info
    assert info.line == code.co_firstlineno + 3
    assert RESUME_CODES.lookup(info.code) is info
    made = instructions.original(info.code)
    originals = {i.offset: i.opname for i in instructions.original(code)}
    copied = [i for i in made if i.offset in info.original_offset]
    # every original instruction but the prefix (RESUME) is copied, unchanged (3.13's pairs of
    # loads and stores as their two parts)
    assert [i.opname for i in copied] == [
        part for op in originals.values() if op != "RESUME" for part in _PARTS.get(op, (op,))
    ]
    for ins in copied:
        assert ins.opname in _PARTS.get(originals[info.original_offset[ins.offset]], (ins.opname,))
        assert original_location(info.code, ins.offset, RESUME_CODES) == (
            code,
            info.original_offset[ins.offset],
        )
    prologue = made[0].offset
    assert prologue not in info.original_offset
    assert original_location(info.code, prologue, RESUME_CODES) == (code, -1)
    assert original_location(code, offset, RESUME_CODES) == (code, offset)  # not a resume code


_PARTS = {"LOAD_FAST_LOAD_FAST": ("LOAD_FAST", "LOAD_FAST"),
          "STORE_FAST_STORE_FAST": ("STORE_FAST", "STORE_FAST"),
          "STORE_FAST_LOAD_FAST": ("STORE_FAST", "LOAD_FAST")}  # fmt: skip


def many_locals(x):
    a0, a1, a2, a3, a4, a5, a6, a7 = x, x + 1, x + 2, x + 3, x + 4, x + 5, x + 6, x + 7
    b0, b1, b2, b3, b4, b5, b6 = a0 * a1, a2 * a3, a4 * a5, a6 * a7, a0 - a7, a1 - a6, a2 - a5
    p, q = b0 + b1, b2 + b3  # 3.13 stores both with one instruction
    return p * q + b4 * b5 + b6


def test_a_copy_with_more_parameters_keeps_its_offsets_one_to_one():
    # A resume function's parameters come first among its locals: past 16 of them, 3.13's
    # pairs (LOAD_FAST_LOAD_FAST & co.) cannot encode the indexes and are written as two
    # instructions. The map back to the original must still pair each instruction with its
    # own: a break in the copy resumes at the right place (it was off by one, and crashed).
    fn = many_locals
    stack = [(STACK_VALUE, 1), (STACK_NULL, None)] + [(STACK_VALUE, k) for k in range(10)]
    offset = offset_of_line(fn, 3)
    info = resume_code(ResumeSpec(fn.__code__, offset, tuple(k for k, _ in stack), ()))
    originals = {i.offset: i.opname for i in instructions.original(fn.__code__)}
    for ins in instructions.original(info.code):
        if ins.offset in info.original_offset:
            original = originals[info.original_offset[ins.offset]]
            assert ins.opname in (original, *_PARTS.get(original, ())), (ins, original)
    assert resume_at_line(fn, (2,), 3) == fn(2)


def test_stack_arguments_are_named_after_their_slot_and_nulls_take_none():
    spec = ResumeSpec(polynomial.__code__, 0, (STACK_NULL, STACK_VALUE, STACK_CONTEXT), ("k",))
    assert spec.argnames == ("___stack1", "___stack2", "k")
    assert spec.arrange(("s1", "s2"), ("k",)) == ("s1", "s2", "k")
