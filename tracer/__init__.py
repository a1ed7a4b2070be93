"""The bytecode tracer: normalised bytecode -> symbolic interpretation -> graph + guards.

Read it from the top down; every import points down this list (tests/test_layering.py):

  entry           the frames' caches: tc.compile wrappers, recompiles, resume functions
  compile_frame   one call traced and compiled into a cache entry (guards, graph, glue)
  glue/           the function an entry runs: graph call, rebuilt values, the tail after a break
                  (a break inside a loop: the loop in Python around its compiled body, or
                  as plain Python where compiling the body does not pay: loop_driver.py)
  translator      the symbolic interpreter, one handler per normalised opcode (calls: calls.py,
                  nonstrict.py; builtins: builtins_impl.py, container_methods.py; loops
                  captured as loop nodes: loops.py; a trace's bound: trace_budget.py)
  operations      Python semantics on symbolic values: operators, truth, attributes, items
                  (masked.py: z[m] used element-wise and stored back without a break)
  trace_state     one trace's parts: wrapping (inputs), guard_list, side_effects, contexts,
                  break_policy, graph_calls (operations entering the graph)
  values/         the symbolic values, each answering for itself (constant, graph arg, glue text)
  graph           the graph IR (graph_passes, canonical, operators, numpy_table, effects)
  bytecode/       what CPython's bytecode means on 3.11-3.13: features, reader, analysis, resume
                  functions, a split loop's body function and the loop as one plain function,
                  call routing
"""
