"""Functions user code calls inside compiled regions to steer tracing.

They do nothing when run eagerly; the tracer recognises them by identity.
"""

from __future__ import annotations


def graph_break(msg: str = "") -> None:
    """Force a graph break here: inside compiled code, the graph so far ends and this call
    runs eagerly (it does nothing). ``msg`` is shown in the break's reason."""
    del msg
