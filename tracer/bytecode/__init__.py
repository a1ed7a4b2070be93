"""What the tracer knows of CPython's bytecode, in one place: the differences between 3.11, 3.12
and 3.13 (`features`), a code object's original instructions (`instructions`), the one
vocabulary the translator reads (`reader`), facts about the original code (`analysis`), where an ``if``'s sides are (`if_shapes`), stack
effects and a value followed through a run of normalised instructions (`stack_effects`), and
rewritten copies of it: resume functions (`resume`), call-routed copies (`routing`), a split
loop's body as a function (`body_function`) and a split loop as one plain function
(`loop_function`). Around them: a code object's parameters and binding a call to them
(`signature`), and the caches of what is derived from code objects (`code_cache`).

An instruction takes three forms here, one per job: ``dis.Instruction`` reads the original
(offsets, the exception table, lines), `reader.Instruction` is what the translator interprets
(the same on every version), and the `bytecode` library's ``Instr`` writes new code.
"""
