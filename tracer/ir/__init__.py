"""The graph IR: what the tracer hands a backend, and all a backend reads of the tracer. It
imports nothing else of tcompile (tests/test_layering.py checks it).

  graph           the graph: nodes that print as runnable Python calling NumPy
  node            one node, its value's type (TensorMeta), the user's frame it came from
                  (FrameLoc), its risk
  printer         nodes as Python text
  operators       Python's operators, their functions and ufuncs
  canonical       one spelling per operation
  numpy_table     what of NumPy goes into a graph: pure, in place, data-dependent
  graph_passes    passes that keep results bit for bit (CSE)
  loop_nodes      the targets of loop and while_loop nodes: plain data, printed as loops
  inline_loops    a for loop node in a loop body printed as the body's own for statement
  cond_nodes      the target of cond nodes: a branch's two sides, printed as an if
  first_run       a loop's run on the examples, kept for the graph's first call
  compiled_graph  what a backend returns for a graph
  graph_failure   a graph that raises at run time: undo its writes, run eagerly
  line_numbers    generated Python compiled with the user's line numbers
  file_labels     how a file is named to the user (a notebook cell: "Cell In[3]")
  quiet           warnings around tcompile's own work (the graph's code calls it too)
  device_arrays   arrays on a device (torch, CuPy), known without importing their library
  static_lookup   attributes of classes read without running their code
"""
