"""Loops: every way the tracer handles a loop, and branches on array values.

A loop is unrolled (the interpreter simply runs on: the default), made one node of the graph
(a body that traces alike every time), or split at a graph break inside it (the loop stays
Python around its compiled body); `strategy` decides which, and is what the interpreter and the
glue call. A branch on an array value becomes one cond node where both its sides trace (with
the loop bodies' machinery: a side is traced as a body is).

  strategy      how a loop runs: unrolled, a loop node, or split
  for_loops     a for loop whose body traces alike every time: one loop node
  while_loops   while loops on array conditions as while_loop nodes
  loop_body     what for and while loop nodes share: the body traced once
  not_captured  why a body is not one node: the loop unrolls
  loop_record   what became of each loop, for explain and the widgets
  either_float  a float a loop that may not run makes a float64: carried as one where no use differs
  split_loop    a graph break inside a loop: the body becomes a function of its own
  loop_driver   runs a split loop: its compiled body per iteration, or plain Python
  conds         an if on an array value: both sides traced, one cond node
"""
