"""The glue: the one Python function a compiled entry runs in place of the frame.

`function.GlueFunction` writes it: the graph call, the values the frame's result and its
side effects need (rebuilt as text by `rebuild.Rebuilder`), the replayed side effects, and
the return. After a resumable graph break `continuation.Continuation` writes its tail: the
breaking instruction run eagerly, then the call of a resume function. `continuation.plan`
decides whether a break can resume at all; a break inside a loop goes to `loops.split_loop`.
"""
