"""Element-wise array statements in a native loop's body, fused into one loop nest over their
elements: ``u[1:-1] + 0.2 * (u[:-2] + u[2:] - 2.0 * u[1:-1])`` makes one array, not five.

numba compiles the graph's array statements one at a time, each allocating its result (its
own array-expression fusion only joins the operations of one Python expression, and the graph
names every value), and compiles their shape errors' text formatting (2.8 s on a fresh
machine): a heat-equation step on a 20x10 grid took 1.6x numba's time on the user's source,
the same step as a loop nest 0.75x. A *group* is a run of element-wise operations
(`ELEMENT_UFUNCS`) of one result shape, every array they read of that shape (no broadcasting:
the shapes the trace saw, checked again when the loop runs), with nothing between them that
writes memory or reads a value of the group. It is printed at its last operation's place::

    __tc_a1 = np.empty(u_item_1.shape, np.float64)
    for __tc_i0 in range(u_item_1.shape[0]):
        for __tc_i1 in range(u_item_1.shape[1]):
            __tc_add = np.add(u_item_1[__tc_i0, __tc_i1], u_item_2[__tc_i0, __tc_i1])
            ...
            __tc_a1[__tc_i0, __tc_i1] = __tc_add_3
    add_3 = __tc_a1

Each operation is the printer's statement for one element (the NumPy scalar of the array's
dtype: NumPy's typing rules as the scalar loops spell them), and numba's typing of every
element is checked against that dtype like the body's values (`numba_types`). Only the values
read after the group are arrays (`Group.kept`, fresh memory: `native_source` stores one into a
view of its shape by a plain copy); they are made under temporary names and named after the
nest (a carried value made under its carried name must not hide the old one from the nest's
reads). An in-place update (``a += v``, ``a *= 0.9``) is a group of its own where ``v`` is a
number or a fresh array: the nest writes each element of ``a`` where it read it. Element-wise
operations compute each element from the same elements of their operands, so one pass gives
NumPy's values, bit for bit where the operation is exact.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tcompile.tracer.ir import operators
from tcompile.tracer.ir.cond_nodes import BODY_OPS, Cond
from tcompile.tracer.ir.node import Node, TensorMeta, nodes_in

_ARITHMETIC = (np.add, np.subtract, np.multiply, np.negative, np.positive)
_COMPARED = (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal)
# The ufuncs fused, by the kind of their result: numba's scalar versions compute NumPy's
# function on each element (libm's transcendental functions within the backend's tolerance)
ELEMENT_UFUNCS = {
    "f": frozenset({
        *_ARITHMETIC, np.true_divide, np.power, np.absolute, np.square, np.sqrt, np.exp,
        np.expm1, np.log, np.log1p, np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan,
        np.arctan2, np.sinh, np.cosh, np.tanh, np.hypot, np.maximum, np.minimum, np.fmax,
        np.fmin, np.floor, np.ceil,
    }),
    "i": frozenset({*_ARITHMETIC, np.absolute, np.maximum, np.minimum, np.bitwise_and,
                    np.bitwise_or, np.bitwise_xor}),
    "b": frozenset(_COMPARED),
}  # fmt: skip
_DTYPES = frozenset(map(np.dtype, ("float32", "float64", "int64")))


def _ufunc(node: Node):
    if node.op != "call" or node.kwargs or node.mutates:
        return None
    op = operators.of_function(node.target)
    if op is not None:
        return op.ufunc if len(node.args) == op.arity else None
    return node.target if isinstance(node.target, np.ufunc) and node.target.nout == 1 else None


def _shape(node: Node) -> tuple | None:
    """The key of the group an element-wise operation may join: its result's shape and its
    errstate; None where it is not one (`ELEMENT_UFUNCS`, C-ordered results). A dim known only
    at run time (``a[:k]``, None) is one of the group's where every array has it there: the
    nest checks that they agree as it runs."""
    meta, ufunc = node.tensor, _ufunc(node)
    if ufunc is None or meta is None or meta.kind != "array" or not meta.shape \
            or not _c_ordered(meta):  # fmt: skip
        return None
    if ufunc not in ELEMENT_UFUNCS.get(meta.dtype.kind, ()) or len(node.args) != ufunc.nin:
        return None
    if meta.dtype.kind != "b" and meta.dtype not in _DTYPES:
        return None
    arrays = [a for a in node.args if isinstance(a, Node) and a.tensor is not None
              and a.tensor.kind == "array"]  # fmt: skip
    if not arrays or any(a.tensor.shape != meta.shape or a.tensor.dtype not in _DTYPES
                         for a in arrays):  # fmt: skip
        return None
    if not all(map(_operand, node.args)):
        return None
    return (meta.shape, node.errstate)


def _c_ordered(meta: TensorMeta) -> bool:
    """A result in C order: its strides say so, or (a shape known at run time) its order."""
    if meta.contiguous is not None:
        return meta.contiguous
    return meta.order == tuple(reversed(range(len(meta.shape))))


def _operand(value) -> bool:
    """An array of `_DTYPES`, a NumPy scalar of them, or a Python int or float."""
    if isinstance(value, Node):
        meta = value.tensor
        if meta is None:  # a Python number computed from others (the trace keeps its type)
            return value.meta in ("int", "float")
        if meta.kind == "python":
            return meta.type_name in ("int", "float")
        return meta.dtype in _DTYPES
    if isinstance(value, np.generic):
        return value.dtype in _DTYPES
    return type(value) in (int, float)


def _in_place(node: Node, made: dict) -> tuple | None:
    """The key of an in-place update ``a += v`` that is a group of its own: ``v`` a number or
    an array of ``a``'s shape and dtype that an earlier group made (``made``: it shares no
    memory with ``a``, whose elements the nest writes as it reads them); else None."""
    ufunc = _update(node)
    if ufunc is None:
        return None
    target, value = node.args
    meta = getattr(target, "tensor", None)
    if meta is None or meta.kind != "array" or meta.dtype not in _DTYPES or not meta.shape \
            or None in meta.shape or ufunc not in ELEMENT_UFUNCS[meta.dtype.kind]:  # fmt: skip
        return None
    value_meta = getattr(value, "tensor", None)
    if value_meta is not None and value_meta.kind == "array":
        if (
            id(value) not in made
            or value_meta.shape != meta.shape
            or value_meta.dtype != meta.dtype
        ):
            return None
    elif not _operand(value) or (_dtype_of(value) not in (None, meta.dtype)):
        return None
    return (meta.shape, node.errstate, "in place")


def _update(node: Node):
    """The ufunc of ``a += v`` or ``np.add(a, v, out=a)`` (None for another node)."""
    if len(node.args) != 2:
        return None
    if node.op == "inplace" and not node.kwargs:
        op = operators.of_function(node.target)
        return op.ufunc if op is not None else None
    if node.op == "call" and node.kwargs == {"out": node.args[0]}:
        return node.target if isinstance(node.target, np.ufunc) and node.target.nout == 1 else None
    return None


def _dtype_of(value) -> np.dtype | None:
    """A NumPy scalar's dtype (None for a Python number)."""
    meta = getattr(value, "tensor", None)
    if meta is not None and meta.kind == "scalar":
        return meta.dtype
    return value.dtype if isinstance(value, np.generic) else None


