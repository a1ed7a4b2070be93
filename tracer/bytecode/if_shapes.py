"""Where an ``if`` is in bytecode: at a conditional jump, the two sides of the ``if`` it tests
and where they meet again (`if_shape`), in each shape CPython 3.11-3.13 compiles an ``if``, an
``a and b`` test, an ``assert`` or an early ``return`` to. `loops.conds` traces the sides into
a cond node; `loops.while_loops` reads a loop condition's ``a and b`` (`boolean_chain`).
"""

from __future__ import annotations

from dataclasses import dataclass

TESTS = ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE")


@dataclass(frozen=True)
class IfShape:
    """An ``if`` around a conditional jump: each side ``instrs[start:stop]`` (the else side may
    be empty), and ``join``, where the two meet again (the translator goes on there)."""

    then_side: tuple[int, int]
    else_side: tuple[int, int]
    join: int
    gives_test: int = -1  # the side (0, 1) that gives the test's own value (`and`, `or`)


def if_shape(instrs, at: int) -> IfShape | None:
    """The ``if`` whose test is the forward conditional jump ``instrs[at]``, if it has one of
    the shapes CPython compiles an ``if`` to:

    - ``if c: A`` : the jump goes past A, to where the code goes on;
    - ``if c: A else: B`` : A ends with a jump over B;
    - either as a loop body's last statement: a side ends with its own jump back to the loop's
      head (3.12+), where the other jumps back too;
    - either before a ``return`` (3.12+): each side ends with its own copy of the code from
      there on, the copy on the jumped-to side is taken as the code after the ``if``;
    - ``if c: return a`` then ``return b`` (or an ``else``): each side leaves the value it
      returns on the stack; the cond node's is returned by the else side's ``return``;
    - ``assert c`` and ``if c: raise ...``: one side raises (`raises_always`), the other
      is empty.
    """
    test = instrs[at]
    if test.opname not in TESTS or test.target is None:
        return None
    chain = boolean_chain(instrs, at)
    if chain is not None:
        return chain
    if test.target <= at:
        return None
    fall, jumped = at + 1, test.target
    last = instrs[jumped - 1]
    if last.opname == "RAISE_VARARGS" and jumped - 1 > at:
        join, sides = jumped, ((fall, jumped), (jumped, jumped))
    elif last.opname == "RETURN_VALUE" and jumped - 1 > at:
        tail = _copied_tail(instrs, fall, jumped)
        if tail is None:
            return None
        size, end = tail
        sides = ((fall, jumped - size), (jumped, end - size))
        join = end - size
    elif last.opname == "JUMP" and jumped - 1 > at and not fall <= last.target < jumped:
        if last.target >= jumped:  # A jumps over B
            join = last.target
        else:  # both sides end jumping back to a loop's head: B ends at its last such jump
            ends = _jumps_reached(instrs, jumped, landing(instrs, last.target))
            if not ends:
                return None
            join = max(ends)
        sides = ((fall, jumped - 1), (jumped, join))
    else:
        join, stop = jumped, jumped
        after = instrs[join] if join < len(instrs) else None
        if last.opname == "JUMP" and after is not None and after.opname == "JUMP" \
                and last.target == after.target and jumped - 1 > at:  # fmt: skip
            stop = jumped - 1  # A's own jump back, where the code after jumps back too
        sides = ((fall, stop), (jumped, jumped))
    if test.opname == "POP_JUMP_IF_TRUE":  # falls through when the value is false
        sides = sides[::-1]
    return IfShape(sides[0], sides[1], join)


def boolean_chain(instrs, at: int) -> IfShape | None:
    """``a and b`` or ``a or b`` as a test (``if a > 0 and b > 0:``): the jump on ``a`` and the
    next one, on ``b``, meet where the test's truth is known. The cond node computes the test's
    value there, as Python does: ``b`` only where ``a`` does not decide (``a and b`` is ``a``
    where ``a`` is false); the translator goes on at ``b``'s jump with that value."""
    test = instrs[at]
    back = instrs[at + 1] if at + 1 < len(instrs) else None
    if test.target == at + 2 and back is not None and back.opname == "JUMP" \
            and back.target <= at:  # fmt: skip
        # 3.12+'s bottom test of `while a or b:` (`while not (a and b):`): `a` true (false)
        # jumps back at once, else `b` decides, jumping back the same way
        k = _next_test(instrs, at + 2)
        after = instrs[k + 1] if k is not None and k + 1 < len(instrs) else None
        if k is None or k == at + 2 or instrs[k].opname != test.opname \
                or instrs[k].target != k + 2 or after.opname != "JUMP" \
                or after.target != back.target:  # fmt: skip
            return None
        if test.opname == "POP_JUMP_IF_FALSE":
            return IfShape((k, k), (at + 2, k), k, gives_test=0)
        return IfShape((at + 2, k), (k, k), k, gives_test=1)
    k = _next_test(instrs, at + 1)
    if k is None:
        return None
    second = instrs[k]
    if second.target is None or k == at + 1:
        return None
    if second.opname == test.opname and second.target == test.target:
        # both jump to one place (forward, or back to a loop's head at 3.11's bottom test of
        # `while a or b:` and `while not (a and b):`)
        if test.opname == "POP_JUMP_IF_FALSE":
            return IfShape((at + 1, k), (k, k), k, gives_test=1)  # false: `a` itself
        return IfShape((k, k), (at + 1, k), k, gives_test=0)  # true: `a` itself
    if second.target <= at and test.target == k + 1 and test.opname != second.opname:
        # 3.11's bottom test of `while a and b:` (jumps back while true), of
        # `while not (a or b):` (while false)
        if test.opname == "POP_JUMP_IF_FALSE":
            return IfShape((at + 1, k), (k, k), k, gives_test=1)
        return IfShape((k, k), (at + 1, k), k, gives_test=0)
    if second.target <= k:
        return None
    if test.target == k + 1 and test.opname != second.opname:
        # `a` jumps past `b`'s test into where the test's value goes on: `if a or b:`, and the
        # top test of `while not (a and b):`
        if test.opname == "POP_JUMP_IF_TRUE":
            return IfShape((k, k), (at + 1, k), k, gives_test=0)  # true: `a` itself
        return IfShape((at + 1, k), (k, k), k, gives_test=1)  # false: `a` itself
    return None


