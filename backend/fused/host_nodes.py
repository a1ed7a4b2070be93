"""Graph nodes run by NumPy on the host: an extern step (what the eager backend would print for
the node, a loop or cond node's function included) and the graph's views the caller must get as views
of their own arrays."""

from __future__ import annotations

import weakref

from tcompile.tracer.ir.cond_nodes import BODY_OPS
from tcompile.tracer.ir.graph import loop_function
from tcompile.tracer.ir.node import Node


def run_node(node: Node, args: list, kwargs: dict):
    """The node's NumPy operation on host values (what the eager backend would print)."""
    if node.op in BODY_OPS:
        return _loop_python(node.target)(*args)
    if node.op == "call":
        return node.target(*args, **kwargs)
    if node.op == "getitem":
        return args[0][args[1]]
    if node.op == "setitem":
        args[0][args[1]] = args[2]
        return None
    if node.op == "method":
        return getattr(args[0], node.target)(*args[1:], **kwargs)
    if node.op == "attr":
        return getattr(args[0], node.target)
    if node.op == "inplace":
        return node.target(args[0], args[1])
    raise AssertionError(node.op)


_LOOP_PYTHON: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _loop_python(loop):
    """A loop or cond node's function as the graph prints it, made once per node."""
    run = _LOOP_PYTHON.get(loop)
    if run is None:
        run = _LOOP_PYTHON[loop] = loop_function(loop)
    return run


def replay_view(node: Node, inputs, made: tuple = ()) -> object:
    """The graph's view ``node``, made by NumPy from the caller's arrays (so that a view of one
    is one), or from ``made``: ``(base, array)``, the value computed here that it views."""
    graph_inputs = [n for n in node.graph.nodes if n.op == "input"]
    known = dict([made]) if made else {}

    def value(arg):
        if isinstance(arg, Node):
            if arg in known:
                return known[arg]
            if arg.op == "input":
                return inputs[graph_inputs.index(arg)]
            return run_node(arg, [value(a) for a in arg.args],
                             {k: value(v) for k, v in arg.kwargs.items()})  # fmt: skip
        if isinstance(arg, (tuple, list)):
            return type(arg)(value(a) for a in arg)
        return arg

    return value(node)