def _writes(node: Node) -> bool:
    """Whether ``node`` may write memory (or run what may): the group cannot pass it."""
    return (node.op not in ("getitem", "attr", "call", "method") or node.mutates
            or "out" in node.kwargs or isinstance(node.target, Cond)
            or node.op in BODY_OPS)  # fmt: skip


class Group:
    """Element-wise operations printed as one loop nest (`ElementLoops`)."""

    def __init__(self, first: Node, key: tuple):
        self.members, self.key = [first], key
        self.kept: list[Node] = []  # the members read after the group: made as arrays


def groups_of(nodes: list[Node]) -> dict[Node, Group]:
    """Each group of operations of ``nodes`` (a body's, in order), by its last. One alone is a
    group too: numba's array operations compile their shape errors' text formatting (2.8 s on
    a fresh machine), a nest a constant message."""
    found: dict[Node, Group] = {}
    group: Group | None = None
    member_of: dict[int, Group] = {}

    def close() -> None:
        if group is not None:
            found[group.members[-1]] = group
            member_of.update((id(m), group) for m in group.members)

    for node in nodes:
        key = _shape(node)
        if key is not None and group is not None and key == group.key:
            group.members.append(node)
            continue
        if _update(node) is not None:  # a group of its own, after the one it may read
            close()
            group = None
            key = _in_place(node, member_of)
            if key is not None:
                group = Group(node, key)
                close()
                group = None
            continue
        reads = {id(u) for u in nodes_in((node.args, node.kwargs))}
        if (
            key is not None
            or _writes(node)
            or (group and any(id(m) in reads for m in group.members))
        ):
            close()
            group = Group(node, key) if key is not None else None
    close()
    for node in nodes:  # the members read by a node of no group, or of another one
        for used in nodes_in((node.args, node.kwargs)):
            owner = member_of.get(id(used))
            if (
                owner is not None
                and member_of.get(id(node)) is not owner
                and used not in owner.kept
            ):
                owner.kept.append(used)
    return found


