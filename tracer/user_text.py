"""What the user wrote, for messages: the source text of an instruction's value, the statement a
branch belongs to, names for the values a resume function receives, and a resume function's title.

Messages quote the user's own expressions (``x.sum() > 0``, ``print(y)``), read from the source
through each instruction's position (CPython 3.11+: lines and columns per instruction) and, for
what a condition is part of (``if``, ``while``, ``and``...), from the source's syntax tree. Where
no source is found (code made by ``exec``) the callers fall back to plainer words.

    value_at(code, offset)        # 'x.sum() > 0': the value on top when ``offset`` starts
    condition(code, offset)       # Condition('x.sum() > 0', 'if', ...): a jump's test
    resume_title(code, offset)    # 'resumed after print(y) at line 5'
"""

from __future__ import annotations

import ast
import dis
import functools
import linecache
import re
from dataclasses import dataclass
from types import CodeType

from .bytecode import analysis, features, instructions
from .bytecode.body_function import BODY_CODES
from .bytecode.code_cache import CodeCache
from .bytecode.resume import RESUME_CODES

_NAMES = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_DEREF", "LOAD_CLOSURE",
          "LOAD_GLOBAL", "LOAD_NAME", "LOAD_CLASSDEREF"}  # fmt: skip
_LOOK_THROUGH = {"TO_BOOL"}  # a value's text is its operand's
_FORMATS = {"FORMAT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC"}
_LONGEST = 60  # characters of an expression quoted in a name
_STACK_ARG = "___stack"
_LABELS = CodeCache()


def shorten(text: str, limit: int = _LONGEST) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


# -- source text -------------------------------------------------------------------------------
def source_segment(code: CodeType, ins: dis.Instruction) -> str | None:
    """The source text ``ins`` was compiled from (its positions), or None."""
    pos = ins.positions
    if pos is None or None in (pos.lineno, pos.end_lineno, pos.col_offset, pos.end_col_offset):
        return None
    lines = linecache.getlines(code.co_filename)
    if not lines or pos.end_lineno > len(lines):
        return None
    # columns count UTF-8 bytes
    parts = [line.encode() for line in lines[pos.lineno - 1 : pos.end_lineno]]
    if len(parts) == 1:
        parts[0] = parts[0][pos.col_offset : pos.end_col_offset]
    else:
        parts[0], parts[-1] = parts[0][pos.col_offset :], parts[-1][: pos.end_col_offset]
    text = b" ".join(p.strip() for p in parts).decode(errors="replace")
    return shorten(text) or None


def _slot(code: CodeType, offset: int, depth: int):
    slots = analysis.stack_producers(code, offset)
    if not slots or depth >= len(slots):
        return None
    return slots[-1 - depth]


def value_at(code: CodeType, offset: int, depth: int = 0) -> str | None:
    """The text of the value ``depth`` slots below the top of the stack when the instruction at
    ``offset`` starts (the operand of a jump, a format...), or None."""
    return _value_text(code, _slot(code, offset, depth))


def _value_text(code: CodeType, slot) -> str | None:
    if slot is None:
        return None
    n, k = slot
    ins = instructions.original(code)[n]
    op = ins.opname
    if op in _NAMES:
        if op == "LOAD_GLOBAL" and ins.arg & 1 and k != (1 if features.NULL_FIRST else 0):
            return None  # the NULL pushed with a global
        name = ins.argval
        return stack_labels(code).get(name) if name.startswith(_STACK_ARG) else name
    if op == "LOAD_FAST_LOAD_FAST":
        name = ins.argval[k]
        return stack_labels(code).get(name) if name.startswith(_STACK_ARG) else name
    if op == "LOAD_CONST":
        line = f" (line {ins.positions.lineno})" if ins.positions and ins.positions.lineno else ""
        return f"the constant {shorten(repr(ins.argval), 40)}{line}"
    if op in _LOOK_THROUGH:
        return value_at(code, ins.offset)
    if op in _FORMATS:  # f"{x}": the text of the formatted value
        has_spec = op == "FORMAT_WITH_SPEC" or (op == "FORMAT_VALUE" and ins.arg & 4)
        inner = value_at(code, ins.offset, 1 if has_spec else 0)
        return f'f"{{{inner}}}"' if inner else None
    if op == "UNPACK_SEQUENCE":  # pushed last item first
        whole = value_at(code, ins.offset)
        return f"{whole}[{ins.arg - 1 - k}]" if whole else None
    if k or op.startswith(("LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR")) and ins.arg & 1:
        return None  # one of several values one instruction pushed (a method and its self)
    return source_segment(code, ins)


def _producer(code: CodeType, offset: int, depth: int = 0) -> dis.Instruction | None:
    """The instruction whose value is ``depth`` below the top at ``offset`` (through TO_BOOL)."""
    slot = _slot(code, offset, depth)
    if slot is None:
        return None
    ins = instructions.original(code)[slot[0]]
    return _producer(code, ins.offset) if ins.opname in _LOOK_THROUGH else ins


