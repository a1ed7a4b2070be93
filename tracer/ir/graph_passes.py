"""Graph passes that keep results bit for bit: common-subexpression elimination here; dead-code
elimination is `Graph.eliminate_dead_code`. Each pass is followed by `Graph.lint`.
"""

from __future__ import annotations

import types

import numpy as np

from . import numpy_table, operators
from .graph import Graph
from .node import STATEMENT_OPS, Node, nodes_in, substitute


def eliminate_common_subexpressions(graph: Graph) -> int:
    """Drop each node that computes what an earlier node already computed (same operation on
    the same values, with no write to memory in between); its users use the earlier node.
    Returns how many nodes were dropped.

    Two computations of ``x[:, 1:]`` or of ``i - 1`` become one. Left alone:
    - operations that may warn (float arithmetic, integer division): eager code warns twice,
      once per computation; the Triton backend merges these within its kernels, where no
      warning is raised;
    - anything but NumPy's own operations (a custom op may have hidden state);
    - two values that both leave the graph (the caller gets two arrays, as eager code gives);
    - values whose memory the graph writes, directly or through a view (merging them would let
      one write show in both).
    """
    written = _written_classes(graph)
    outputs = {id(n) for n in nodes_in(graph.output.args)} if graph.output else set()
    first_of: dict = {}
    replaced: dict[int, Node] = {}
    epoch = 0  # bumped by every write: a value read after a write is another value
    for node in graph.nodes:
        if replaced:
            node.args = substitute(node.args, replaced)
            node.kwargs = substitute(node.kwargs, replaced)
        if node.mutates or node.op in STATEMENT_OPS:
            epoch += 1
            continue
        if node.op in ("input", "output") or not _is_numpy_operation(node):
            continue
        if not _cannot_warn(node):
            continue
        if written.get(id(node)):
            continue
        key = _key(node, epoch)
        if key is None:
            continue
        first = first_of.setdefault(key, node)
        if first is not node and not (id(first) in outputs and id(node) in outputs):
            replaced[id(node)] = first
            if id(node) in outputs:  # first now leaves the graph in its place: a third such
                outputs.add(id(first))  # value leaving too must stay an array of its own
    graph.nodes = [n for n in graph.nodes if id(n) not in replaced]
    return len(replaced)


def _written_classes(graph: Graph) -> dict[int, bool]:
    """For each node, whether the graph writes memory it may share: nodes are grouped with the
    arguments whose memory their value may view (anything but a fresh result), and a group is
    written when any member is an argument of a writing node."""
    parent: dict[int, int] = {}

    def find(i: int) -> int:
        while parent.get(i, i) != i:
            i = parent[i]
        return i

    for node in graph.nodes:
        if node.has_value and not numpy_table.returns_new_memory(node.op, node.target):
            for arg in nodes_in((node.args, node.kwargs)):
                parent[find(id(node))] = find(id(arg))
    written_roots = {
        find(id(arg))
        for node in graph.nodes
        if node.mutates or node.op in STATEMENT_OPS
        for arg in nodes_in((node.args, node.kwargs))
    }
    return {id(n): find(id(n)) in written_roots for n in graph.nodes}


def _is_numpy_operation(node: Node) -> bool:
    target = node.target
    if node.op in ("getitem", "attr"):
        return True
    if node.op != "call":
        return False
    if isinstance(target, (np.ufunc, types.MethodDescriptorType)) or target is np.shape:
        return True
    return operators.of_function(target) is not None or numpy_table.is_numpy_object(target)


# Integer operations that never warn nor raise on any values (division and powers may).
_QUIET_ON_INTEGERS = frozenset(
    id(f) for f in (np.add, np.subtract, np.multiply, np.negative, np.positive, np.absolute,
                    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift,
                    np.right_shift, np.less, np.less_equal, np.greater, np.greater_equal,
                    np.equal, np.not_equal, np.maximum, np.minimum, np.logical_and,
                    np.logical_or, np.logical_not, np.logical_xor, np.square, np.sum, np.prod,
                    np.max, np.min, np.any, np.all, np.cumsum, np.cumprod, np.where, np.clip,
                    np.ndarray.astype)
)  # fmt: skip


