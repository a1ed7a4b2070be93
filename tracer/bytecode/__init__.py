"""What the tracer knows of CPython's bytecode, in one place: the differences between 3.11, 3.12
and 3.13 (`features`), a code object's original instructions (`instructions`), the one
vocabulary the translator reads (`reader`), facts about the original code (`analysis`), and
rewritten copies of it: resume functions (`resume`) and call-routed copies (`routing`).
"""
