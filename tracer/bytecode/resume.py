"""Resume functions: a copy of a frame's original code that continues after a graph break.

A resume function takes the live stack values and the live locals as arguments, and all the
frame's cells (its cellvars and freevars) as its closure, so ``nonlocal`` writes stay shared.
Its prologue rebuilds the stack (NULLs re-pushed, supported context managers re-entered with
``BEFORE_WITH``) and jumps to the original instruction where execution continues. It is always
made from the *original* code, keyed by (code, offset, stack layout, live locals), so chains of
breaks and converging branches reuse resume functions instead of multiplying them.

    def f(x):                       def f(___stack0, y):   # resume at line 3
        y = g(x)                        <COPY_FREE_VARS, RESUME>
        print(y)          ----->        LOAD_FAST ___stack0 ... JUMP to line 3's next instruction
        return y + 1                    ... the original instructions, unchanged ...
"""

from __future__ import annotations

import dis
import inspect
from dataclasses import dataclass
from types import CodeType

from bytecode import Bytecode, CellVar, FreeVar, Instr, Label

from . import instructions
from .analysis import implicit_self
from .code_cache import CodeCache

STACK_NULL = "null"
STACK_VALUE = "value"
STACK_CONTEXT = "context"  # an active with-block's __exit__: re-entered from a passed manager


class CodeSpec:
    """What a copy of a frame's ``code`` is made for. Two code objects with the same bytecode
    compare equal in Python even from different files, so specs compare by the code's identity
    and the rest of their `key`."""

    code: CodeType

    def key(self) -> tuple:
        raise NotImplementedError

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    @property
    def cell_names(self) -> tuple[str, ...]:
        """The copy's closure: all the frame's cells, cellvars then freevars."""
        return self.code.co_cellvars + self.code.co_freevars


@dataclass(frozen=True, eq=False)
class ResumeSpec(CodeSpec):
    """Where and how a frame continues."""

    code: CodeType  # the original code object
    offset: int  # original offset where execution continues
    stack: tuple[str, ...]  # one of STACK_* per stack slot, bottom first
    live_locals: tuple[str, ...]

    def key(self) -> tuple:
        return (id(self.code), self.offset, self.stack, self.live_locals)

    @property
    def argnames(self) -> tuple[str, ...]:
        """Stack values, then live locals; a method's ``self`` comes first, where a zero-argument
        ``super()`` looks for it (see `arrange`)."""
        stack_args = tuple(
            f"___stack{i}" for i, kind in enumerate(self.stack) if kind != STACK_NULL
        )
        return self.arrange(stack_args, self.live_locals)

    def arrange(self, stack: tuple, live: tuple) -> tuple:
        """Stack items and live-local items, in the order of `argnames`."""
        if self.live_locals[:1] == (implicit_self(self.code),):
            return live[:1] + stack + live[1:]
        return stack + live


@dataclass(frozen=True)
class ResumeCode:
    spec: ResumeSpec
    code: CodeType
    original_offset: dict  # offset in `code` -> offset in spec.code (for breaks inside it)
    line: int


_PREFIX_OPS = {"MAKE_CELL", "COPY_FREE_VARS", "RESUME"}
# resume code -> how it was made; and original code -> {spec: its resume code}
RESUME_CODES = CodeCache(origin=lambda code, info: info.spec.code)
_BY_ORIGINAL = CodeCache()