def stack_labels(code: CodeType) -> dict[str, str]:
    """``{'___stack0': 'x.sum()', ...}``: for a resume function's (or a split loop body's) code,
    the expression each value it receives on the stack was computed by, where it is known."""
    return _LABELS.get(code, lambda: _make_labels(code))


def _make_labels(code: CodeType) -> dict[str, str]:
    info = RESUME_CODES.lookup(code)
    if info is not None:
        original, offset, kinds = info.spec.code, info.spec.offset, info.spec.stack
    elif (body := BODY_CODES.lookup(code)) is not None:
        original, offset, kinds = body.code, body.head, body.under
    else:
        return {}
    slots = analysis.stack_producers(original, offset) or ()
    if len(slots) < len(kinds):
        return {}
    labels = {}
    for i, _kind in enumerate(kinds):
        text = _value_text(original, slots[i])
        if text is not None:
            labels[f"{_STACK_ARG}{i}"] = text
    return labels


def stack_name(code: CodeType, local: str) -> str:
    """How a message names the argument ``local`` of a resume function: the expression that
    computed it, or where it was computed."""
    label = stack_labels(code).get(local)
    return label if label is not None else "a value computed before the break"


# -- the statement a condition is part of ----------------------------------------------------
@dataclass(frozen=True)
class Condition:
    """A tested value, as the user wrote it: ``text`` (``x.sum() > 0``); ``construct``: what
    tests it, ``if``, ``while``, ``assert``, ``and``, ``or``, ``if-else`` (a conditional
    expression), ``comprehension`` or None; ``whole``: the full test where the value is one
    part of it (``x.sum() > 0 and y.max() < 1``); ``parts``: a conditional expression's
    ``(value if true, value if false)`` or an ``and``/``or``'s operands."""

    text: str
    construct: str | None = None
    whole: str | None = None
    parts: tuple[str, ...] = ()


def condition(code: CodeType, offset: int) -> Condition | None:
    """The condition a conditional jump at ``offset`` tests, or None if its text is unknown."""
    text = value_at(code, offset)
    if text is None:
        return None
    ins = _producer(code, offset)
    found = _syntax(code.co_filename, ins.positions) if ins is not None else None
    if found is None:
        return Condition(text)
    node, parents = found
    bool_op = None
    child = node
    while True:
        parent = parents.get(child)
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            child = parent
            continue
        if isinstance(parent, ast.BoolOp):
            bool_op = bool_op or parent
            child = parent
            continue
        break
    segment = functools.partial(_segment, code.co_filename)
    whole = segment(child) if child is not node else None
    if bool_op is not None:
        word = "and" if isinstance(bool_op.op, ast.And) else "or"
        return Condition(text, word, whole, tuple(segment(v) for v in bool_op.values))
    if isinstance(parent, ast.If) and parent.test is child:
        return Condition(text, "if", whole)
    if isinstance(parent, ast.While) and parent.test is child:
        return Condition(text, "while", whole)
    if isinstance(parent, ast.Assert) and parent.test is child:
        return Condition(text, "assert", whole)
    if isinstance(parent, ast.IfExp) and parent.test is child:
        return Condition(text, "if-else", whole, (segment(parent.body), segment(parent.orelse)))
    if isinstance(parent, ast.comprehension):
        return Condition(text, "comprehension", whole)
    return Condition(text, None, whole)


def _segment(filename: str, node: ast.AST) -> str:
    lines = linecache.getlines(filename)
    return shorten(ast.get_source_segment("".join(lines), node) or ast.unparse(node), 80)


def _syntax(filename: str, pos) -> tuple[ast.AST, dict] | None:
    """The expression node at these positions in the file's syntax tree, and the tree's parent
    map; None without source."""
    if pos is None or pos.lineno is None:
        return None
    index = _parsed("".join(linecache.getlines(filename)))
    if index is None:
        return None
    nodes, parents = index
    node = nodes.get((pos.lineno, pos.col_offset, pos.end_lineno, pos.end_col_offset))
    return (node, parents) if node is not None else None


@functools.lru_cache(maxsize=16)
def _parsed(source: str):
    if not source:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    nodes, parents = {}, {}
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            parents[child] = parent
        if isinstance(parent, ast.expr):
            key = (parent.lineno, parent.col_offset, parent.end_lineno, parent.end_col_offset)
            nodes.setdefault(key, parent)  # the outermost node at these positions
    return nodes, parents


# -- resume functions' titles ----------------------------------------------------------------
_CONDITIONAL = {"POP_JUMP_IF_TRUE": True, "POP_JUMP_IF_FALSE": False,
                "POP_JUMP_FORWARD_IF_TRUE": True, "POP_JUMP_FORWARD_IF_FALSE": False,
                "POP_JUMP_BACKWARD_IF_TRUE": True, "POP_JUMP_BACKWARD_IF_FALSE": False,
                "JUMP_IF_TRUE_OR_POP": True, "JUMP_IF_FALSE_OR_POP": False}  # fmt: skip


