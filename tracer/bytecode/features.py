"""The bytecode differences between the Python versions tcompile supports, detected once from
how this interpreter compiles small probes and from its opcode table, never from its version
number. Every other module asks here."""

from __future__ import annotations

import dis


def _probe(source: str) -> list[str]:
    code = compile(source, "<probe>", "eval")
    return [i.opname for i in dis.get_instructions(code) if i.opname != "RESUME"]


# A call's stack: [NULL, callable, args] (3.11, 3.12) or [callable, NULL|self, args] (3.13).
NULL_FIRST = _probe("f()")[0] == "PUSH_NULL"
# Method loads push [method, self] where NULL comes first (3.11, 3.12).
METHOD_LOADS_PUSH_SELF = NULL_FIRST
# 3.11 prefixes every CALL with PRECALL.
HAS_PRECALL = "PRECALL" in dis.opmap
# 3.13's END_FOR pops only the value (a POP_TOP follows for the iterator); 3.12's pops both.
END_FOR_POPS_ONLY_VALUE = "END_FOR" in dis.opmap and dis.stack_effect(dis.opmap["END_FOR"]) == -1
# dis.Instruction knows its line on 3.13 (``line_number``); before, only where a line starts.
INSTRUCTION_LINES = "line_number" in dis.Instruction._fields
# What an exhausted FOR_ITER skips after its target: nothing (3.11), END_FOR (3.12), END_FOR and
# its POP_TOP (3.13). Code written at a new exit of a loop puts these first, never run.
SKIPPED_AT_LOOP_EXIT = (
    ()
    if "END_FOR" not in dis.opmap
    else ("END_FOR", "POP_TOP")
    if END_FOR_POPS_ONLY_VALUE
    else ("END_FOR",)
)
# A conditional jump written to go forward: 3.11 names the direction, 3.12+ jumps only forward.
JUMP_FORWARD_IF_FALSE = (
    "POP_JUMP_FORWARD_IF_FALSE" if "POP_JUMP_FORWARD_IF_FALSE" in dis.opmap else "POP_JUMP_IF_FALSE"
)
