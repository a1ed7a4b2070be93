"""Facts about a code object's original bytecode: live locals, loops, instruction successors.

Computed on ``dis`` instructions (original offsets), since resume functions are built from
the original code and must receive exactly the locals that the rest of it reads.
"""

from __future__ import annotations

import dis
from types import CodeType

from ..code_cache import CodeCache
from . import instructions

_READS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR"}
_WRITES = {"STORE_FAST", "DELETE_FAST"}
_NO_FALLTHROUGH = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD",
                   "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT"}  # fmt: skip


def _uses_defs(ins: dis.Instruction) -> tuple[tuple[str, ...], tuple[str, ...]]:
    op, arg = ins.opname, ins.argval
    if op in _READS:
        return (arg,), ()
    if op in _WRITES:
        return (), (arg,)
    if op == "LOAD_FAST_LOAD_FAST":
        return tuple(arg), ()
    if op == "STORE_FAST_LOAD_FAST":
        return (arg[1],), (arg[0],)
    if op == "STORE_FAST_STORE_FAST":
        return (), tuple(arg)
    return (), ()


_FLOWS = CodeCache()
_LIVENESS = CodeCache()


def _flow(code: CodeType):
    return _FLOWS.get(code, lambda: _make_flow(code))


def _make_flow(code: CodeType):
    instrs = instructions.original(code)
    index = {ins.offset: n for n, ins in enumerate(instrs)}
    # A jump to an instruction with an EXTENDED_ARG prefix targets the prefix's offset.
    for ins in reversed(list(dis.get_instructions(code))):
        if ins.offset not in index:
            index[ins.offset] = index.get(ins.offset + 2, len(instrs) - 1)
    handlers = instructions.handlers(code)
    successors: list[list[int]] = []  # normal flow
    with_handlers: list[list[int]] = []  # and where an exception goes
    for n, ins in enumerate(instrs):
        nxt = []
        if ins.opname not in _NO_FALLTHROUGH and n + 1 < len(instrs):
            nxt.append(n + 1)
        if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
            nxt.append(index[ins.argval])
        successors.append(nxt)
        entry = handlers.get(ins.offset)
        with_handlers.append(nxt + ([index[entry.target]] if entry is not None else []))
    return instrs, index, with_handlers, successors


def _live_in(code: CodeType) -> tuple[frozenset, ...]:
    return _LIVENESS.get(code, lambda: _make_live_in(code))


def _make_live_in(code: CodeType) -> tuple[frozenset, ...]:
    instrs, _, successors, _ = _flow(code)
    live = [frozenset()] * len(instrs)
    changed = True
    while changed:
        changed = False
        for n in reversed(range(len(instrs))):
            out = frozenset().union(*(live[s] for s in successors[n]))
            uses, defs = _uses_defs(instrs[n])
            new = (out - set(defs)) | set(uses)
            if new != live[n]:
                live[n], changed = new, True
    return tuple(live)


def live_locals_at(code: CodeType, offset: int) -> frozenset[str]:
    """Local variables read (before being written) on some path from ``offset`` on."""
    _, index, _, _ = _flow(code)
    live = _live_in(code)[index[offset]]
    first = implicit_self(code)
    return live | {first} if first is not None else live


def in_argument_order(code: CodeType, names) -> tuple[str, ...]:
    """Locals passed on to a copy of ``code``: sorted, with a method's implicit ``self`` first
    (where a zero-argument ``super()`` looks for it)."""
    first = implicit_self(code)
    return tuple(sorted(names, key=lambda name: (name != first, name)))


def implicit_self(code: CodeType) -> str | None:
    """The argument a zero-argument ``super()`` reads without naming it (3.11: the frame's first
    local; a method using ``super()`` has a ``__class__`` cell)."""
    if "__class__" in code.co_freevars and code.co_argcount:
        return code.co_varnames[0]
    return None


def next_offset(code: CodeType, offset: int) -> int:
    """Offset of the instruction after the one at ``offset``."""
    instrs, index, _, _ = _flow(code)
    return instrs[index[offset] + 1].offset


def in_loop(code: CodeType, offset: int) -> bool:
    """Whether normal control flow from ``offset`` can come back to it or before it (a loop).

    Exception handlers are not followed: an except clause that jumps back to the code after
    its try block is not a loop.
    """
    instrs, index, _, successors = _flow(code)
    start = index[offset]
    seen, todo = {start}, [start]
    while todo:
        n = todo.pop()
        for m in successors[n]:
            if m <= start:
                return True
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return False


def outermost_loop_head(code: CodeType, offset: int) -> int | None:
    """The offset of the first instruction of the outermost loop that holds ``offset``: the
    earliest instruction that normal control flow can reach from ``offset`` and come back from
    to ``offset`` (in structured code, the target of that loop's backward jump). None outside
    loops."""
    instrs, index, _, successors = _flow(code)
    start = index[offset]
    ahead = _reachable(successors, start)
    predecessors: list[list[int]] = [[] for _ in instrs]
    for n, nxt in enumerate(successors):
        for m in nxt:
            predecessors[m].append(n)
    behind = _reachable(predecessors, start)
    cycle = (ahead & behind) | ({start} if start in ahead else set())
    return instrs[min(cycle)].offset if cycle else None


def _reachable(edges: list[list[int]], start: int) -> set[int]:
    """Instructions reached from ``start`` by one or more steps along ``edges``."""
    seen: set[int] = set()
    todo = list(edges[start])
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(edges[n])
    return seen


def read_before_written(code: CodeType, offset: int, names: set[str], barrier: int) -> set[str]:
    """Those of ``names`` that some path from ``offset`` reads before writing them, following
    normal flow and exception handlers but never entering the instruction at ``barrier``."""
    instrs, index, with_handlers, _ = _flow(code)
    stop = index[barrier]
    found = set()
    for name in names:
        seen, todo = set(), [index[offset]]
        while todo and name not in found:
            n = todo.pop()
            if n in seen or n == stop:
                continue
            seen.add(n)
            uses, defs = _uses_defs(instrs[n])
            if name in uses:
                found.add(name)
            elif name not in defs:
                todo.extend(with_handlers[n])
    return found


def deleted_locals(code: CodeType) -> frozenset[str]:
    """Local variables some ``del`` statement unbinds."""
    return frozenset(i.argval for i in instructions.original(code) if i.opname == "DELETE_FAST")
