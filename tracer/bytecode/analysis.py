"""Facts about a code object's original bytecode: live locals, loops, instruction successors.

Computed on ``dis`` instructions (original offsets), since resume functions are built from
the original code and must receive exactly the locals that the rest of it reads.
"""

from __future__ import annotations

import dis
from types import CodeType

from . import instructions, stack_effects
from .code_cache import CodeCache

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


# -- which instruction pushed each stack slot --------------------------------------------------
# Instructions that push nothing (the rest push one value, unless listed in `_pushes`).
_PUSH_NOTHING_PREFIXES = ("STORE_", "DELETE_", "POP_JUMP", "JUMP", "RETURN_", "SETUP_")
_PUSH_NOTHING = {"POP_TOP", "RAISE_VARARGS", "RERAISE", "NOP", "RESUME", "PRECALL", "KW_NAMES",
                 "LIST_APPEND", "SET_ADD", "MAP_ADD", "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE",
                 "DICT_MERGE", "POP_EXCEPT", "END_FOR", "EXTENDED_ARG", "CACHE", "MAKE_CELL",
                 "COPY_FREE_VARS", "PRINT_EXPR", "IMPORT_STAR", "SETUP_ANNOTATIONS", "POP_BLOCK",
                 "END_ASYNC_FOR", "END_SEND", "INTERPRETER_EXIT"}  # fmt: skip
_PRODUCERS = CodeCache()


def _pushes(ins: dis.Instruction) -> int:
    op, arg = ins.opname, ins.arg or 0
    if op in _PUSH_NOTHING or op.startswith(_PUSH_NOTHING_PREFIXES):
        return 0
    if op in ("LOAD_GLOBAL", "LOAD_SUPER_ATTR") or (
        op == "LOAD_ATTR" and "LOAD_METHOD" not in dis.opmap
    ):
        return 2 if arg & 1 else 1  # with a NULL (a method load: the method and self)
    if op in ("LOAD_METHOD", "BEFORE_WITH", "BEFORE_ASYNC_WITH", "PUSH_EXC_INFO", "CHECK_EG_MATCH",
              "LOAD_FAST_LOAD_FAST"):  # fmt: skip
        return 2
    if op == "UNPACK_SEQUENCE":
        return arg
    if op == "UNPACK_EX":
        return (arg & 0xFF) + (arg >> 8) + 1
    return 1


def stack_producers(code: CodeType, offset: int) -> tuple | None:
    """What each stack slot holds when the instruction at ``offset`` starts, bottom first: a
    pair (index of the instruction in `instructions.original` that pushed it, which of its
    pushes), or None where paths that meet there disagree. None when normal control flow does
    not reach ``offset`` (an exception handler's code) or the stack cannot be followed.

    For messages only (a value carried across a graph break is named by the expression that
    computed it): a forward walk of normal control flow, in which an instruction pops what it
    does not push back (``dis.stack_effect``), ``COPY`` and ``SWAP`` move their slots."""
    states = _PRODUCERS.get(code, lambda: _make_producers(code))
    _, index, _, _ = _flow(code)
    n = index.get(offset)
    return None if n is None else states[n]


def _make_producers(code: CodeType) -> list:
    instrs, index, _, _ = _flow(code)
    states: list = [None] * len(instrs)
    states[0] = ()
    todo = [0]
    while todo:
        n = todo.pop()
        ins, stack = instrs[n], list(states[n])
        edges = []
        if ins.opname not in _NO_FALLTHROUGH and n + 1 < len(instrs):
            edges.append((n + 1, False))
        if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
            edges.append((index[ins.argval], True))
        for m, jump in edges:
            after = _step(ins, n, stack, jump)
            if after is None:
                continue
            old = states[m]
            if old is None:
                new = after
            elif len(old) != len(after):
                continue
            else:
                new = tuple(a if a == b else None for a, b in zip(old, after))
            if new != old:
                states[m] = new
                todo.append(m)
    return states


def _step(ins: dis.Instruction, n: int, stack: list, jump: bool) -> tuple | None:
    if ins.opname == "COPY":
        return (*stack, stack[-ins.arg]) if ins.arg <= len(stack) else None
    if ins.opname == "SWAP":
        if ins.arg > len(stack):
            return None
        stack = list(stack)
        stack[-1], stack[-ins.arg] = stack[-ins.arg], stack[-1]
        return tuple(stack)
    if ins.opname == "PRECALL":  # 3.11: its CALL pops the arguments (counted there)
        return tuple(stack)
    net = stack_effects.net_effect(ins.opname, ins.arg, jump)
    if jump and ins.opname == "FOR_ITER":  # exhausted: pops the iterator (3.11), or pushes
        pushes, pops = max(net, 0), max(-net, 0)  # what END_FOR pops (3.12+)
    else:
        pushes = _pushes(ins)
        pops = pushes - net
    if pops > len(stack):
        return None
    kept = stack[: len(stack) - pops]
    return (*kept, *((n, k) for k in range(pushes)))


def read_consumers(code: CodeType, name: str, offset: int, barrier: int | None = None):
    """The instructions that take a value of the local ``name`` as it is at ``offset``: each
    read of it on some path from ``offset`` (normal flow and exception handlers, never entering
    the instruction at ``barrier``) before it is written, followed to the instruction that
    pops what the read pushed. A list of (that instruction, the value's place among its
    operands: 0 for the top of the stack); None where a read's value cannot be followed in
    straight-line code (a jump, a copy, two reads in one instruction)."""
    instrs, index, with_handlers, _ = _flow(code)
    stop = index[barrier] if barrier is not None else None
    consumers, seen, todo = [], set(), [index[offset]]
    while todo:
        n = todo.pop()
        if n in seen or n == stop:
            continue
        seen.add(n)
        ins = instrs[n]
        uses, defs = _uses_defs(ins)
        if name in uses:
            taken = _taker(instrs, n, name)
            if taken is None:
                return None
            consumers.append(taken)
        if name not in defs or ins.opname == "STORE_FAST_LOAD_FAST" and ins.argval[1] == name:
            todo.extend(with_handlers[n])
    return consumers


def _taker(instrs: list, n: int, name: str) -> tuple | None:
    """(instruction, place) of the instruction that pops the value of ``name`` that
    ``instrs[n]`` pushes, in the straight-line code after it."""
    ins = instrs[n]
    pushed = ins.argval if ins.opname == "LOAD_FAST_LOAD_FAST" else (name,)
    if ins.opname not in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST",
                          "STORE_FAST_LOAD_FAST") or list(pushed).count(name) != 1:  # fmt: skip
        return None
    mark = object()
    stack = (*((None, k) for k in range(64)), *(mark if p == name else (None, 64) for p in pushed))
    for m in range(n + 1, len(instrs)):
        ins = instrs[m]
        if ins.opname in _NO_FALLTHROUGH or ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
            return None
        after = _step(ins, m, list(stack), False)
        if after is None or after.count(mark) > 1:
            return None
        if mark not in after:
            return ins, len(stack) - 1 - stack.index(mark)
        stack = after
    return None