def _cannot_warn(node: Node) -> bool:
    """Whether the node can neither warn nor raise: merging two of them is invisible."""
    if node.risk == "silent":
        return True
    if node.risk != "fp" or id(node.target) not in _QUIET_ON_INTEGERS:
        return False
    metas = [n.tensor for n in nodes_in((node.args, node.kwargs))] + [node.tensor]
    return all(
        m is not None and (m.kind == "python" or m.dtype.kind in "biu") for m in metas
    ) and not any(isinstance(c, float) for c in _constants(node.args))


def _constants(obj):
    if isinstance(obj, (tuple, list)):
        for item in obj:
            yield from _constants(item)
    elif not isinstance(obj, Node):
        yield obj


def _key(node: Node, epoch: int):
    try:
        key = (node.op, id(node.target), _arg_key(node.args), _arg_key(node.kwargs))
        hash(key)
    except _Unkeyable:
        return None
    return key, node.errstate, epoch


class _Unkeyable(Exception):
    pass


def _arg_key(value):
    """A hashable key equal for two arguments exactly when they are the same value: nodes by
    identity, constants by type and bits (0.0 and -0.0 differ, NaN equals NaN)."""
    if isinstance(value, Node):
        return ("node", id(value))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_arg_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _arg_key(v)) for k, v in value.items()))
    if isinstance(value, slice):
        return ("slice", _arg_key(value.start), _arg_key(value.stop), _arg_key(value.step))
    if type(value) is float:
        return ("float", value.hex())
    if type(value) is complex:
        return ("complex", value.real.hex(), value.imag.hex())
    if isinstance(value, np.generic):
        return ("np", type(value), value.tobytes())
    if value is None or value is Ellipsis or type(value) in (bool, int, str, bytes):
        return (type(value).__name__, value)
    if isinstance(value, np.dtype) or isinstance(value, type):
        return ("object", id(value))
    raise _Unkeyable(value)


def same_values(graph: Graph, first: Node, second: Node) -> bool:
    """Whether two nodes of ``graph`` (``first`` earlier) hold equal values: the same
    element-wise ufunc or item read on the same values, node for node down to common nodes, and
    nothing written in between. Two spellings of one mask (``a[a > 0] = a[a > 0] ** 2``) are
    one selection."""
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    pairs: list[tuple[Node, Node]] = []
    if not _same_computation(first, second, pairs) or not all(
        id(n) in position for pair in pairs for n in pair
    ):
        return False
    start = min(position[id(n)] for pair in pairs for n in pair)
    between = graph.nodes[start : position[id(second)]]
    return not any(_may_write_older(n, start, position) for n in between)


def _may_write_older(node: Node, start: int, position: dict) -> bool:
    """Whether ``node`` may write memory that existed before node ``start``: not a ufunc
    writing only its ``out=`` array made since (``x[m] ** 2`` computed into a new array)."""
    if not (node.mutates or node.op in STATEMENT_OPS):
        return False
    out = node.kwargs.get("out")
    fresh = (
        isinstance(node.target, np.ufunc)
        and isinstance(out, Node)
        and position.get(id(out), -1) >= start
        and numpy_table.returns_new_memory(out.op, out.target)
    )
    return not fresh


def _same_computation(a, b, pairs: list) -> bool:
    """``a`` and ``b`` computed alike from common values (the distinct node pairs in
    ``pairs``); only deterministic operations: ufuncs and item reads."""
    if a is b:
        return True
    if not (isinstance(a, Node) and isinstance(b, Node)):
        try:
            return _arg_key(a) == _arg_key(b)
        except _Unkeyable:
            return False
    deterministic = a.op == "getitem" or (a.op == "call" and isinstance(a.target, np.ufunc))
    if (
        not deterministic
        or (a.op, a.target) != (b.op, b.target)
        or a.kwargs.keys() != b.kwargs.keys()
    ):
        return False
    if len(a.args) != len(b.args) or "out" in a.kwargs:
        return False
    pairs.append((a, b))
    return all(_same_computation(x, y, pairs) for x, y in zip(a.args, b.args)) and all(
        _same_computation(a.kwargs[k], b.kwargs[k], pairs) for k in a.kwargs
    )
