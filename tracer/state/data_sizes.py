"""Sizes that come from data (issue 23): an operation whose output size follows array values
(``np.nonzero(x > 0)``, ``x[x > 0]``, ``np.unique(x)``, ``np.repeat(x, counts)``) is a node of
the graph like any other, whose result's size is known only when the graph runs. The graph goes
on instead of breaking there:

- the node, and every node computing an array from such a result, is marked
  (``Node.sized_by_data``) and its meta has no sizes (``TensorMeta.of(..., symbolic=True)``);
- their dims are read in the graph when the trace asks for them: ``len(i)`` and
  ``i.shape[0]`` are ints of the graph, which arithmetic and NumPy calls take as they are;
  where the trace needs one as a Python number (a ``range``, a branch, a size it makes) it
  breaks there, as it did at the operation before;
- every node that meets such a value may raise where the example did not (``max`` of an empty
  selection, arrays whose lengths no longer fit together): its risk is RAISE, and a graph that
  fails runs the frame again eagerly, where the user sees NumPy's error at their line.

`explain` and the widget list each operation that makes such a size (`made_in`).
Kernel backends compute a boolean selection that only whole reductions read as a masked
reduction, and run any other such node in NumPy on the host (their plans fix sizes from the
inputs'). ``tc.config.sizes_from_data = False`` breaks at those operations, as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config import config
from ..ir import file_labels
from ..ir.cond_nodes import BODY_OPS
from ..ir.node import RAISE, Node, TensorMeta
from ..values.arrays import ArrayValue


def enabled() -> bool:
    return config.sizes_from_data


def follows(leaves) -> bool:
    """Whether an operation on these traced leaves meets a size from data."""
    return any(isinstance(v, ArrayValue) and v.node.sized_by_data for v in leaves)


def takes(example) -> bool:
    """Whether a result of such an operation can have sizes from data: an array, or a plain
    tuple of them (``np.nonzero``'s, one per dim); not a named tuple (``np.unique_all``), whose
    class the graph's items would lose."""
    if type(example) is tuple:
        return all(type(e) is np.ndarray for e in example)
    return type(example) is np.ndarray


def mark(node: Node, example) -> None:
    """``node`` computes an array (or a tuple of arrays) whose sizes follow data, or a value
    from one: it may raise at run time, and arrays it makes have no sizes in their meta."""
    node.risk = RAISE
    if _has_arrays(example):
        node.sized_by_data = True
        if isinstance(example, np.ndarray):
            node.tensor = TensorMeta.of(example, symbolic=True)
            node.meta = node.tensor.text()


def _has_arrays(example) -> bool:
    if isinstance(example, (tuple, list)):
        return any(_has_arrays(e) for e in example)
    return isinstance(example, np.ndarray) and example.ndim > 0


def needed_as_number(state, v: ArrayValue):
    """What runs when the trace needs a dim of ``v`` (whose sizes follow data) as a Python
    number: the break there."""

    def needed():
        raise state.graph_break(
            "data_dependent_shape",
            f"the size of {v.node.name} comes from array values (known only when the graph "
            "runs), and is needed here as a Python number",
            "Keep it in NumPy calls and arithmetic (np.zeros(n) or range(n) needs its value).",
        )

    return needed


@dataclass(frozen=True)
class DataSize:
    """An operation whose result's size follows array values, as `explain` lists it."""

    filename: str
    lineno: int
    operation: str  # as the graph prints it: ``sum_selected = x[gt]``

    def describe(self) -> str:
        return (f"{file_labels.label(self.filename)}:{self.lineno}: {self.operation} (its "
                "size follows array values: known only when the graph runs)")  # fmt: skip


def made_in(graph) -> list[DataSize]:
    """The operations of ``graph`` (and of the bodies of its loop and cond nodes) that make a
    size from data: marked, of no marked operand."""
    found = []
    for node in graph.nodes:
        if node.op in BODY_OPS:
            for body in getattr(node.target, "bodies", None) or (node.target.body,):
                found += made_in(body)
        operands = [a for a in (*node.args, *node.kwargs.values()) if isinstance(a, Node)]
        if node.sized_by_data and not any(a.sized_by_data for a in operands) and node.stack:
            where = node.stack[-1]
            found.append(DataSize(where.filename, where.lineno, graph.format_node(node)))
    return found
