"""A loop's body as a function: what a frame runs per iteration when a graph break inside the
loop keeps the loop itself in Python (`loops.split_loop`).

The body function is a copy of the frame's code that starts where one iteration starts and
gives control back where the next one would begin::

    def f(xs, t):                        def f(___item, t):      # one iteration, as a function
        for x in xs:           ----->        <push a stand-in for the iterator, ___item; jump>
            t = t + x                        x = ___item; t = t + x; print(t)
            print(t)                         return (0, t)          # was: jump back to FOR_ITER
        return t                             ... after a break, the rest of f ...
                                             return (1, t)          # was: return t

Every jump to the loop's first instruction (the backward jump, ``continue``) becomes
``return (0, *state)``: the loop's state, the locals live at its head, for the next iteration.
Every ``return v`` becomes ``return (1, v)``: the frame returned (from inside the loop, or
after a ``break`` left it and ran the rest of the frame, which the copy holds too). Nothing
else changes, so the body's own graph breaks resume as in straight-line code (the copy has no
way back to the loop's head), and its inner loops stay loops.
"""

from __future__ import annotations

import dis
from dataclasses import dataclass
from types import CodeType

from bytecode import Instr, Label

from .code_cache import CodeCache
from .resume import RESUME_CODES, STACK_NULL, CodeSpec, entered_copy

CONTINUE, RETURNED = 0, 1
ITEM = "___item"
_LOAD_CHECKED = "LOAD_FAST_CHECK" if "LOAD_FAST_CHECK" in dis.opmap else "LOAD_FAST"


@dataclass(frozen=True, eq=False)
class BodySpec(CodeSpec):
    """One loop of one code object, and the state its iterations pass on."""

    code: CodeType  # the frame's code
    head: int  # offset of the loop's first instruction (FOR_ITER, or a while loop's body)
    start: int  # offset where an iteration starts (after FOR_ITER; a while loop's head)
    state: tuple[str, ...]  # the locals live at the head, in the order of `argnames`
    under: tuple[str, ...] = ()  # STACK_NULL or STACK_VALUE per stack slot under the loop

    @property
    def is_for(self) -> bool:
        return self.head != self.start

    def key(self) -> tuple:
        return (id(self.code), self.head, self.state, self.under)

    @property
    def argnames(self) -> tuple[str, ...]:
        """The state (a method's implicit ``self`` first: `loops.split_loop` orders it so), the
        values under the loop on the stack (an enclosing loop's iterator, the list a
        comprehension builds), then a for loop's item."""
        return self.state + self.under_names + ((ITEM,) if self.is_for else ())

    @property
    def under_names(self) -> tuple[str, ...]:
        return tuple(f"___stack{i}" for i, kind in enumerate(self.under) if kind != STACK_NULL)

    def under_prologue(self) -> list[Instr]:
        """Instructions putting the values under the loop back on the stack."""
        return [Instr("PUSH_NULL") if kind == STACK_NULL else Instr("LOAD_FAST", f"___stack{i}")
                for i, kind in enumerate(self.under)]  # fmt: skip


_BY_ORIGINAL = CodeCache()
BODY_CODES = CodeCache(origin=lambda code, spec: spec.code)  # body code -> its BodySpec


def body_code(spec: BodySpec) -> tuple[CodeType, int]:
    """The body function's code for ``spec`` and the line an iteration starts at (made once,
    then cached with the frame's code)."""
    made = _BY_ORIGINAL.get(spec.code, dict)
    if spec not in made:
        made[spec] = _make_body_code(spec)
    return made[spec]


def _make_body_code(spec: BodySpec) -> tuple[CodeType, int]:
    prologue = spec.under_prologue()
    if spec.is_for:  # the iterator's slot holds None: no iteration reads it (FOR_ITER never runs)
        prologue += [Instr("LOAD_CONST", None), Instr("LOAD_FAST", ITEM)]

    def rewrite(items: list, origin: dict) -> None:
        head = {id(label) for label in labels_before(items, origin, spec.head)}
        next_iteration = Label()
        for n in reversed(range(len(items))):
            ins = items[n]
            if not isinstance(ins, Instr):
                continue
            if isinstance(ins.arg, Label) and id(ins.arg) in head:
                ins.name = forward_jump(ins.name)  # the stub comes last
                ins.arg = next_iteration
            elif ins.name in ("RETURN_VALUE", "RETURN_CONST"):
                items[n : n + 1] = returned_tuple(ins)
        loc = next(
            i.location for i in items if isinstance(i, Instr) and origin.get(id(i)) == spec.head
        )
        stub = [Instr("POP_TOP", location=loc)] if spec.is_for else []
        items += [next_iteration, *stub, *returns_state(CONTINUE, spec.state, loc)]

    code, _, line = entered_copy(spec.code, spec.start, prologue, spec.argnames, spec.cell_names,
                                 extra_stack=len(spec.state) + 2, rewrite=rewrite)  # fmt: skip
    BODY_CODES.get(code, lambda: spec)
    return code, line


def returns_state(tag: int, state: tuple[str, ...], location) -> list[Instr]:
    """``return (tag, *state)``: the loop's state handed back to the loop's driver."""
    loads = [Instr(_LOAD_CHECKED, name, location=location) for name in state]
    return [Instr("LOAD_CONST", tag, location=location), *loads,
            Instr("BUILD_TUPLE", len(state) + 1, location=location),
            Instr("RETURN_VALUE", location=location)]  # fmt: skip


def runs_per_iteration(code: CodeType) -> bool:
    """Whether ``code`` is a loop body's (or a resume function's continuing one): it runs once
    per iteration of a split loop."""
    while BODY_CODES.lookup(code) is None:
        info = RESUME_CODES.lookup(code)
        if info is None:
            return False
        code = info.spec.code
    return True


def labels_before(items: list, origin: dict, offset: int) -> list[Label]:
    """The labels standing before the original instruction at ``offset``."""
    for n, ins in enumerate(items):
        if isinstance(ins, Instr) and origin.get(id(ins)) == offset:
            labels = []
            while n and not isinstance(items[n - 1], Instr):
                n -= 1
                if isinstance(items[n], Label):
                    labels.append(items[n])
            return labels
    return []


def forward_jump(name: str) -> str:
    """The forward form of a jump (3.11 has both directions of conditional jumps)."""
    if name.startswith("JUMP_BACKWARD"):
        return "JUMP_FORWARD"
    return name.replace("_BACKWARD_", "_FORWARD_")


def returned_tuple(ins: Instr) -> list[Instr]:
    """``return v`` as ``return (RETURNED, v)``, at the same place."""
    loc = ins.location
    if ins.name == "RETURN_CONST":
        value = ins.arg
        ins.set("RETURN_VALUE")
        before = [
            Instr("LOAD_CONST", RETURNED, location=loc),
            Instr("LOAD_CONST", value, location=loc),
        ]
    else:
        before = [Instr("LOAD_CONST", RETURNED, location=loc), Instr("SWAP", 2, location=loc)]
    return [*before, Instr("BUILD_TUPLE", 2, location=loc), ins]