def resume_title(code: CodeType, offset: int, line: int) -> str:
    """How reports name the resume function that continues ``code`` at ``offset`` (on
    ``line``): after what it resumes, told apart from the other resume points of the frame.

    ``resumed after print(y) at line 5``; ``resumed at line 7, where x.sum() > 0 is true``."""
    listing = instructions.original(code)
    at = next((n for n, ins in enumerate(listing) if ins.offset == offset), None)
    if at is None:
        return f"resumed at line {line}"
    # a branch: the jump to here, or the jump just before (its test was false / true)
    for ins in listing:
        if ins.opname in _CONDITIONAL and ins.argval == offset:
            return _branch_title(code, ins, _CONDITIONAL[ins.opname], line)
    before = listing[at - 1] if at else None
    while before is not None and before.opname in ("CACHE", "PRECALL", "NOP"):
        at -= 1
        before = listing[at - 1] if at else None
    if before is not None and before.opname in _CONDITIONAL:
        return _branch_title(code, before, not _CONDITIONAL[before.opname], line)
    text = source_segment(code, before) if before is not None else None
    if before is not None and before.opname in _FORMATS:
        text = _value_text(code, (at - 1, 0))
    if text:
        where = _line_of(before) or line
        return f"resumed after {shorten(text, 40)} at line {where}"
    return f"resumed at line {line}"


def _branch_title(code: CodeType, jump: dis.Instruction, truth: bool, line: int) -> str:
    text = value_at(code, jump.offset)
    if not text:
        return f"resumed at line {line}"
    return f"resumed at line {line}, where {shorten(text, 40)} is {'true' if truth else 'false'}"


def _line_of(ins: dis.Instruction) -> int | None:
    return ins.positions.lineno if ins.positions is not None else None


# -- the words of a branch on an array's value -----------------------------------------------
def branch_words(cond: Condition | None, what: str) -> tuple[str, tuple[str, ...]]:
    """``(explanation, hints)`` of a graph break on a branch whose condition ``cond`` (None:
    its text is unknown) is an array value, ``what`` (``a NumPy bool``)."""
    if cond is None:
        return (f"the condition is {what}, known only when the compiled code runs",
                ("Choose values with np.where(condition, value_if_true, value_if_false) instead "
                 "of a Python branch: the choice then stays in the graph.",))  # fmt: skip
    c, kw = cond.text, cond.construct
    tests = f"the `{kw}` tests" if kw in ("if", "while", "assert", "and", "or") else "Python tests"
    if kw == "if-else":
        tests = "the conditional expression tests"
    explanation = f"{tests} `{c}`, {what} known only when the compiled code runs"
    outside = (f"Or compute `{c}` before calling the compiled function and pass it in as a bool "
               "argument: each value gets its own compiled entry.")  # fmt: skip
    where = f"np.where({c}, value_if_true, value_if_false)"
    if kw == "if-else" and len(cond.parts) == 2:
        yes, no = cond.parts
        first = (f"Write np.where({c}, {yes}, {no}) instead of `{yes} if {c} else {no}`: both "
                 "sides are computed and the choice stays in the graph (element by element "
                 "for arrays).")  # fmt: skip
        return explanation, (first, outside)
    if kw in ("and", "or"):
        symbol = "&" if kw == "and" else "|"
        joined = f" {symbol} ".join(f"({p})" for p in cond.parts)
        first = (f"Combine array conditions with `{symbol}` instead of `{kw}`: `{joined}` is one "
                 f"array value that stays in the graph; choose with np.where({joined}, "
                 "value_if_true, value_if_false) instead of branching on it.")  # fmt: skip
        return explanation, (first, outside)
    if kw == "while":
        first = (f"tcompile makes a `while` loop on an array condition one loop node when each "
                 f"iteration traces the same way (what the loop changes keeps its shape and "
                 f"type); otherwise each test of `{c}` is a graph break. Keep the shapes fixed "
                 f"(a mask instead of a shrinking slice), or run the loop outside the compiled "
                 f"function.")  # fmt: skip
        return explanation, (first,)
    if kw == "assert":
        first = (f"An assert needs `{c}` as a Python bool: check it outside the compiled "
                 "function (before calling it, or on its result), or drop the assert from the "
                 "compiled code.")  # fmt: skip
        return explanation, (first,)
    if kw == "comprehension":
        first = (f"Select with a boolean mask or np.where({c}, ...) instead of filtering in a "
                 "comprehension.")  # fmt: skip
        return explanation, (first, outside)
    test = f"if {cond.whole}" if cond.whole else f"if {c}"
    first = (f"Compute both results and choose with {where} instead of `{test}:`: the "
             "choice stays in the graph (element by element for arrays).")  # fmt: skip
    return explanation, (first, outside)
