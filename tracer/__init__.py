"""The bytecode tracer: normalised bytecode -> symbolic interpretation -> graph + guards.

Every module, by role (tests/test_code_shape.py checks that this map names each one; the
subpackages' own maps name theirs):

  the public face
    entry            the frames' caches: tc.compile wrappers, recompiles, resume functions
    explain          tc.explain: graphs, breaks and guards of one call
    hatches          escape hatches users put in their code (nonstrict_trace, custom_op...)
    markers          tc.graph_break, tc.skip_frame: calls that steer tracing
    config           tc.config, the settings the tracer reads
    report           what tcompile tells the user: one CompileReport per compile, logs
    errors           break kinds, break records, tc.Unsupported
    user_text        what the user wrote, quoted in messages
    file_labels      how a file is named to the user (a notebook cell: "Cell In[3]")

  one frame, traced and compiled
    compile_frame    one call traced into a cache entry (guards, graph, glue)
    trace_state      one trace's state and the calls every opcode handler makes on it
    trace_budget     how far one trace may go before the frame runs eagerly
    translator       the symbolic interpreter, one handler per normalised opcode
    calls            calls: inlining user functions, NumPy into the graph, breaks for the rest
    signature        a code object's parameters, and binding a call to them
    nonstrict        tc.nonstrict_trace: a call traced on proxy arrays
    break_policy     what a graph break does where it happens (raise, or break)
    code_cache       caches of what is derived from code objects, forgotten on reset
    user_code        which code is the user's (inlined) and which is a library's

  Python's semantics on symbolic values
    operations       operators, truth, attributes, items, iteration
    builtins_impl    Python builtins
    container_methods  methods of containers and constants (lst.append, d.get...)
    user_objects     the user's objects and their protocols (__getattribute__, descriptors...)
    masked           masked stores, z[m] = f(z[m]), without a break
    contexts         context managers that survive graph breaks
    quiet            warnings around tcompile's own work

  values read from before the call
    wrapping         how pre-existing objects enter a trace (Inputs.wrap)
    source           where a value was read from, as a Python expression
    guard_list       the assumptions one trace made, collected
    guards           guards as one generated check function
    side_effects     writes to state that existed before the call, replayed after the graph
    device_arrays    arrays on a device (torch, CuPy) traced as NumPy
    examples         the real values a trace computes with

  loops
    loops            a for loop whose body traces alike every time: one loop node
    while_loops      while loops on array conditions as while_loop nodes
    loop_body        what for and while loop nodes share: the body traced once
    loop_runners     the targets of loop nodes: the body graph run per iteration
    first_run        a loop's run on the examples, kept for the graph's first call

  the graph IR (what backends read)
    graph            the graph: nodes that print as runnable Python calling NumPy
    graph_calls      operations entering the graph
    graph_passes     passes that keep results bit for bit (CSE, dead code)
    canonical        one spelling per operation
    operators        Python's operators, their functions and ufuncs
    numpy_table      what of NumPy goes into a graph, and how a backend lowers it
    effects          what an operation does besides its value (writes, views, risk)
    compiled_graph   what a backend returns for a graph
    graph_failure    a graph that raises at run time: undo its writes, run eagerly
    line_numbers     generated Python compiled with the user's line numbers

  subpackages
    values/          the symbolic values, one class per kind of Python value
    glue/            the function an entry runs: graph call, rebuilt values, the tail after a
                     break, split loops (loop_driver)
    bytecode/        what CPython's bytecode means on 3.11-3.13: features, reader, analysis,
                     resume functions, loop functions, call routing
"""