def _next_test(instrs, start: int) -> int | None:
    """The first conditional jump from ``instrs[start]`` on, where no other jump, return or
    raise comes before it."""
    for k in range(start, len(instrs)):
        ins = instrs[k]
        if ins.opname in TESTS:
            return k
        if ins.target is not None or ins.opname in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
            return None
    return None


def _copied_tail(instrs, fall: int, jumped: int) -> tuple[int, int] | None:
    """``(size, end)`` where the side ``instrs[fall:jumped]`` ends with a copy of the last
    ``size`` instructions of ``instrs[jumped:end]`` (both ending with the same ``return``,
    copies of the same lines, starting at a line's first instruction); or, where the two
    ``return`` statements differ, ``(1, end)``: the returns themselves."""
    for end in range(jumped + 1, len(instrs) + 1):
        if instrs[end - 1].opname != "RETURN_VALUE":
            continue
        size = 0
        while size < min(jumped - fall, end - jumped) and _same_instruction(
            instrs[jumped - 1 - size], instrs[end - 1 - size]
        ):
            size += 1
        while size and not (
            _starts_line(instrs, jumped - size) and _starts_line(instrs, end - size)
        ):
            size -= 1
        return (size or 1, end)
    return None


def raises_always(instrs, start: int, stop: int) -> bool:
    """Whether the side ``instrs[start:stop]`` always ends raising (``raise``, ``assert
    False``): it ends with a raise that no jump in it passes over. A side that ends with an
    ``assert`` whose test can hold jumps out of it there, past the raise (to the code after
    the branch, or on 3.12 back to a loop's head), and is traced: its assert a cond of its own."""
    if not (stop > start and instrs[stop - 1].opname == "RAISE_VARARGS"):
        return False
    return not any(
        ins.target is not None and not start <= ins.target < stop for ins in instrs[start:stop]
    )


def _jumps_reached(instrs, start: int, target: int) -> list[int]:
    """The jumps that land at ``target`` which control flow from ``start`` reaches first
    (it is not followed past them, nor past a return)."""
    found, seen, todo = [], set(), [start]
    while todo:
        at = todo.pop()
        if at in seen or at >= len(instrs):
            continue
        seen.add(at)
        ins = instrs[at]
        if ins.opname == "JUMP" and landing(instrs, at) == target:
            found.append(at)
            continue
        if ins.opname in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
            continue
        if ins.target is not None and ins.target > start:
            todo.append(ins.target)
        if ins.opname != "JUMP":
            todo.append(at + 1)
    return found


def _same_instruction(a, b) -> bool:
    return (a.opname, a.arg, a.line, a.target) == (b.opname, b.arg, b.line, b.target)


def _starts_line(instrs, at: int) -> bool:
    return at == 0 or instrs[at - 1].line != instrs[at].line


def side_exits(instrs, start: int, stop: int, join: int) -> frozenset[int]:
    """Where a side ``instrs[start:stop]`` ends: at its stop, or at a jump that lands where the
    join does (CPython threads jumps: an inner ``if``'s side at the end of an outer one jumps
    straight to a loop's head, or past the outer ``else``), or where that lands (an inner
    ``if`` at the end of the side, a cond node, goes on at its own join: there)."""
    end = landing(instrs, join)
    return frozenset({stop, end, *(k for k in range(start, stop) if instrs[k].opname == "JUMP"
                                   and landing(instrs, instrs[k].target) == end)})  # fmt: skip


def landing(instrs, at: int) -> int:
    """Where a chain of unconditional jumps from ``instrs[at]`` leads."""
    for _ in range(len(instrs)):
        if at >= len(instrs) or instrs[at].opname != "JUMP":
            break
        at = instrs[at].target
    return at
