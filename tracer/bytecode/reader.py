"""Read a code object into the one instruction vocabulary the translator handles, the same on
CPython 3.11, 3.12 and 3.13 (version differences come from `features`).

The normalised stream keeps each original instruction's stack effect (a rewrite expands into
several instructions with the same net effect), its offset and its line, so breaks can be
located and resumed. Vocabulary changes (original -> normalised):

  LOAD_GLOBAL/LOAD_ATTR/LOAD_METHOD with a NULL bit -> the plain load + ``push_null``
      ("before" or "after", read from the disassembler's own rendering, not the version);
  KW_NAMES names; CALL n          -> LOAD_CONST names; CALL_KW n      (3.13's form)
  PRECALL, RESUME, NOP, CACHE, EXTENDED_ARG, MAKE_CELL, COPY_FREE_VARS -> dropped
  TO_BOOL (3.13)                  -> dropped: the jump or UNARY_NOT after it tests the truth
  END_FOR                         -> dropped: an exhausted FOR_ITER jumps past it (below)
  JUMP_IF_TRUE/FALSE_OR_POP (3.11) -> COPY 1; POP_JUMP_IF_TRUE/FALSE; POP_TOP
  RETURN_CONST c                  -> LOAD_CONST c; RETURN_VALUE
  BINARY_SLICE / STORE_SLICE      -> BUILD_SLICE 2; BINARY_SUBSCR / STORE_SUBSCR
  LOAD_FAST_LOAD_FAST & co.       -> their parts
  LOAD_FAST_CHECK                 -> LOAD_FAST;  LOAD_FAST of a cell (3.13) -> LOAD_CLOSURE
  LOAD_CLASSDEREF                 -> LOAD_DEREF
  JUMP_FORWARD/BACKWARD(_NO_INTERRUPT), POP_JUMP_{FORWARD,BACKWARD}_IF_X -> JUMP, POP_JUMP_IF_X
  MAKE_FUNCTION flags (3.11/3.12) -> MAKE_FUNCTION; SET_FUNCTION_ATTRIBUTE f... (3.13's form)
  FORMAT_SIMPLE / FORMAT_WITH_SPEC (3.13) -> FORMAT_VALUE (conversion 0, spec?)
  CALL_INTRINSIC_1 unary +, list->tuple -> UNARY_POSITIVE, LIST_TO_TUPLE
  FOR_ITER's exhausted target     -> the first instruction after END_FOR (and its POP_TOP
                                     where END_FOR pops only the value), i.e. 3.11's meaning
  COMPARE_OP                      -> the operator text ("<", "==", ...); BINARY_OP likewise
"""

from __future__ import annotations

import dis
from dataclasses import dataclass
from types import CodeType

from . import features, instructions
from .code_cache import CodeCache

_DROPPED = {"PRECALL", "RESUME", "NOP", "CACHE", "EXTENDED_ARG", "MAKE_CELL", "COPY_FREE_VARS",
            "TO_BOOL", "END_FOR"}  # fmt: skip
_OR_POP = {"JUMP_IF_TRUE_OR_POP": "POP_JUMP_IF_TRUE", "JUMP_IF_FALSE_OR_POP": "POP_JUMP_IF_FALSE"}
_RENAMED = {
    "JUMP_FORWARD": "JUMP",
    "JUMP_BACKWARD": "JUMP",
    "JUMP_BACKWARD_NO_INTERRUPT": "JUMP",
    "JUMP_NO_INTERRUPT": "JUMP",
    "LOAD_FAST_CHECK": "LOAD_FAST",
    "LOAD_CLASSDEREF": "LOAD_DEREF",
    "LOAD_METHOD": "LOAD_ATTR",
}
_INTRINSICS = {
    "INTRINSIC_UNARY_POSITIVE": "UNARY_POSITIVE",
    "INTRINSIC_LIST_TO_TUPLE": "LIST_TO_TUPLE",
}
# MAKE_FUNCTION flag bits in the order 3.13 emits SET_FUNCTION_ATTRIBUTE (closure on top).
_FUNCTION_ATTR_FLAGS = (8, 4, 2, 1)


