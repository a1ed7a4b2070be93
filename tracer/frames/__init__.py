"""Frames: the public face of the tracer.

entry          the frames' caches: tc.compile wrappers, recompiles, resume functions
compile_frame  one call traced into a cache entry (guards, graph, glue)
explain        tc.explain: graphs, breaks and guards of one call
"""
