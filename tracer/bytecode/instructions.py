"""A code object's original instructions, as ``dis`` reads them, and what ``dis`` spreads over
several places: the exception table per offset, and each instruction's line."""

from __future__ import annotations

import dis
from types import CodeType

from . import features
from .code_cache import CodeCache

_LISTED = CodeCache()
_HANDLERS = CodeCache()


def original(code: CodeType) -> list[dis.Instruction]:
    """``code``'s instructions, without the CACHE and EXTENDED_ARG entries that are no
    instructions of their own (the `bytecode` library's list lines up with this one)."""
    return _LISTED.get(code, lambda: [i for i in dis.get_instructions(code)
                                      if i.opname not in ("CACHE", "EXTENDED_ARG")])  # fmt: skip


def handlers(code: CodeType) -> dict:
    """Offset -> the exception-table entry protecting it (``target``, ``depth``, ``lasti``);
    CPython's table has one entry per protected offset."""

    def make():
        return {offset: entry for entry in dis.Bytecode(code).exception_entries
                for offset in range(entry.start, entry.end, 2)}  # fmt: skip

    return _HANDLERS.get(code, make)


def line_of(ins: dis.Instruction, previous: int | None) -> int | None:
    """The line ``ins`` belongs to (before 3.13 ``dis`` says only where a line starts)."""
    if features.INSTRUCTION_LINES:
        line = ins.line_number
    else:
        line = None if isinstance(ins.starts_line, bool) else ins.starts_line
    return previous if line is None else line