@dataclass(slots=True, eq=False)
class Instruction:
    """One normalised instruction.

    ``arg`` is already resolved (a name, a constant, a count, an operator text); ``target``
    is the index of the jump target in the normalised list; ``offset`` and ``line`` belong to
    the original instruction this one came from; ``in_try`` marks instructions protected by a
    try/except/finally or with-block handler.
    """

    opname: str
    arg: object = None
    offset: int = 0
    line: int | None = None
    target: int | None = None
    push_null: str | None = None
    in_try: bool = False

    def __repr__(self) -> str:
        extra = f" ->{self.target}" if self.target is not None else ""
        null = f" null={self.push_null}" if self.push_null else ""
        return f"<{self.offset}:{self.opname} {self.arg!r}{extra}{null}>"


@dataclass(slots=True)
class NormalizedCode:
    code: CodeType
    instrs: list[Instruction]
    index_of_offset: dict[int, int]


_NORMALIZED = CodeCache()


def normalize(code: CodeType) -> NormalizedCode:
    """Return the normalised instructions of ``code`` (memoised per code object)."""
    return _NORMALIZED.get(code, lambda: _normalize(code))


def _protected_offsets(bc: dis.Bytecode, raw: list[dis.Instruction]) -> set[int]:
    """Offsets inside a try/except/finally block (where a graph break cannot resume).

    A handler starting with PUSH_EXC_INFO catches; one that goes on with WITH_EXCEPT_START is
    a with-block's exit, whose body counts as protected only if the with-block itself sits
    inside a try. Any other handler only cleans up and re-raises (``COPY 3; POP_EXCEPT;
    RERAISE``, 3.12+'s inlined comprehensions restoring a local): what it covers is protected
    exactly when the handler itself is.
    """
    opnames = [ins.opname for ins in raw]
    position = {ins.offset: i for i, ins in enumerate(raw)}
    handler_of = {
        offset: entry.target for offset, entry in instructions.handlers(bc.codeobj).items()
    }

    def protected(offset: int, depth: int = 0) -> bool:
        target = handler_of.get(offset)
        if target is None or depth > 20:
            return False
        first = position[target]
        if opnames[first] != "PUSH_EXC_INFO" or opnames[first + 1] == "WITH_EXCEPT_START":
            return protected(target, depth + 1)
        return True

    return {offset for offset in handler_of if offset in position and protected(offset)}


