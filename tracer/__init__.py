"""The bytecode tracer: normalised bytecode -> symbolic interpretation -> graph + guards.

Its packages stand in layers, named by role: a module imports from its own package and the ones
below it, never from one above (tests/test_layering.py checks the order, top to bottom):

  frames/       the public face: the frames' caches behind tc.compile, one call traced into a
                cache entry, tc.explain
  glue/         the function a cache entry runs: graph call, rebuilt values, the tail after a
                break
  interpreter/  the symbolic interpreter: one handler per normalised opcode, calls,
                tc.nonstrict_trace
  loops/        every loop strategy: for and while loops as loop nodes, loops split at a break
  semantics/    Python's semantics on symbolic values: operators, attributes, items, builtins,
                iteration, the user's objects
  state/        one trace's state: the graph being built, what enters it (inputs, examples,
                effects), guards, side effects, context managers
  values/       the symbolic values, one class per kind of Python value, and their sources
  (top level)   what every package shares:
    config       tc.config, the settings the tracer reads
    errors       break kinds, break records, tc.Unsupported
    report       what tcompile tells the user: one CompileReport per compile, logs
    hatches      escape hatches users put in their code (nonstrict_trace, custom_op...)
    markers      tc.graph_break, tc.skip_frame: calls that steer tracing
    user_code    which code is the user's (inlined) and which is a library's
    user_text    what the user wrote, quoted in messages
  bytecode/     what CPython's bytecode means on 3.11-3.13: features, reader, analysis, resume
                functions, loop functions, call routing, signatures, per-code caches
  ir/           the graph IR, all a backend reads of the tracer: imports nothing else of
                tcompile

Each package's own map (its ``__init__``) names its modules.
"""
