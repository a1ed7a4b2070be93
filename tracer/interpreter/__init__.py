"""The symbolic interpreter: the frame's bytecode run on symbolic values.

translator   one handler per normalised opcode
calls        calls: inlining user functions, NumPy into the graph, breaks for the rest
nonstrict    tc.nonstrict_trace: a call traced on proxy arrays
"""