def _normalize(code: CodeType) -> NormalizedCode:  # noqa: C901 - a table of opcode rewrites
    bc = dis.Bytecode(code)
    raw = list(bc)
    protected = _protected_offsets(bc, raw)
    cells = set(code.co_cellvars) | set(code.co_freevars)
    out: list[Instruction] = []
    index_of_offset: dict[int, int] = {}
    jump_offsets: list[tuple[Instruction, int]] = []
    pending_kwnames: tuple[str, ...] | None = None
    line: int | None = None

    for ins in raw:
        index_of_offset[ins.offset] = len(out)
        line = instructions.line_of(ins, line)
        op = ins.opname
        in_try = ins.offset in protected

        def emit(opname: str, arg: object = None, push_null: str | None = None) -> Instruction:
            instr = Instruction(opname, arg, ins.offset, line, None, push_null, in_try)
            out.append(instr)
            return instr

        if op in _DROPPED:
            continue
        if op == "KW_NAMES":
            pending_kwnames = (
                ins.argval if isinstance(ins.argval, tuple) else code.co_consts[ins.arg]
            )
            continue
        if op == "CALL" and pending_kwnames is not None:
            emit("LOAD_CONST", pending_kwnames)
            emit("CALL_KW", ins.arg)
            pending_kwnames = None
            continue
        if op in ("LOAD_GLOBAL", "LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"):
            null = None
            if op == "LOAD_METHOD" or ins.argrepr.startswith("NULL"):
                null = "before"
            elif "NULL" in ins.argrepr:
                null = "after"
            emit(_RENAMED.get(op, op), ins.argval, null)
            continue
        if op in _OR_POP:  # keeps the value when it jumps: a copy is tested, else popped
            emit("COPY", 1)
            jump_offsets.append((emit(_OR_POP[op], ins.arg), ins.argval))
            emit("POP_TOP")
            continue
        if op == "RETURN_CONST":
            emit("LOAD_CONST", ins.argval)
            emit("RETURN_VALUE")
            continue
        if op in ("BINARY_SLICE", "STORE_SLICE"):
            emit("BUILD_SLICE", 2)
            emit("BINARY_SUBSCR" if op == "BINARY_SLICE" else "STORE_SUBSCR")
            continue
        if op in ("LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST"):
            first, second = op.split("_FAST_")[0], op.split("_FAST_")[1]
            a, b = ins.argval
            emit(first + "_FAST", a)
            emit(second.replace("_FAST", "") + "_FAST", b)
            continue
        if op == "LOAD_FAST" and ins.argval in cells:
            emit("LOAD_CLOSURE", ins.argval)
            continue
        if op == "MAKE_FUNCTION" and ins.arg:
            emit("MAKE_FUNCTION")
            for flag in _FUNCTION_ATTR_FLAGS:
                if ins.arg & flag:
                    emit("SET_FUNCTION_ATTRIBUTE", flag)
            continue
        if op == "MAKE_FUNCTION":
            emit("MAKE_FUNCTION")
            continue
        if op == "FORMAT_VALUE":
            emit("FORMAT_VALUE", (ins.arg & 3, bool(ins.arg & 4)))
            continue
        if op in ("FORMAT_SIMPLE", "FORMAT_WITH_SPEC"):
            emit("FORMAT_VALUE", (0, op == "FORMAT_WITH_SPEC"))
            continue
        if op == "CONVERT_VALUE":  # 3.13's dis shows the function; keep FORMAT_VALUE's codes
            emit("CONVERT_VALUE", ins.arg)
            continue
        if op == "CALL_INTRINSIC_1":
            known = _INTRINSICS.get(ins.argrepr)  # as 3.11 spells them, with no argument
            emit(known or "UNSUPPORTED", None if known else ins.argrepr)
            continue
        if op == "COMPARE_OP":
            text = ins.argrepr
            emit("COMPARE_OP", text[5:-1] if text.startswith("bool(") else text)
            continue
        if op == "BINARY_OP":
            emit("BINARY_OP", ins.argrepr)
            continue
        if op.startswith("POP_JUMP_FORWARD_") or op.startswith("POP_JUMP_BACKWARD_"):
            op = "POP_JUMP_" + op.split("_", 3)[3]
        op = _RENAMED.get(op, op)
        if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
            target_offset = ins.argval
            if op == "FOR_ITER":
                target_offset = _past_end_for(raw, target_offset)
            jump_offsets.append((emit(op, ins.arg), target_offset))
            continue
        emit(op, ins.argval)

    for instr, target_offset in jump_offsets:
        instr.target = index_of_offset[target_offset]
    return NormalizedCode(code, out, index_of_offset)


def _past_end_for(raw: list[dis.Instruction], target_offset: int) -> int:
    """Where an exhausted FOR_ITER really continues (3.11's meaning of its target)."""
    pos = next(i for i, ins in enumerate(raw) if ins.offset == target_offset)
    if raw[pos].opname != "END_FOR":
        return target_offset
    pos += 1
    if features.END_FOR_POPS_ONLY_VALUE and raw[pos].opname == "POP_TOP":
        pos += 1
    return raw[pos].offset