def resume_code(spec: ResumeSpec) -> ResumeCode:
    """The code of the resume function for ``spec``: a copy of ``spec.code`` that starts at
    ``spec.offset`` (made once per spec, then cached with the original code).

    What it builds, for a frame stopped before ``spec.offset`` with ``spec.stack`` on its stack::

        COPY_FREE_VARS n                     # if the frame has cells: here all are free vars
        RESUME 0
        for each stack slot, bottom first:
            PUSH_NULL                                     # STACK_NULL
            LOAD_FAST ___stack<i>                         # STACK_VALUE
            LOAD_FAST ___stack<i>; BEFORE_WITH; POP_TOP   # STACK_CONTEXT: re-enter the with
        JUMP_FORWARD target                  # the original instruction at spec.offset
        <the original instructions, unchanged; execution enters them at the target>

    Parameters, in order (`ResumeSpec.argnames`): the stack values, ``___stack<i>`` for each
    slot that is not a NULL (a with-block's slot takes a fresh context manager: its
    ``__enter__`` runs again, and its ``__exit__`` stands where the original's stood), then
    ``spec.live_locals``; a method's implicit ``self``, when live, comes first, where a
    zero-argument ``super()`` looks for it. No ``*args``/``**kwargs``, no defaults. All the
    frame's cells, cellvars then freevars (`ResumeSpec.cell_names`), make the closure: the
    caller (`entry.resume_function`, which the glue calls as ``f(cells, *values)``) passes the
    stopped frame's own cells, so ``nonlocal`` writes stay shared. The original's
    ``MAKE_CELL``/``COPY_FREE_VARS``/``RESUME`` prefix is dropped, and its cellvar accesses
    become freevar ones.

    What stays the same: the name, qualname, file, first line, the line number and position of
    every copied instruction, and the exception table (each copied instruction is protected by
    the same handler at the same stack depth: see `assemble`; `_check_handlers` refuses a copy
    where that is not so). The stack may grow by two beyond the original's (``BEFORE_WITH``).

    It copies the *original* code, never the code that was traced (which may itself be a resume
    function, with a prologue): when a resume function breaks again, the continuation maps the
    break back to the original code and offset (`original_location`, through ``original_offset``
    of the returned `ResumeCode`) and asks for the resume code there. So a chain of breaks never
    stacks prologues on prologues, and two branches or two breaks that continue at the same
    place with the same stack layout and live locals share one spec, one code object, and one
    resume function with its cache of compiled entries. ``ResumeCode.line`` is the target's line.
    """
    made = _BY_ORIGINAL.get(spec.code, dict)
    if spec not in made:
        made[spec] = _make_resume_code(spec)
    return made[spec]


def _make_resume_code(spec: ResumeSpec) -> ResumeCode:
    prologue = []
    for i, kind in enumerate(spec.stack):
        if kind == STACK_NULL:
            prologue.append(Instr("PUSH_NULL"))
        elif kind == STACK_CONTEXT:
            prologue += [Instr("LOAD_FAST", f"___stack{i}"), Instr("BEFORE_WITH"), Instr("POP_TOP")]
        else:
            prologue.append(Instr("LOAD_FAST", f"___stack{i}"))
    code, offsets, line = entered_copy(spec.code, spec.offset, prologue, spec.argnames,
                                       spec.cell_names, extra_stack=2)  # BEFORE_WITH  # fmt: skip
    info = ResumeCode(spec, code, offsets, line)
    return RESUME_CODES.get(code, lambda: info)


def entered_copy(original: CodeType, offset: int, prologue: list, argnames: tuple, cells: tuple,
                 extra_stack: int, rewrite=None) -> tuple[CodeType, dict, int]:  # fmt: skip
    """A copy of ``original`` that takes ``argnames`` and ``cells`` (its closure), runs
    ``prologue`` and jumps to the instruction at ``offset``: (code, {offset in the copy: offset
    in ``original``}, the line of ``offset``). ``rewrite(items, origin)`` may change the copied
    items (the `bytecode` library's instructions and labels; ``origin`` maps an instruction's
    id to its offset in ``original``) in place, keeping each original instruction's stack (see
    `assemble`)."""
    bc = Bytecode.from_code(original, conserve_exception_block_stackdepth=True)
    # The `bytecode` library lists the same instructions as `instructions.original`, in order.
    real = instructions.original(original)
    instrs = [i for i in bc if isinstance(i, Instr)]
    origin = {id(ins): r.offset for r, ins in zip(real, instrs)}
    target = next(ins for ins, r in zip(instrs, real) if r.offset == offset)
    line = next((r.positions.lineno for r in real if r.offset == offset and r.positions), None)
    label = Label()
    body = []
    prefix_done = False
    for item in bc:
        if item is target:
            body.append(label)
        if isinstance(item, Instr):
            if not prefix_done and item.name in _PREFIX_OPS:
                continue
            prefix_done = True
            if isinstance(item.arg, CellVar):
                item.arg = FreeVar(item.arg.name)
            if item.name in _SUPERINSTRUCTIONS:
                body += _parts(item, origin)
                continue
        body.append(item)
    if rewrite is not None:
        rewrite(body, origin)

    head = [Instr("COPY_FREE_VARS", len(cells))] if cells else []
    head.append(Instr("RESUME", 0))
    new = Bytecode(head + prologue + [Instr("JUMP_FORWARD", label)] + body)
    new.argnames = list(argnames)
    new.argcount = len(argnames)
    new.posonlyargcount = 0
    new.kwonlyargcount = 0
    new.cellvars = []
    new.freevars = list(cells)
    new.flags = (bc.flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)) | (
        inspect.CO_NESTED if cells else 0
    )
    new.name = original.co_name
    new.qualname = original.co_qualname
    new.filename = original.co_filename
    new.first_lineno = original.co_firstlineno
    new.docstring = None
    code = assemble(new, original, extra_stack)
    made = instructions.original(code)
    ours = [i for i in new if isinstance(i, Instr)]
    if len(made) != len(ours):  # the offsets below pair them up one to one
        raise RuntimeError(f"generated code for {code.co_qualname}: {len(made)} instructions "
                           f"written for {len(ours)}")  # fmt: skip
    offsets = {m.offset: origin[id(o)] for m, o in zip(made, ours) if id(o) in origin}
    _check_handlers(code, original, offsets)
    return code, offsets, line or original.co_firstlineno