class ElementLoops:
    """The groups of each graph a native printer prints, found at its first statement, and
    the elements' names and dtypes (numba's typing of them is checked: ``metas``)."""

    def __init__(self):
        self._groups: dict[int, dict[Node, Group]] = {}
        self.metas: dict[int, dict[str, TensorMeta]] = {}  # id(graph) -> element name -> meta
        self._arrays = 0  # temporary names made
        self._made: set[int] = set()  # the ids of the nests' kept values (the graphs hold them)

    def lines(self, printer, node: Node) -> list[tuple[str, Node]] | None:
        """The lines ``node`` prints as: its group's nest at its last member, none at the
        others; None for a node of no group."""
        graph = node.graph
        groups = self._groups.get(id(graph))
        if groups is None:
            found = groups_of(graph.nodes)
            groups = self._groups[id(graph)] = {m: None for g in found.values() for m in g.members}
            groups.update(found)
            self._made.update(id(k) for group in found.values() for k in group.kept)
        if node not in groups:
            return None
        group = groups[node]
        return [] if group is None else self._nest(printer, group)

    def fresh(self, value) -> bool:
        """Whether ``value`` is an array a nest made (it shares no memory with another), in a
        graph whose statements before it were printed."""
        return id(value) in self._made

    def _nest(self, printer, group: Group) -> list[tuple[str, Node | None]]:
        """The group's lines: a check that its arrays have one shape, its kept members'
        arrays, the nest, their names (the lines of no member's statement carry no node)."""
        shape = group.key[0]
        indices = [f"__tc_i{d}" for d in range(len(shape))]
        at = f"[{', '.join(indices)}]"
        elements: dict[int, Node] = {}
        loads: list[Node] = []  # aliased while the nest prints: an id is free again later
        metas = self.metas.setdefault(id(group.members[0].graph), {})
        body, arrays = [], []  # the statements in the nest; the arrays it reads, as printed
        for member in group.members:
            for operand in member.args:
                if isinstance(operand, Node) and id(operand) not in elements and \
                        operand.tensor is not None and operand.tensor.kind == "array":  # fmt: skip
                    load = replace(operand, tensor=_scalar(operand.tensor.dtype))
                    arrays.append(printer.arg(operand))
                    printer.aliases[id(load)] = f"{arrays[-1]}{at}"
                    loads.append(load)
                    elements[id(operand)] = load
            args = tuple(elements.get(id(a), a) if isinstance(a, Node) else a for a in member.args)
            update = _update(member)
            dtype = (member if update is None else member.args[0]).tensor.dtype
            element = replace(member, name=f"__tc_{member.name}", args=args, tensor=_scalar(dtype),
                              op="call", target=member.target if update is None else update, kwargs={})  # fmt: skip
            elements[id(member)] = element
            metas[element.name] = element.tensor
            body.append((printer.statement(element), member))
            if update is not None:  # the element written back where it was read
                body.append((f"{printer.arg(member.args[0])}{at} = {element.name}", None))
        for load in loads:
            del printer.aliases[id(load)]
        first, others = arrays[0], arrays[1:]
        lines: list[tuple[str, Node | None]] = []
        if others:  # the trace's shapes, as the loop runs
            differ = " or ".join(f"{a}.shape != {first}.shape" for a in others)
            lines += [(f"if {differ}:", None), ('    raise ValueError("shapes differ")', None)]
        made = []
        for kept in group.kept:
            self._arrays += 1
            made.append((kept, f"__tc_a{self._arrays}"))
            dtype = "bool_" if kept.tensor.dtype.kind == "b" else kept.tensor.dtype.name
            lines.append((f"{made[-1][1]} = np.empty({first}.shape, np.{dtype})", None))
        body += [(f"{array}{at} = {elements[id(kept)].name}", None) for kept, array in made]
        for depth, index in enumerate(indices):
            lines.append((f"{'    ' * depth}for {index} in range({first}.shape[{depth}]):", None))
        lines += [(f"{'    ' * len(indices)}{text}", n) for text, n in body]
        return lines + [(f"{printer.arg(kept)} = {array}", None) for kept, array in made]


def _scalar(dtype: np.dtype) -> TensorMeta:
    return TensorMeta("scalar", dtype, type_name=dtype.type.__name__)
