"""A split loop as one plain function: what runs when compiling the loop's body does not pay
(`loops.loop_driver`).

The plain loop is a copy of the frame's code that enters the loop at its head with the loop's
state (and, for a for loop, the iterator the driver holds) and runs it as Python does::

    def f(xs):                           def f(n, ___iter):              # the loop, plainly
        n = 0                                <push ___iter; jump to FOR_ITER>
        for x in xs:           ----->        for x in <___iter>:
            if x > 0:                            if x > 0:
                n += 1                               n += 1
        return n                             return (2, n)      # was: the loop ran out
                                             ... the rest of f, reached by a ``break`` ...

An exhausted for loop returns ``(EXHAUSTED, *state)``: the driver goes on after the loop as a
split loop does. ``return v`` becomes ``return (RETURNED, v)``, whether inside the loop or in
the rest of the frame that a ``break`` (or a while loop's exit) runs in the copy, plainly.

The *budgeted* form takes ``___budget`` too and returns ``(CONTINUE, *state)`` once it has run
that many iterations: the driver times a few iterations of it against the compiled body's, then
goes on with either one from the same iterator and state.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import CodeType

from bytecode import BinaryOp, Compare, Instr, Label

from . import features
from .body_function import (
    CONTINUE,
    BodySpec,
    forward_jump,
    labels_before,
    returned_tuple,
    returns_state,
)
from .code_cache import CodeCache
from .resume import entered_copy

EXHAUSTED = 2
ITER, BUDGET = "___iter", "___budget"


@dataclass(frozen=True, eq=False)
class LoopSpec(BodySpec):
    """The loop of a `BodySpec`, run plainly; ``budgeted``: for at most ``___budget``
    iterations."""

    budgeted: bool = False

    def key(self) -> tuple:
        return (*super().key(), self.budgeted)

    @property
    def argnames(self) -> tuple[str, ...]:
        """The state, the values under the loop, a for loop's iterator, then the budget."""
        iterator = (ITER,) if self.is_for else ()
        return self.state + self.under_names + iterator + ((BUDGET,) if self.budgeted else ())


_BY_ORIGINAL = CodeCache()


def loop_code(spec: LoopSpec) -> CodeType:
    """The plain loop's code for ``spec`` (made once, then cached with the frame's code)."""
    made = _BY_ORIGINAL.get(spec.code, dict)
    if spec not in made:
        made[spec] = _make_loop_code(spec)
    return made[spec]


def _make_loop_code(spec: LoopSpec) -> CodeType:
    prologue = spec.under_prologue() + ([Instr("LOAD_FAST", ITER)] if spec.is_for else [])

    def rewrite(items: list, origin: dict) -> None:
        heads = labels_before(items, origin, spec.head)
        head_ids = {id(label) for label in heads}
        next_iteration, exhausted = Label(), Label()
        loc = None
        for n in reversed(range(len(items))):
            ins = items[n]
            if not isinstance(ins, Instr):
                continue
            if origin.get(id(ins)) == spec.head:
                loc = ins.location
                if spec.is_for:  # the loop's own FOR_ITER: it runs out at the new exit
                    ins.arg = exhausted
            elif spec.budgeted and isinstance(ins.arg, Label) and id(ins.arg) in head_ids:
                ins.name = forward_jump(ins.name)  # the count-down comes last
                ins.arg = next_iteration
            elif ins.name in ("RETURN_VALUE", "RETURN_CONST"):
                items[n : n + 1] = returned_tuple(ins)
        if spec.is_for:
            skipped = [Instr(name, location=loc) for name in features.SKIPPED_AT_LOOP_EXIT]
            items += [exhausted, *skipped, *returns_state(EXHAUSTED, spec.state, loc)]
        if spec.budgeted:
            items += [next_iteration, *_count_down(heads[0], loc),
                      *returns_state(CONTINUE, spec.state, loc)]  # fmt: skip

    code, _, _ = entered_copy(spec.code, spec.head, prologue, spec.argnames, spec.cell_names,
                              extra_stack=len(spec.state) + 2, rewrite=rewrite)  # fmt: skip
    return code


def _count_down(head: Label, loc) -> list:
    """``___budget -= 1``, then back to the loop's head while some budget is left."""
    spent = Label()
    return [
        Instr("LOAD_FAST", BUDGET, location=loc),
        Instr("LOAD_CONST", 1, location=loc),
        Instr("BINARY_OP", BinaryOp.SUBTRACT, location=loc),
        Instr("STORE_FAST", BUDGET, location=loc),
        Instr("LOAD_FAST", BUDGET, location=loc),
        Instr("LOAD_CONST", 0, location=loc),
        Instr("COMPARE_OP", Compare.GT, location=loc),  # a bool, as 3.13's jumps require
        Instr(features.JUMP_FORWARD_IF_FALSE, spent, location=loc),
        Instr("JUMP_BACKWARD", head, location=loc),
        spent,
    ]
