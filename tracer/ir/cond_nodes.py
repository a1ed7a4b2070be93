"""The target of ``cond`` nodes: a branch on an array value, both sides traced into graphs of
their own, printed as the ``if`` statement it is.

``cond(pred, *read)`` runs ``then_body(*read)`` where ``pred`` is true and ``else_body(*read)``
where it is not: only the side taken runs, so the other's writes, errors and warnings never
happen. Both bodies take the same inputs (the values the sides read from before the branch, by
the same names) and give tuples of the same kinds: the locals either side sets that the code
after the branch reads. The graph prints the node as the call of its function, defined before
the graph's, as loop nodes are::

    def _cond_fn(__tc_pred, x, best):
        if __tc_pred:
            best_1 = x[i]
            return (best_1,)
        return (best,)
"""

from __future__ import annotations

from dataclasses import dataclass

from .loop_nodes import LOOP_OPS

PRED = "__tc_pred"


@dataclass(frozen=True, eq=False)
class Cond:
    """A cond node's target: the graph of each side (`tracer.ir.graph.Graph`; this module
    imports none: the graph imports it)."""

    then_body: object
    else_body: object

    op = "cond"

    @property
    def bodies(self) -> tuple:
        return (self.then_body, self.else_body)


class SideNotTraced(Exception):
    """A cond node's side that raised when traced was taken: the graph fails, and the frame
    runs again eagerly (`graph_failure`), where the user sees what eager code does."""


def side_not_traced(why: str):
    """The whole of a side that raised on the trace's examples (the examples took the other
    side): eager code runs it, if it is ever taken."""
    raise SideNotTraced(why)


def function_lines(name: str, params: list[str], then_lines: list, else_lines: list,
                   node) -> list:  # fmt: skip
    """The cond as the Python function ``name``, line by line as (text, node): ``params`` are
    the bodies' inputs, ``then_lines`` and ``else_lines`` each side's statements as its body's
    function prints them (indented once, its ``return`` last). The ``if`` belongs to ``node``;
    the sides' lines keep their nodes."""
    head = [(f"def {name}({', '.join([PRED, *params])}):", node), (f"    if {PRED}:", node)]
    return head + [(f"    {text}", n) for text, n in then_lines] + list(else_lines)


# Nodes whose target holds body graphs, each printed as a function of its own before the graph's.
BODY_OPS = frozenset({*LOOP_OPS, Cond.op})
