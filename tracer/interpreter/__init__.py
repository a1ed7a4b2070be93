"""The symbolic interpreter: the frame's bytecode run on symbolic values.

translator   one handler per normalised opcode: running a frame, the stack, operators, items,
             functions, control flow; the other groups are mixed in:
names        loads and stores: locals, cells, globals, attributes, imports
building     building values: tuples, lists, dicts, sets, slices, strings, unpacking
calls        calls: inlining user functions, NumPy into the graph, breaks for the rest
nonstrict    tc.nonstrict_trace: a call traced on proxy arrays
"""