# 3.13's pairs of loads and stores in one instruction: a copy with more locals (its parameters
# first) may need indexes past the 4 bits each part has, and the `bytecode` library then writes
# two instructions for one; the copy writes the parts itself, so its instructions stay one to
# one with what is written.
_SUPERINSTRUCTIONS = {
    "LOAD_FAST_LOAD_FAST": ("LOAD_FAST", "LOAD_FAST"),
    "STORE_FAST_STORE_FAST": ("STORE_FAST", "STORE_FAST"),
    "STORE_FAST_LOAD_FAST": ("STORE_FAST", "LOAD_FAST"),
}


def _parts(ins: Instr, origin: dict) -> list[Instr]:
    """A superinstruction as its two parts, both from its original offset (the first part is
    ``ins`` itself, so jumps to it still land on the pair)."""
    first, second = _SUPERINSTRUCTIONS[ins.name]
    names = ins.arg
    after = Instr(second, names[1], location=ins.location)
    ins.set(first, names[0])
    origin[id(after)] = origin[id(ins)]
    return [ins, after]


def assemble(bc: Bytecode, original: CodeType, extra_stack: int) -> CodeType:
    """A code object from a rewritten copy of ``original``'s bytecode, checked before use.

    Each original instruction sees the same stack in the copy as in the original, so the
    exception table keeps the original's depths as read: recomputing them from control flow
    would fail for try/with blocks that a resume function jumps into (their start is dead
    code, and the ``bytecode`` library then writes a placeholder depth that crashes CPython
    when an exception unwinds there). The stack may grow by ``extra_stack`` beyond the
    original's (a prologue, routed calls).
    """
    code = bc.to_code(stacksize=original.co_stacksize + extra_stack,
                      compute_exception_stack_depths=False)  # fmt: skip
    check_code(code)
    return code


def check_code(code: CodeType) -> None:
    """Refuse a generated code object CPython could crash on (an internal error, reported as
    such, makes the frame run eagerly instead)."""
    for entry in dis.Bytecode(code).exception_entries:
        if entry.depth > code.co_stacksize:
            raise RuntimeError(f"generated code for {code.co_qualname}: exception depth "
                               f"{entry.depth} exceeds the stack size {code.co_stacksize}")  # fmt: skip
    nargs = code.co_argcount + code.co_kwonlyargcount
    nargs += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    if nargs > code.co_nlocals or len(code.co_varnames) != code.co_nlocals:
        raise RuntimeError(f"generated code for {code.co_qualname}: {nargs} parameters, "
                           f"{code.co_nlocals} locals, {len(code.co_varnames)} local names")  # fmt: skip


def _check_handlers(code: CodeType, original: CodeType, offsets: dict) -> None:
    """Every copied instruction is protected as in the original (same depth, same lasti)."""
    made, before = _protection(code), _protection(original)
    for offset, original_offset in offsets.items():
        if made.get(offset) != before.get(original_offset):
            raise RuntimeError(f"resume code for {code.co_qualname}: the exception handling of "
                               f"offset {original_offset} changed")  # fmt: skip


def _protection(code: CodeType) -> dict[int, tuple[int, bool]]:
    return {offset: (e.depth, e.lasti) for offset, e in instructions.handlers(code).items()}


def original_location(code: CodeType, offset: int, registry: CodeCache) -> tuple[CodeType, int]:
    """Map (resume code, offset) back to (original code, offset); identity otherwise."""
    info = registry.lookup(code)
    if info is None:
        return code, offset
    return info.spec.code, info.original_offset.get(offset, -1)  # -1: in the prologue
