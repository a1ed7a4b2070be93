"""The eager backend's memory plan: release each value after its last use, and let element-wise
operations write into an operand that dies with them.

A graph binds every value to a name, so without a plan it keeps them all alive until it
returns (an unrolled loop: every iteration's arrays), where plain NumPy frees each temporary as
soon as the expression is done with it. The plan adds ``del`` after each value's last use, and
gives an element-wise ufunc whose result has exactly the layout of one of its operands (shape,
dtype, strides) that operand's buffer, when the operand dies there and nothing else can see its
memory:

    s = x - m                          s = x - m
    e = np.exp(s)            ->        e = np.exp(s, out=s)
    y = e / t                          del s
    return (y,)                        y = np.true_divide(e, t, out=e)
                                       del e, t
                                       return (y,)

Writing into a dying operand is what NumPy's own temporary elision does for ``a * b + c``; here
it also covers function calls (``np.exp(a - b)``). It never allocates where eager code would
not, so peak memory stays at most eager's, and results are bitwise the same: the same ufunc
loop, into a buffer of the same dtype and layout. A buffer is reused only if it is a fresh
result (of an element-wise ufunc, or of an operation NumPy's table says makes new memory:
``np.outer``, ``@``, reductions) that no other operation could have made a view of, written by
nothing, and not an output of the graph (so never an input, a returned array, a value the glue
passes on across a graph break, or one a side effect keeps).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

from tcompile.tracer.ir.graph import Graph
from tcompile.tracer.ir.loop_nodes import LOOP_OPS
from tcompile.tracer.ir.node import Node, nodes_in
from tcompile.tracer.ir.numpy_table import elementwise_ufunc, returns_new_memory


@dataclass
class MemoryPlan:
    """What the printer adds to a graph's code: ``out=`` buffers and ``del`` statements."""

    out: dict[Node, Node] = field(default_factory=dict)  # node -> the operand it writes into
    release: dict[Node, list[Node]] = field(default_factory=dict)  # node -> names dead after it
    bodies: dict[Node, MemoryPlan] = field(default_factory=dict)  # loop node -> its body's plan

    def buffer_of(self, node: Node) -> Node | None:
        return self.out.get(node)

    def released_after(self, node: Node) -> list[Node]:
        return self.release.get(node, [])

    def of_body(self, node: Node) -> MemoryPlan:
        return self.bodies[node]


def plan_memory(graph: Graph) -> MemoryPlan:
    """The plan for ``graph`` (after dead-code elimination, before printing)."""
    users: dict[Node, list[Node]] = {node: [] for node in graph.nodes}
    for node in graph.nodes:
        for used in nodes_in((node.args, node.kwargs)):
            if node not in users[used]:
                users[used].append(node)
    plan = MemoryPlan()
    plan.bodies = {n: plan_memory(n.target.body) for n in graph.nodes if n.op in LOOP_OPS}
    written = {w for node in graph.nodes if node.mutates for w in _written_operands(node)}
    for node in graph.nodes:
        if not node.has_value or node.op == "input" or _a_number(node):
            continue
        last = users[node][-1] if users[node] else node
        if last.op != "output":
            plan.release.setdefault(last, []).append(node)
    for node in graph.nodes:
        buffer = _dying_operand(node, users, written)
        if buffer is not None:
            plan.out[node] = buffer
    return plan


def _a_number(node: Node) -> bool:
    """A NumPy scalar or Python number: deleting its name frees nothing worth a statement
    (in a loop's body, a ``del`` per iteration is time)."""
    meta = node.tensor
    if meta is None:  # a number of the graph (``n + 1`` of ints) has its type's name alone
        return node.meta in ("int", "float", "bool", "complex")
    return meta.kind == "scalar" or (
        meta.kind == "python" and meta.type_name in ("int", "float", "bool", "complex"))  # fmt: skip


def _dying_operand(node: Node, users: dict, written: set) -> Node | None:
    """An operand of ``node`` whose buffer ``node`` may write its result into, if any."""
    if elementwise_ufunc(node.target) is None or not _owns_its_buffer(node):
        return None
    for operand in node.args:
        if (
            isinstance(operand, Node)
            and users[operand][-1] is node
            and _same_layout(node, operand)
            and operand not in written
            and _owns_its_buffer(operand)
            and all(_keeps_no_view(user) for user in users[operand])
        ):
            return operand
    return None


def _same_layout(node: Node, operand: Node) -> bool:
    """Whether ``node``'s result has ``operand``'s layout: equal static metas; or, where sizes are
    symbolic (a Dask chunk's graph), ``operand`` is its only array of any dims (the others
    numbers or 0-d, so no broadcasting) of the result's dtype and rank: an element-wise ufunc
    of one dense array gives its strides (NumPy's ``K`` order)."""
    meta, operand_meta = node.tensor, operand.tensor
    if meta is None or operand_meta is None:
        return False
    if meta.strides is not None:  # static: the same shape and strides (symbolic metas may be
        return meta == operand_meta  # equal for arrays of different sizes)
    others = [a for a in nodes_in(node.args) if a is not operand]
    return (
        operand_meta.dtype == meta.dtype
        and len(operand_meta.shape) == len(meta.shape)
        and all(a.tensor is not None and (a.tensor.kind != "array" or a.tensor.shape == ())
                for a in others)
    )  # fmt: skip


def _owns_its_buffer(node: Node) -> bool:
    """A new array of a static layout (or dense, where sizes are symbolic), not 0-d, that no
    argument's memory is part of: an element-wise result, or any operation NumPy's table says
    makes new memory (``np.outer``, ``@``, a reduction along an axis). ``np.outer(a, b) +
    np.outer(c, d)`` then adds into the first product, as NumPy's temporary elision does in
    the plain expression (a 32 MB array less to page in: gemver's eager code was 1.3x
    NumPy's)."""
    meta = node.tensor
    return (
        node.op == "call"
        and not node.kwargs
        and not node.mutates
        and (returns_new_memory(node.op, node.target) or node.target is operator.pow)
        and meta is not None
        and meta.kind == "array"
        and (meta.strides is not None or meta.order is not None)  # dense where sizes vary
        and len(meta.shape) > 0
        and meta.dtype != object
    )


def _keeps_no_view(user: Node) -> bool:
    return not user.mutates and returns_new_memory(user.op, user.target)


def _written_operands(node: Node) -> list[Node]:
    """The graph values a mutating node may write into (any node among its arguments)."""
    return nodes_in((node.args, node.kwargs))
