"""A graph, for one set of input shapes, as a plan: kernels to generate and steps to run.

Each graph value becomes a `tensors.Tensor` (loadable element by element, nothing computed), a
`Known` Python value, or a `HostValue` computed per call on the host. Values are *realized* into
buffers only where memory must exist: the graph's outputs, arguments of extern steps, targets of
writes. A realization is a one-store `loop_ir.Kernel`; `fusion` then merges them.

What the kernels cannot do runs as an extern step: the node's own NumPy call on host copies of
its arguments (exact, exceptions included), marked "extern" in the report with the reason.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

import numpy as np

from tcompile.tracer.ir import numpy_table, operators
from tcompile.tracer.ir.graph import Graph
from tcompile.tracer.ir.loop_nodes import LOOP_OPS, WhileLoop
from tcompile.tracer.ir.node import Node, TensorMeta, memory_order, nodes_in

from .. import lowering_kinds
from . import loop_ir as ir
from . import pointwise, ufuncs
from .pointwise import Unlowerable
from .tensors import (
    BufferTensor,
    DataIndex,
    Lin,
    Pointwise,
    Reduction,
    Tensor,
    View,
    broadcast_index,
    contiguous_strides,
    index_value,
    is_whole,
    strided,
)


class WholeGraphInNumPy(Exception):
    """A graph that must run in NumPy as a whole (the eager backend's code), and why."""


@dataclass(frozen=True)
class Known:
    """A Python value known when the plan is made (a size, a shape tuple, a constant)."""

    value: object


@dataclass(eq=False)
class HostValue:
    """A value computed per call on the host (a dynamic float, an extern's NumPy scalar, an
    array NumPy makes from Python values)."""

    name: str
    dtype: np.dtype | None = None  # for a NumPy scalar or array; None for a Python value
    shape: tuple | None = None  # for an array


@dataclass(frozen=True)
class NumpyScalar:
    """A 0-d tensor an extern takes as the NumPy scalar the trace saw: NumPy treats the two
    differently (``a.fill(s)`` converts a scalar as a Python number, raising for NaN into an
    integer array, where a 0-d array casts silently)."""

    tensor: Tensor


# -- plan steps --------------------------------------------------------------------------------


@dataclass(eq=False)
class Launch:
    kernel: ir.Kernel


@dataclass(eq=False)
class Extern:
    """``node``'s NumPy call on host values; ``results`` receive what it returns (buffers
    uploaded, host values kept); ``writes`` are buffers it writes in place."""

    node: Node
    args: tuple
    kwargs: dict
    results: tuple
    writes: tuple[ir.Buffer, ...]
    reason: str


@dataclass(eq=False)
class DeviceLoop:
    """A loop node: its body graph runs as a program of its own (its kernels compiled once), once
    per iteration, on the device tensors of ``args``; ``results`` receive the loop's outputs;
    ``writes`` are buffers its body writes in place."""

    node: Node
    args: tuple
    results: tuple
    writes: tuple[ir.Buffer, ...]


@dataclass(eq=False)
class LibraryCall:
    """An operation of the array library on device buffers (``op`` names it: "matmul",
    "cumsum", "cumprod"); the result is a new buffer of the node's dtype."""

    op: str
    operands: tuple
    options: dict
    result: ir.Buffer | None


@dataclass(eq=False)
class Upload:
    """A host value a kernel reads, put in a 0-d buffer."""

    value: HostValue
    buffer: ir.Buffer


@dataclass(eq=False)
class HostCall:
    """A Python or NumPy operation on host values, run on every call (``x * 0.5`` with a
    dynamic float; ``np.arange(n)``, a new array each call)."""

    fn: object
    args: tuple
    kwargs: dict
    result: HostValue


@dataclass
class Output:
    """How one output is made: ``source`` is a Buffer (``scalar``: returned as a NumPy scalar;
    ``view``: ``(offset, strides, shape)`` of a view of it; ``replay``: the graph's view of the
    value ``base`` that the buffer holds, which NumPy makes from it), an input position (the
    caller's own object, or with ``replay`` the graph's view of it, which NumPy makes from that
    object), a `HostValue` or a `Known`."""

    source: object
    scalar: bool = False
    view: tuple | None = None
    replay: Node | None = None
    base: Node | None = None


@dataclass
class Plan:
    """Everything one call runs, for one set of input shapes and layouts."""

    inputs: list  # per graph input: a Buffer, a HostValue, or Known (an ignored object)
    steps: list
    outputs: list[Output]
    kernels: list[ir.Kernel] = field(default_factory=list)
    externs: list[Extern] = field(default_factory=list)
    written_inputs: list[int] = field(default_factory=list)  # input positions written in place
    checks: bool = False  # whether kernels raise the error flag (gathers, integer powers)


@dataclass(frozen=True)
class InputMeta:
    """What the plan needs of one graph input: an array's dtype, shape and strides (elements),
    or a host value."""

    kind: str  # "array", "scalar" (a NumPy scalar), "python"
    dtype: np.dtype | None = None
    shape: tuple = ()
    strides: tuple = ()
    device_array: bool = False  # a torch tensor, a CuPy array (not NumPy)


def lower(graph: Graph, inputs: list[InputMeta]) -> Plan:
    """The plan for ``graph`` on inputs like ``inputs``; kernels not yet fused (see `fusion`)."""
    _check_input_orders(graph, inputs)
    return _Lowering(graph, inputs).run()


def _check_input_orders(graph: Graph, inputs: list[InputMeta]) -> None:
    """NumPy lays a result out after its inputs (``x.T + 1`` of a C-ordered ``x`` is
    Fortran-ordered); a plan lays results out as the trace saw them. A NumPy input whose dims
    are in another order in memory than the traced example's runs the graph in NumPy, which
    decides."""
    for node, meta in zip(graph.inputs, inputs):
        traced = node.tensor
        if meta.kind != "array" or meta.device_array or not meta.strides:
            continue
        was = _traced_order(traced, meta.shape)
        if was is not None and _dims_in_memory(meta.shape, meta.strides) != was:
            raise WholeGraphInNumPy(f"input {node.name} is laid out in another order than the "
                                    "traced one, and NumPy lays the results out after it")  # fmt: skip


def _traced_order(traced: TensorMeta | None, shape: tuple) -> tuple[int, ...] | None:
    """`_dims_in_memory` of a traced array at ``shape`` (None: no layout was traced)."""
    if traced is None or traced.kind != "array":
        return None
    if traced.strides is not None:
        return _dims_in_memory(shape, traced.strides)
    if traced.order is not None:
        return tuple(d for d in traced.order if shape[d] > 1)
    return None


def _dims_in_memory(shape: tuple, strides: tuple) -> tuple[int, ...]:
    """The dims that hold more than one element, fastest-varying in memory first."""
    order = sorted(range(len(shape)), key=lambda d: (abs(strides[d]), -d))
    return tuple(d for d in order if shape[d] > 1)


class _Lowering:
    def __init__(self, graph: Graph, inputs: list[InputMeta]):
        self.graph = graph
        self.values: dict[Node, object] = {}
        self.plan = Plan([], [], [])
        self.names: dict[str, int] = {}
        self.written = written_nodes(graph)
        self.position = 0
        self.last_use: dict[Node, int] = {}
        for position, node in enumerate(graph.nodes):
            for used in nodes_in((node.args, node.kwargs)):
                self.last_use[used] = position
        self.pending: list[Node] = []  # nodes lowered since the last kernel, for its comments
        self.device_inputs = [meta.device_array for meta in inputs]
        for node, meta in zip(graph.inputs, inputs):
            self.values[node] = self._input(node, meta)
            self.plan.inputs.append(self._input_slot(self.values[node]))

    # -- naming -----------------------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        n = self.names.get(hint, 0)
        self.names[hint] = n + 1
        return f"{hint}{n}" if n else hint

    def buffer(self, hint: str, dtype: np.dtype, shape: tuple[int, ...]) -> ir.Buffer:
        pointwise.triton_type(dtype)  # Unlowerable for complex and friends
        return ir.Buffer(self.fresh(hint), np.dtype(dtype), tuple(shape), contiguous_strides(shape))

    # -- inputs ------------------------------------------------------------------------------
    def _input(self, node: Node, meta: InputMeta):
        if meta.kind == "array":
            if not _triton_dtype(meta.dtype):
                return HostValue(node.name, meta.dtype)  # complex input: externs only
            buffer = ir.Buffer(node.name, meta.dtype, meta.shape, meta.strides)
            return BufferTensor.whole(buffer)
        if meta.kind == "scalar":
            return HostValue(node.name, meta.dtype)
        return HostValue(node.name)

    def _input_slot(self, value):
        return value.buffer if isinstance(value, BufferTensor) else value

    # -- the walk ----------------------------------------------------------------------------
    def run(self) -> Plan:
        for position, node in enumerate(self.graph.nodes):
            if node.op == "input":
                continue
            if node.op == "output":
                self._outputs(node)
                break
            self.position = position
            self.pending.append(node)
            try:
                self.values[node] = self._lower(node)
            except Unlowerable as why:
                self.values[node] = self._extern(node, str(why))
            value = self.values[node]
            if node in self.written and isinstance(value, HostValue) and value.shape is not None:
                value = self.values[node] = self._uploaded(value)
            if node in self.written and isinstance(value, Tensor) and strided(value) is None:
                # a computed value written later (directly or through a view): its memory
                # must exist now, so that views made of it see the write
                self.values[node] = self.realize(value, node.name)
        return self.plan

    def before_write(self, buffer: ir.Buffer) -> None:
        """Compute now every pending value that reads ``buffer`` and is used later: eager code
        computed it before this write (``s = b.sum(); b *= 2``)."""
        for node, value in list(self.values.items()):
            if self.last_use.get(node, -1) <= self.position:
                continue
            if isinstance(value, Tensor) and strided(value) is None and buffer in _reads(value):
                self.values[node] = self.realize(value, node.name)
            elif isinstance(value, tuple) and any(
                isinstance(v, Tensor) and buffer in _reads(v) for v in value
            ):
                self.values[node] = tuple(
                    self.realize(v, f"{node.name}_{i}") if isinstance(v, Tensor) else v
                    for i, v in enumerate(value)
                )

    def _lower(self, node: Node):  # noqa: C901 - a dispatch over node kinds: a lowering registry replaces it (issue 21.6)
        if node.errstate and any(v in ("raise", "call") for _, v in node.errstate):
            raise Unlowerable("traced under np.errstate(...='raise'): NumPy must see the error")
        if node.op in LOOP_OPS:
            return self._loop(node)
        if node.op == "call" and getattr(node.target, "__self__", None) is np.add \
                and node.target.__name__ == "at":  # fmt: skip
            return self._scatter_add(node)
        if node.op == "getitem" and isinstance(self.value(node.args[0]), (tuple, list, Known)):
            base = self.value(node.args[0])
            item = base.value[self._known(node.args[1])] if isinstance(base, Known) else \
                base[self._known(node.args[1])]  # fmt: skip
            return Known(item) if isinstance(base, Known) else item
        if node.op == "call" and node.target is np.shape:
            return Known(tuple(self.tensor(self.value(node.args[0])).shape))
        if node.op == "call" and _is_creation(node.target):
            return self._creation(node)
        if node.op == "call" and node.target is np.ndarray.setflags:
            raise WholeGraphInNumPy(
                "it changes an array's flags, which live with the caller's array"
            )
        if node.op == "call" and not _has_tensor(
            [self.value(a) for a in (*node.args, *node.kwargs.values())]
        ):
            return self._host(node)
        operator_ = operators.of_function(node.target) if node.op == "call" else None
        if operator_ is not None and operator_.ufunc is not None and not node.kwargs:
            return self._ufunc(node, operator_.ufunc)  # NumPy scalars: the ufunc's arithmetic
        kind = lowering_kinds.lowering_kind(node.op, node.target, node.args)
        if kind == lowering_kinds.POINTWISE:
            return self._pointwise(node)
        if kind == lowering_kinds.REDUCTION:
            return self._reduction(node)
        if kind == lowering_kinds.VIEW:
            return self._view(node)
        if kind == lowering_kinds.GATHER and node.op == "getitem":
            return self._gather(node)
        if node.op == "setitem" and kind == lowering_kinds.SCATTER:
            return self._setitem(node)
        if kind in (lowering_kinds.MATMUL, lowering_kinds.SCAN):
            return self._library(node, kind)
        raise Unlowerable(f"{_describe(node)} is not lowered to Triton ({kind})")

    def value(self, arg):
        """A graph argument as a lowering value: nodes' values, constants as `Known`."""
        if isinstance(arg, Node):
            return self.values[arg]
        if isinstance(arg, (tuple, list)):
            return type(arg)(self.value(a) for a in arg)
        if isinstance(arg, slice):
            return slice(*(self.value(p) for p in (arg.start, arg.stop, arg.step)))
        return Known(arg)

    def _known(self, arg):
        value = self.value(arg)
        if _is_known(value):
            return _unwrap(value)
        raise Unlowerable(f"{_text(arg)} is only known at run time")

    # -- host values ---------------------------------------------------------------------------
    def _host(self, node: Node):
        """A call on Python values: folded now when every argument is known, the result is
        immutable (a size, a dtype) and it can neither fail nor warn, else made on every call
        (an array is a new one each call, as eager code makes it)."""
        args = [self.value(a) for a in node.args]
        kwargs = {k: self.value(v) for k, v in node.kwargs.items()}
        meta = node.tensor
        # A node that may raise or warn runs on every call, as the graph's Python would (one
        # kept only for its warning, ``bool(NotImplemented)``, has known arguments too).
        if (
            node.risk == "silent"
            and all(_is_known(a) for a in (*args, *kwargs.values()))
            and (meta is None or meta.kind == "python" and meta.type_name in _IMMUTABLE)
        ):
            with np.errstate(all="ignore"):
                result = node.target(*map(_unwrap, args),
                                     **{k: _unwrap(v) for k, v in kwargs.items()})  # fmt: skip
            return Known(result)
        dtype = meta.dtype if meta is not None and meta.kind in ("scalar", "array") else None
        shape = tuple(meta.shape) if meta is not None and meta.kind == "array" else None
        result = HostValue(self.fresh(node.name), dtype, shape)
        self.plan.steps.append(HostCall(node.target, tuple(args), kwargs, result))
        return result

    def _creation(self, node: Node) -> Tensor:
        """``np.zeros(shape)``, ``np.full(shape, v)``, ``np.ones_like(x)``: a constant tensor
        (realized where memory is needed: a fresh buffer per call)."""
        meta = node.tensor
        if meta is None or meta.kind != "array" or not all(isinstance(d, int) for d in meta.shape):
            raise Unlowerable(f"{_describe(node)} of a shape known only at run time")
        fill = _CREATIONS[node.target]
        if fill is None:  # np.full / np.full_like: the fill value is an argument
            value = node.kwargs.get("fill_value", node.args[1] if len(node.args) > 1 else None)
            fill = self._known(value)
        if isinstance(fill, np.ndarray) or not isinstance(fill, (bool, int, float, np.generic)):
            raise Unlowerable("np.full with an array fill value")
        pointwise.constant(fill, meta.dtype)  # Unlowerable when it does not fit the dtype
        return _constant_tensor(meta.dtype.type(fill), meta.dtype, tuple(meta.shape))

    def _uploaded(self, value: HostValue):
        """An array made on the host that the graph writes: in one buffer from now on."""
        try:
            return self.tensor(value)
        except Unlowerable:
            return value  # its writes run in NumPy too

    def tensor(self, value) -> Tensor:
        """A value as a tensor: NumPy scalars and arrays made on the host are uploaded."""
        if isinstance(value, Tensor):
            return value
        if isinstance(value, HostValue) and value.dtype is not None and _triton_dtype(value.dtype):
            if not all(isinstance(d, int) for d in value.shape or ()):
                raise Unlowerable(f"{value.name}'s shape is known only at run time")
            buffer = self.buffer(value.name, value.dtype, value.shape or ())
            self.plan.steps.append(Upload(value, buffer))
            return BufferTensor.whole(buffer)
        if isinstance(value, Known) and isinstance(value.value, np.generic):
            dtype = value.value.dtype
            constant = ir.Constant(value.value, dtype)
            return Pointwise(dtype, (), lambda index: constant)
        raise Unlowerable(f"{value} is not an array a kernel can read")

    # -- pointwise -----------------------------------------------------------------------------
    def _pointwise(self, node: Node):
        target = node.target
        if target is np.where:
            return self._where(node)
        if target is np.clip:
            return self._clip(node)
        if target is np.ndarray.astype:
            return self._astype(node)
        if target in (np.copy, np.ndarray.copy, np.ndarray.flatten):
            return self._copy(node)
        if target in (np.concatenate, np.stack):
            return self._join(node)
        if target is np.outer:
            return self._outer(node)
        return self._ufunc(node, target)

    def _outer(self, node: Node) -> Tensor:
        """``np.outer(a, b)``: ``a.ravel()[:, None] * b.ravel()[None, :]``, as NumPy defines it
        (gemver's rank-one updates: a kernel, not a trip to the host)."""
        if node.kwargs or len(node.args) != 2:
            raise Unlowerable("np.outer with out=")
        operands, types = self._operands(node.args)
        if not all(isinstance(o, Tensor) for o in operands):
            raise Unlowerable("np.outer of a Python number")
        a, b = (self._flatten(o) for o in operands)
        shape = (a.shape[0], b.shape[0])
        rows, cols = (
            View(a, shape, lambda index: index[:1]),
            View(b, shape, lambda index: index[1:]),
        )
        in_dtypes, out_dtypes = ufuncs.ufunc_loop(np.multiply, types)

        def compute(index):
            args = (
                _operand_expr(rows, index, in_dtypes[0]),
                _operand_expr(cols, index, in_dtypes[1]),
            )
            return ir.Op(np.multiply, args, in_dtypes, out_dtypes, 0)

        result = Pointwise(out_dtypes[0], shape, compute)
        _check_dtype(node, result)
        return result

    def _copy(self, node: Node) -> Tensor:
        """A new array with the same values (its layout is NumPy's where it is returned)."""
        options = set(node.kwargs) - {"order"}
        order = self._known(node.kwargs.get("order", "C" if node.target is not np.copy else "K"))
        if options or len(node.args) != 1 or (node.target is np.ndarray.flatten and order != "C"):
            raise Unlowerable(f"{_describe(node)} with options")
        source = self.tensor(self.value(node.args[0]))
        shape = (int(np.prod(source.shape)),) if node.target is np.ndarray.flatten else source.shape
        if shape != source.shape:
            source = self._flatten(source)
        return Pointwise(source.dtype, shape, source.load)

    def _join(self, node: Node) -> Tensor:
        """``np.concatenate``/``np.stack``: each element is one part's, chosen by where its
        index falls along the axis (every part is loaded at a clamped index, then selected)."""
        if set(node.kwargs) - {"axis"} or len(node.args) != 1:
            raise Unlowerable(f"{_describe(node)} with options")
        parts = [self.tensor(self.value(p)) for p in node.args[0]]
        dtype = node.tensor.dtype
        ndim = len(parts[0].shape)
        axis = self._known(node.kwargs.get("axis", 0))
        if axis is None:
            raise Unlowerable(f"{_describe(node)} with axis=None (it flattens)")
        if node.target is np.stack:
            axis = axis % (ndim + 1)
            parts = [_expand(p, axis) for p in parts]
        else:
            axis = axis % max(ndim, 1)
        if any(len(p.shape) != len(parts[0].shape) for p in parts):
            raise Unlowerable(f"{_describe(node)} of arrays of different ranks")
        starts, start = [], 0
        for p in parts:
            starts.append(start)
            start += p.shape[axis]
        shape = parts[0].shape[:axis] + (start,) + parts[0].shape[axis + 1 :]
        if any(p.shape[:axis] + p.shape[axis + 1 :] != shape[:axis] + shape[axis + 1 :]
               for p in parts):  # fmt: skip
            raise Unlowerable(f"{_describe(node)} of parts that do not line up (NumPy raises)")

        pieces = [(p, b) for p, b in zip(parts, starts) if p.shape[axis] > 0]  # empty: nothing
        if not pieces:
            return _constant_tensor(0, dtype, shape)  # no elements at all

        def compute(index):
            position = index[axis]
            value = None
            for part, begin in reversed(pieces):
                size = part.shape[axis]
                local = _clamped(position, begin, size)
                load = _cast(part.load(index[:axis] + (local,) + index[axis + 1 :]), dtype)
                if value is None:
                    value = load
                else:
                    inside = _index_below(position, begin + size)
                    value = ir.Where(inside, load, value)
            return value

        return Pointwise(dtype, shape, compute)

    def _operands(self, args) -> tuple[list, tuple]:
        """Each operand as a tensor or a weak Python scalar, and the types NumPy resolves with."""
        operands, types = [], []
        for arg in args:
            value = self.value(arg)
            if isinstance(value, Known) and type(value.value) in (bool, int, float):
                operands.append(value.value)
                types.append(type(value.value))
                continue
            if isinstance(value, HostValue) and value.dtype is None:
                raise Unlowerable("a Python number computed per call (a dynamic float) in a kernel")
            tensor = self.tensor(value)
            operands.append(tensor)
            types.append(tensor.dtype)
        return operands, tuple(types)

    def _ufunc(self, node: Node, ufunc: np.ufunc):
        if set(node.kwargs) - {"out"}:
            raise Unlowerable(f"np.{ufunc.__name__} with {', '.join(node.kwargs)}=")
        operands, types = self._operands(node.args)
        in_dtypes, out_dtypes = ufuncs.ufunc_loop(ufunc, types)
        ufuncs.ufunc_expr(ufunc, in_dtypes, out_dtypes, [f"a{i}" for i in range(ufunc.nin)])
        shape = np.broadcast_shapes(*(o.shape for o in operands if isinstance(o, Tensor)))

        def compute(index, output=0):
            args = tuple(_operand_expr(o, index, d) for o, d in zip(operands, in_dtypes))
            return ir.Op(ufunc, args, in_dtypes, out_dtypes, output)

        results = [Pointwise(out_dtypes[i], shape, lambda index, i=i: compute(index, i))
                   for i in range(ufunc.nout)]  # fmt: skip
        if "out" in node.kwargs:
            outs = node.kwargs["out"]
            outs = outs if isinstance(outs, tuple) else (outs,)
            for target, result in zip(outs, results):
                self.store(self.values[target], result, node)
            return None
        _check_dtype(node, results[0] if ufunc.nout == 1 else None)
        return results[0] if ufunc.nout == 1 else tuple(results)

    def _where(self, node: Node):
        if len(node.args) != 3 or node.kwargs:
            raise Unlowerable("np.where with one argument (its shape depends on data)")
        (cond, a, b), types = self._operands(node.args)
        dtype = np.result_type(*types[1:])
        shape = np.broadcast_shapes(*(o.shape for o in (cond, a, b) if isinstance(o, Tensor)))

        def compute(index):
            c = _operand_expr(cond, index, np.dtype(bool))
            return ir.Where(c, _operand_expr(a, index, dtype), _operand_expr(b, index, dtype))

        result = Pointwise(dtype, shape, compute)
        _check_dtype(node, result)
        return result

    def _clip(self, node: Node):
        bounds = [node.kwargs[k] for k in ("a_min", "a_max") if k in node.kwargs]
        if len(node.args) + len(bounds) != 3 or set(node.kwargs) - {"a_min", "a_max"}:
            raise Unlowerable("np.clip with out=, min=/max= or one bound")
        operands, _ = self._operands((*node.args, *bounds))
        if any(isinstance(o, Known) or o is None for o in operands):
            raise Unlowerable("np.clip with a None bound")
        x, low, high = operands
        dtype = node.tensor.dtype
        shape = np.broadcast_shapes(*(o.shape for o in operands if isinstance(o, Tensor)))
        loop = (dtype, dtype)

        def compute(index):
            v = ir.Op(np.maximum, (_operand_expr(x, index, dtype), _operand_expr(low, index, dtype)),
                      loop, (dtype,))  # fmt: skip
            return ir.Op(np.minimum, (v, _operand_expr(high, index, dtype)), loop, (dtype,))

        return Pointwise(dtype, shape, compute)

    def _astype(self, node: Node):
        source = self.tensor(self.value(node.args[0]))
        dtype = np.dtype(self._known(node.args[1]) if len(node.args) > 1 else node.kwargs["dtype"])
        extra = set(node.kwargs) - {"dtype", "copy"}
        if extra or len(node.args) > 2:
            raise Unlowerable(f"astype with {', '.join(extra) or 'positional options'}")
        if node.kwargs.get("copy") is False and dtype == source.dtype:
            return source  # the array itself, as NumPy returns it
        pointwise.triton_type(dtype)
        return Pointwise(dtype, source.shape, lambda index: _cast(source.load(index), dtype))

    # -- reductions -------------------------------------------------------------------------
    def _reduction(self, node: Node):
        target = node.target
        kwargs = dict(node.kwargs)
        source = self.tensor(self.value(node.args[0]))
        if len(node.args) > 1:
            raise Unlowerable("reduction with positional options")
        name = getattr(target, "__name__", "")
        default_axis = None
        if isinstance(getattr(target, "__self__", None), np.ufunc):  # np.add.reduce(x, axis=0)
            name = _UFUNC_REDUCTIONS.get(target.__self__)
            if name is None:
                raise Unlowerable(f"np.{target.__self__.__name__}.reduce")
            default_axis = 0
        axis = self._known_kw(kwargs, "axis", default_axis)
        keepdims = bool(self._known_kw(kwargs, "keepdims", False))
        ddof = self._known_kw(kwargs, "ddof", 0)
        dtype_arg = self._known_kw(kwargs, "dtype", None)
        if kwargs:
            raise Unlowerable(f"np.{target.__name__} with {', '.join(kwargs)}=")
        ndim = len(source.shape)
        axes = tuple(range(ndim)) if axis is None else tuple(
            a % ndim for a in (axis if isinstance(axis, tuple) else (axis,)))  # fmt: skip
        if any(source.shape[a] == 0 for a in axes):
            raise Unlowerable("a reduction over an empty axis (NumPy decides what it gives)")
        result_dtype = node.tensor.dtype
        if name in ("argmax", "argmin"):
            if axis is not None and len(axes) != 1:
                raise Unlowerable("argmax over several axes")
            if axis is None:
                flat = self._flatten(source)
                return Reduction(name, flat, (0,), keepdims, np.dtype(np.intp))
            return Reduction(name, source, axes, keepdims, np.dtype(np.intp))
        if name in ("mean", "var", "std"):
            return self._moments(name, source, axes, keepdims, dtype_arg, ddof, result_dtype)
        if name not in ir.REDUCTIONS:
            raise Unlowerable(f"the reduction {name or target!r}")
        # float16 sums accumulate in float32, closer to NumPy's pairwise sum than a float16 one
        wide = name in ("sum", "prod") and result_dtype == np.float16
        acc = np.dtype(np.float32) if wide else result_dtype
        body = source if source.dtype == acc else _cast_tensor(source, acc)
        return _cast_tensor(Reduction(name, body, axes, keepdims, acc), result_dtype)

    def _known_kw(self, kwargs: dict, name: str, default):
        if name not in kwargs:
            return default
        return self._known(kwargs.pop(name))

    def _moments(self, name, source, axes, keepdims, dtype_arg, ddof, result_dtype):
        """mean, var and std as NumPy's ``_methods`` computes them: sums in the accumulation
        dtype, divided by the count; var subtracts the mean first (two passes)."""
        count = int(np.prod([source.shape[a] for a in axes]))
        if source.dtype.kind in "iub":
            acc = np.dtype(dtype_arg) if dtype_arg is not None else np.dtype(np.float64)
        elif source.dtype == np.float16 and dtype_arg is None:
            acc = np.dtype(np.float32)
        else:
            acc = np.dtype(dtype_arg) if dtype_arg is not None else source.dtype
        if acc.kind != "f":
            raise Unlowerable(f"np.{name} accumulating in {acc}")
        body = source if source.dtype == acc else _cast_tensor(source, acc)
        total = Reduction("sum", body, axes, True, acc)
        mean = _divide_by(total, count, acc)
        if name == "mean":
            return _cast_tensor(_squeeze(mean, axes, keepdims), result_dtype)
        if count - ddof <= 0:
            raise Unlowerable(f"np.{name} with ddof={ddof} over {count} values (NumPy warns)")
        centered = _binary(np.subtract, body, mean, acc)
        squares = _binary(np.multiply, centered, centered, acc)
        var = _divide_by(Reduction("sum", squares, axes, keepdims, acc), max(count - ddof, 0), acc)
        if name == "std":
            var = Pointwise(acc, var.shape, lambda index, v=var: ir.Op(np.sqrt, (v.load(index),),
                                                                        (acc,), (acc,)))  # fmt: skip
        return _cast_tensor(var, result_dtype)

    def _flatten(self, source: Tensor) -> Tensor:
        """``source.ravel()`` for a reduction over all of it (C order): a view where the
        layout allows one, else a copy."""
        n = int(np.prod(source.shape))
        layout = strided(source)
        if layout is not None:
            buffer, offset, strides = layout
            flat = _reshaped_strides(source.shape, strides, (n,))
            if flat is not None:
                return BufferTensor(buffer, (n,), flat, offset)
        realized = self.realize(source, "flat")
        return BufferTensor(realized.buffer, (n,), (1,), 0)

    # -- views -------------------------------------------------------------------------------
    def _view(self, node: Node):
        source = self.tensor(self.value(node.args[0]))
        target = node.target
        shape = tuple(node.tensor.shape) if node.tensor else None
        if node.op == "getitem":
            return _basic_index(source, self._known(node.args[1]))
        if target in (np.transpose,):
            axes = node.kwargs.get("axes", node.args[1] if len(node.args) > 1 else None)
            axes = self._known(axes) if axes is not None else None
            return _transpose(source, axes)
        if target is np.swapaxes:
            a1, a2 = (self._known(node.kwargs[k]) for k in ("axis1", "axis2"))
            perm = list(range(len(source.shape)))
            perm[a1], perm[a2] = perm[a2], perm[a1]
            return _transpose(source, tuple(perm))
        if target in (np.expand_dims, np.squeeze, np.reshape, np.ravel, np.broadcast_to,
                      np.moveaxis):  # fmt: skip
            if shape is None or any(not isinstance(d, int) for d in shape):
                raise Unlowerable("a view whose shape is only known at run time")
            if target is np.broadcast_to:
                return _broadcast_to(source, shape)
            return self._reshape(source, shape, node)
        if target in (np.real,) and source.dtype.kind != "c":
            return source
        raise Unlowerable(f"{_describe(node)} as a view")

    def _reshape(self, source: Tensor, shape: tuple[int, ...], node: Node) -> Tensor:
        """A view where NumPy makes one (the same elements in C order), else NumPy's copy."""
        if node.target is np.moveaxis:
            raise Unlowerable("np.moveaxis")
        if self._known(node.kwargs.get("order", "C")) != "C":
            raise Unlowerable(f"{_describe(node)} in another order than C")
        layout = strided(source)
        if layout is not None:
            buffer, offset, strides = layout
            new = _reshaped_strides(source.shape, strides, shape)
            if new is not None:
                return BufferTensor(buffer, shape, new, offset)
            if node.target is not np.ravel and node.kwargs.get("copy") is False:
                raise Unlowerable("reshape(copy=False) of a layout NumPy cannot view")
        flat = self.realize(source, "reshaped")  # a copy, as NumPy makes one
        return BufferTensor(flat.buffer, shape, contiguous_strides(shape), 0)

    # -- gathers and writes ------------------------------------------------------------------
    def _gather(self, node: Node):
        source = self._memory(self.tensor(self.value(node.args[0])))  # checked where it is read
        index = node.args[1] if isinstance(node.args[1], tuple) else (node.args[1],)
        arrays = [i for i, part in enumerate(index) if isinstance(part, Node)
                  and self.values[part] is not None and isinstance(self.value(part), Tensor)]  # fmt: skip
        if (
            len(arrays) != 1
            or arrays[0] != 0
            or any(not isinstance(p, slice) or p != slice(None) for p in index[1:])
        ):
            raise Unlowerable("integer-array indexing other than x[idx] or x[idx, :]")
        idx = self.tensor(self.value(index[0]))
        if idx.dtype.kind not in "iu":
            raise Unlowerable(f"indexing with a {idx.dtype} array")
        rest = source.shape[1:]
        shape = idx.shape + rest
        size = source.shape[0]
        self.plan.checks = True

        def compute(i):
            value = idx.load(i[: len(idx.shape)])
            if value.dtype != np.int64:
                value = ir.Cast(value, np.dtype(np.int64))
            return source.load((DataIndex(value, size), *i[len(idx.shape) :]))

        return Pointwise(source.dtype, shape, compute)

    def _setitem(self, node: Node):
        target, index, value = node.args
        region = _basic_index(self.tensor(self.values[target]), self._known(index))
        (source,), _ = self._operands((value,))
        dtype = region.dtype
        if not isinstance(source, Tensor):  # a Python number: converted now
            source = _constant_tensor(_assigned(source, dtype), dtype)
        elif _assigned_as_python(value, source.dtype, dtype):
            number = source
            source = Pointwise(dtype, number.shape,
                               lambda index: ir.Cast(number.load(index), dtype, checked=True))  # fmt: skip
        self.store(region, source, node)
        return None

    def _scatter_add(self, node: Node) -> None:
        """``np.add.at(a, idx, b)`` with one integer index array: one kernel over ``idx``'s
        elements (and ``a``'s other dims) whose atomic adds make repeated indices add up, as
        NumPy's unbuffered ``ufunc.at`` does (floats in another order: rounding may differ).
        Indices out of range raise, as NumPy's."""
        if len(node.args) != 3 or node.kwargs:
            raise Unlowerable("np.add.at with other than (a, indices, b)")
        target = self.tensor(self.value(node.args[0]))
        layout = strided(target)
        if layout is None or not target.shape:
            raise Unlowerable("np.add.at into a value that is not an array in memory")
        if target.dtype not in _ATOMIC_ADD_DTYPES:
            raise Unlowerable(f"np.add.at into {target.dtype} (atomic adds: "
                              f"{', '.join(map(str, _ATOMIC_ADD_DTYPES))})")  # fmt: skip
        indices = self.value(node.args[1])
        if not isinstance(indices, Tensor) or indices.dtype.kind not in "iu":
            raise Unlowerable("np.add.at with indices other than one integer array")
        (value,), _ = self._operands((node.args[2],))
        if not isinstance(value, Tensor):
            value = _constant_tensor(value, target.dtype)
        buffer, offset, strides = layout
        shape = indices.shape + target.shape[1:]
        try:
            broadcast = np.broadcast_shapes(value.shape, shape) == shape
        except ValueError:
            broadcast = False
        if not broadcast:
            raise Unlowerable("np.add.at's values do not broadcast to the indexed elements")
        # the adds must not read the memory they change (NumPy computed them before the call)
        indices, value = (self.realize(t, f"{node.name}_{what}") if buffer in _reads(t) else t
                          for t, what in ((indices, "indices"), (value, "values")))  # fmt: skip
        self.before_write(buffer)
        self.plan.checks = True
        xvars = tuple(ir.IterVar(ir.Param(s, "n")) for s in shape)
        index = tuple(Lin.of(v) for v in xvars)
        position = _cast(indices.load(index[: len(indices.shape)]), np.dtype(np.int64))
        rest = BufferTensor(buffer, target.shape[1:], strides[1:], offset)
        base = _store_affine(rest, index[len(indices.shape) :])
        where = ir.Gather(base, position, ir.Param(target.shape[0], "n"), ir.Param(strides[0], "s"))
        added = _cast(value.load(broadcast_index(index, value.shape)), target.dtype)
        store = ir.Store(buffer, where, added, accumulate=True)
        self._emit(ir.Kernel(self.fresh(f"k_{node.name}"), xvars, (), [store], lines=self._lines()))
        self._note_written(buffer)

    def store(self, target, value: Tensor, node: Node) -> None:
        """Write ``value`` (broadcast, cast as assignment casts) into ``target``'s memory,
        through a temporary when ``value`` reads that memory elsewhere (``u[1:] = u[:-1]``)."""
        layout = strided(target) if isinstance(target, Tensor) else None
        if layout is None:
            raise Unlowerable("writing into a value that is not in memory")
        buffer, offset, strides = layout
        target = BufferTensor(buffer, target.shape, strides, offset)
        try:
            np.broadcast_shapes(value.shape, target.shape)
        except ValueError:
            raise Unlowerable("assigned value does not broadcast") from None
        if np.broadcast_shapes(value.shape, target.shape) != target.shape:
            raise Unlowerable("assigned value does not broadcast to the target")
        self.before_write(target.buffer)
        kernel = self._store_kernel(target, value, node.name)
        if _reads_elsewhere(kernel, target.buffer):
            temp = self.realize(value, f"{node.name}_value")
            kernel = self._store_kernel(target, temp, node.name)
        self._emit(kernel)
        self._note_written(target.buffer)

    def _store_kernel(self, target: BufferTensor, value: Tensor, name: str) -> ir.Kernel:
        xvars = tuple(ir.IterVar(ir.Param(s, "n")) for s in target.shape)
        index = tuple(Lin.of(v) for v in xvars)
        expr = value.load(broadcast_index(index, value.shape))
        expr = _cast(expr, target.dtype)
        store = ir.Store(target.buffer, _store_affine(target, index), expr)
        return ir.Kernel(self.fresh(f"k_{name}"), xvars, (), [store], lines=self._lines())

    def _lines(self) -> tuple[str, ...]:
        """The user's lines of the nodes computed since the last kernel (its comments)."""
        lines = []
        for node in self.pending:
            where = node.stack[-1] if node.stack else None
            if where is not None:
                text = f"{where.filename.rsplit('/', 1)[-1]}:{where.lineno}  {where.source_line}"
                if text not in lines:
                    lines.append(text)
        self.pending = []
        return tuple(lines)

    def _note_written(self, buffer: ir.Buffer) -> None:
        for position, slot in enumerate(self.plan.inputs):
            if slot is buffer and position not in self.plan.written_inputs:
                self.plan.written_inputs.append(position)

    # -- realization -------------------------------------------------------------------------
    def realize(self, tensor: Tensor, hint: str, strides: tuple | None = None) -> BufferTensor:
        """``tensor`` computed into a new buffer: C-contiguous, or laid out with ``strides``
        (in elements)."""
        buffer = self.buffer(hint, tensor.dtype, tensor.shape)
        if strides is not None:
            buffer = ir.Buffer(buffer.name, buffer.dtype, buffer.shape, strides)
        target = BufferTensor.whole(buffer)
        self._emit(self._store_kernel(target, tensor, hint))
        return target

    def _emit(self, kernel: ir.Kernel) -> None:
        kernel.verify(formed=False)
        self.plan.steps.append(Launch(kernel))

    # -- the array library's kernels: matmul (BLAS), scans --------------------------------
    def _library(self, node: Node, kind: str) -> BufferTensor:
        """``node`` run by the device's array library (cuBLAS matmul, torch's scans) on the
        device buffers: floats for matmul (integer matmul is NumPy's), 1-D/2-D operands."""
        meta = node.tensor
        if meta is None or meta.kind != "array" or not all(isinstance(d, int) for d in meta.shape):
            raise Unlowerable(f"{_describe(node)} giving a {meta.text() if meta else 'value'}")
        if node.target in (np.matmul, np.dot):
            if node.kwargs or len(node.args) != 2:
                raise Unlowerable(f"np.{node.target.__name__} with options")
            operands = [self.tensor(self.value(a)) for a in node.args]
            if meta.dtype.kind != "f" or any(len(o.shape) not in (1, 2) for o in operands):
                raise Unlowerable(f"np.{node.target.__name__} of {meta.dtype} or of more than 2-D")
            call = LibraryCall("matmul", tuple(self._memory(o) for o in operands), {}, None)
        elif node.target in (np.cumsum, np.cumprod):
            axis = self._known(node.kwargs.get("axis"))
            if set(node.kwargs) - {"axis", "dtype"}:
                raise Unlowerable(f"np.{node.target.__name__} with out=")
            source = self.tensor(self.value(node.args[0]))
            if axis is None:
                source, axis = self._flatten(source), 0
            call = LibraryCall(node.target.__name__, (self._memory(source),),
                               {"dim": axis % max(len(source.shape), 1)}, None)  # fmt: skip
        else:
            raise Unlowerable(f"{_describe(node)} has no library call here")
        pointwise.triton_type(meta.dtype)
        result = self.buffer(node.name, meta.dtype, tuple(meta.shape))
        call.result = result
        self.plan.steps.append(call)
        return BufferTensor.whole(result)

    def _memory(self, tensor: Tensor) -> BufferTensor:
        """``tensor`` as a plain view of a buffer with non-negative strides (what a library
        call takes), computed into one if it is not."""
        layout = strided(tensor)
        if layout is not None and all(s >= 0 for s in layout[2]):
            buffer, offset, strides = layout
            return BufferTensor(buffer, tensor.shape, strides, offset)
        return self.realize(tensor, "operand")

    # -- externs -----------------------------------------------------------------------------
    def _extern(self, node: Node, reason: str):
        """``node`` run by NumPy on the host: its arguments realized, its results uploaded."""
        args = tuple(self._extern_arg(a, host=True) for a in node.args)
        kwargs = {k: self._extern_arg(v, host=True) for k, v in node.kwargs.items()}
        writes = self._host_writes(node)
        results = _extern_results(self, node)
        step = Extern(node, args, kwargs, results, writes, reason)
        self.plan.steps.append(step)
        self.plan.externs.append(step)
        return results[0] if node.has_value and results else None

    def _host_writes(self, node: Node) -> tuple[ir.Buffer, ...]:
        """The buffers a step run outside the kernels (an extern, a loop) writes in place; the
        pending values that read them are computed first."""
        writes = tuple(
            self.values[n].buffer
            for n in _written_args(node)
            if isinstance(self.values.get(n), BufferTensor)
        )
        for buffer in writes:
            self.before_write(buffer)
            self._note_written(buffer)
        return writes

    def _loop(self, node: Node) -> tuple:
        """A loop node: one `DeviceLoop` step; its arrays stay on the device between
        iterations. A body making values kernels cannot hold runs as an extern instead."""
        _check_loop_identity(node, lambda arg: self.last_use.get(arg, -1) > self.position)
        for start, end in zip(node.target.carried_inputs(), node.target.returned()):
            shape = start.tensor.shape if start.tensor is not None else ()
            if all(isinstance(d, int) for d in shape) and \
                    _traced_order(end.tensor, shape) not in (None, _traced_order(start.tensor, shape)):  # fmt: skip
                # the layout of what follows from it is only known once the loop ran
                raise WholeGraphInNumPy(f"the loop's {start.name} changes its memory order in "
                                        "an iteration: NumPy lays it out after the count")  # fmt: skip
        results = []
        for made in node.target.returned():
            meta = made.tensor
            if meta is None and made.meta in ("int", "float", "bool"):
                results.append(HostValue(self.fresh(made.name)))  # a counter (``sweeps += 1``)
                continue
            if meta is None or not all(isinstance(d, int) for d in meta.shape or ()):
                raise Unlowerable(f"the loop's body makes {made.meta} (not a sized array)")
            if meta.kind == "array" and _triton_dtype(meta.dtype):
                results.append(BufferTensor.whole(self.buffer(made.name, meta.dtype, meta.shape)))
            elif meta.kind == "scalar" and _triton_dtype(meta.dtype):
                results.append(HostValue(self.fresh(made.name), meta.dtype))
            else:
                raise Unlowerable(f"the loop's body makes {made.meta}")
        args = tuple(self._extern_arg(a) for a in node.args)
        writes = self._host_writes(node)
        self.plan.steps.append(DeviceLoop(node, args, tuple(results), writes))
        return tuple(results)

    def _extern_arg(self, arg, host: bool = False):
        """``arg`` as a step outside the kernels takes it: tensors in memory; for NumPy on the
        host (``host``), in NumPy's memory of them (`_in_memory`), and a value the trace saw
        as a NumPy scalar as one (`NumpyScalar`)."""

        def leaf(item):
            if not isinstance(item, Node):
                return Known(item)
            value = self.values[item]
            if isinstance(value, Tensor) and strided(value) is None:
                # a loop's body takes device views, which have no negative strides
                value = self._in_memory(item) if host else self.realize(value, item.name)
            scalar = host and item.tensor is not None and item.tensor.kind == "scalar"
            return NumpyScalar(value) if scalar and isinstance(value, Tensor) else value

        return map_leaves(arg, leaf)

    # -- outputs -----------------------------------------------------------------------------
    def _outputs(self, node: Node) -> None:
        inputs = list(self.graph.inputs)
        for arg in node.args[0]:
            value = self.values[arg]
            scalar = bool(arg.tensor and arg.tensor.kind == "scalar")
            if arg in inputs:
                self.plan.outputs.append(Output(inputs.index(arg)))
            elif isinstance(value, (Known, HostValue)):
                self.plan.outputs.append(Output(value, scalar))
            elif isinstance(value, Tensor):
                self.plan.outputs.append(self._tensor_output(value, scalar, arg))
            else:
                raise Unlowerable(f"output {arg.name} is {type(value).__name__}")

    def _tensor_output(self, value: Tensor, scalar: bool, node: Node) -> Output:
        layout = strided(value)
        if layout is not None and layout[0] in self.plan.inputs:
            # a view of the caller's array: the same memory
            buffer, offset, strides = layout
            position = self.plan.inputs.index(buffer)
            if not self.device_inputs[position]:  # NumPy makes it from the caller's array
                return Output(position, scalar, replay=node)
            if all(s >= 0 for s in strides):  # a view of the device array's own memory
                return Output(position, scalar, (offset, strides, value.shape))
            # torch has no negative strides: the view's values, in an array of its own
        base = _viewed(node)
        if (
            base is not None
            and isinstance(self.values[base], Tensor)
            and not scalar
            and not any(self.device_inputs)
        ):
            # a view of a value computed here (``(x * 2).T``, ``np.broadcast_to(x + 1, s)``):
            # that value in memory, and the view NumPy makes of it, with NumPy's strides and
            # flags (broadcast_to's is read-only), a copy where NumPy copies (a reshape)
            return Output(self._whole(base).buffer, replay=node, base=base)
        if layout is not None:
            buffer, offset, strides = layout
            if is_whole(buffer, offset, strides, value.shape) and not scalar:
                return Output(buffer, scalar)
            if not scalar and all(s >= 0 for s in strides):
                return Output(buffer, scalar, (offset, strides, value.shape))
        return Output(self._whole(node).buffer, scalar)

    def _in_memory(self, node: Node) -> Tensor:
        """``node``'s value in memory as NumPy has it: a view NumPy makes of a value computed
        here is a view of that value in memory (``np.sort((x * 2).T)`` sorts a Fortran-ordered
        array); another value is computed into memory laid out as NumPy lays it out."""
        value = self.values[node]
        if strided(value) is not None:
            return value
        if _is_view(node) and isinstance(self.values[node.args[0]], Tensor):
            self._in_memory(node.args[0])
            value = self.values[node] = self._view(node)  # lowered again, over that memory
            if strided(value) is not None:
                return value
        return self._whole(node)

    def _whole(self, node: Node) -> BufferTensor:
        """``node``'s value in a buffer of its own, laid out as NumPy lays it out."""
        value = self.values[node]
        if isinstance(value, BufferTensor) and is_whole(value.buffer, value.offset,
                                                        value.strides, value.shape):  # fmt: skip
            return value
        realized = self.values[node] = self.realize(value, node.name, _numpy_layout(node, value))
        return realized


# -- helpers ------------------------------------------------------------------------------------


def written_nodes(graph: Graph) -> set[Node]:
    """Nodes whose memory the graph writes, directly or through views of them."""
    written: set[Node] = set()
    for node in graph.nodes:
        for arg in _written_args(node):
            written.add(arg)
    changed = True
    while changed:  # a write through a view writes its base
        changed = False
        for node in graph.nodes:
            if (
                node in written
                and node.op in ("getitem", "call", *LOOP_OPS)  # a loop may give back its arguments
                and node.args
                and isinstance(node.args[0], Node)
                and not numpy_table.returns_new_memory(node.op, node.target)
            ):
                if node.args[0] not in written:
                    written.add(node.args[0])
                    changed = True
    return written


def _viewed(node: Node) -> Node | None:
    """The value a chain of views starts from, where NumPy makes ``node`` as a view (basic
    indexing, transposes, reshapes, broadcast_to: what `_Lowering._view` lowers), else None:
    ``(x * 2)[::2].T`` views ``x * 2``."""
    if not _is_view(node):
        return None
    while _is_view(node):
        node = node.args[0]
    return node


def _is_view(node) -> bool:
    return (
        isinstance(node, Node)
        and node.op in ("getitem", "call")
        and bool(node.args)
        and isinstance(node.args[0], Node)
        and lowering_kinds.lowering_kind(node.op, node.target, node.args) == lowering_kinds.VIEW
    )


def _written_args(node: Node) -> list[Node]:
    if node.op in ("setitem", "inplace"):
        return [node.args[0]] if isinstance(node.args[0], Node) else []
    if node.mutates:
        out = node.kwargs.get("out")
        if out is not None:
            return [o for o in (out if isinstance(out, tuple) else (out,)) if isinstance(o, Node)]
        return [n for n in nodes_in(node.args)]
    return []


def _check_loop_identity(node: Node, used_later) -> None:
    """A loop node's results are new device buffers. Where NumPy's would be arrays that exist
    already (a body giving back its inputs themselves or views of them, a while loop whose zero
    iterations give back an input or a value used later), the graph runs in NumPy as a whole:
    identity and aliasing follow from the run, not from the plan."""
    loop = node.target
    if any(_memory_of_input(made) for made in loop.returned()):
        raise WholeGraphInNumPy("a loop's body gives back its inputs (or views of them)")
    if isinstance(loop, WhileLoop):
        for arg in node.args[1 : 1 + loop.carried]:
            if isinstance(arg, Node) and (
                arg.op == "input" or (arg.tensor and arg.tensor.view_of) or used_later(arg)
            ):
                raise WholeGraphInNumPy(
                    f"with no iteration a while loop gives back {arg.name} itself, which the "
                    "caller or the code after the loop holds"
                )


def _memory_of_input(node: Node) -> bool:
    """Whether ``node``'s value is an input's memory: the input, a view of it, or what an
    operation writing into it (``out=``, ``+=``) returns. A number is no memory (a counter's
    ``sweeps += 1`` makes a new int)."""
    if node.tensor is None or node.tensor.kind != "array":
        return False
    while node.op != "input":
        out = node.kwargs.get("out")
        if isinstance(out, tuple) and len(out) == 1:
            out = out[0]
        if isinstance(out, Node):
            node = out
        elif node.op == "inplace" or (
            node.op in ("getitem", "call", "method", *LOOP_OPS)
            and node.args
            and isinstance(node.args[0], Node)
            and not numpy_table.returns_new_memory(node.op, node.target)
        ):
            node = node.args[0]
        else:
            return False
    return True


def _extern_results(lowering: _Lowering, node: Node) -> tuple:
    meta = node.tensor
    if not node.has_value:
        return ()
    if meta is None:  # a Python value (a loop's float counter taken from its tuple)
        return (HostValue(lowering.fresh(node.name)),)
    if (
        meta.kind == "array"
        and _triton_dtype(meta.dtype)
        and all(isinstance(d, int) for d in meta.shape)
    ):
        buffer = lowering.buffer(node.name, meta.dtype, tuple(meta.shape))
        return (BufferTensor.whole(buffer),)
    return (HostValue(lowering.fresh(node.name), meta.dtype if meta.kind == "scalar" else None),)


def _is_tuple_result(node: Node) -> bool:
    return (
        node.tensor is not None
        and node.tensor.kind == "python"
        and node.tensor.type_name in ("tuple", "list")
    )


def _operand_expr(operand, index, dtype: np.dtype) -> ir.Expr:
    if isinstance(operand, Tensor):
        return _cast(operand.load(broadcast_index(index, operand.shape)), dtype)
    return ir.Constant(operand, np.dtype(dtype))


def map_leaves(value, leaf):
    """``value`` with ``leaf`` applied to everything inside its tuples, lists, dicts and slices."""
    if isinstance(value, (tuple, list)):
        return type(value)(map_leaves(v, leaf) for v in value)
    if isinstance(value, dict):
        return {k: map_leaves(v, leaf) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(*(map_leaves(p, leaf) for p in (value.start, value.stop, value.step)))
    return leaf(value)


_INT64 = np.dtype(np.int64)


def _clamped(position: Lin, begin: int, size: int) -> DataIndex:
    """``position - begin`` held inside ``[0, size)``: where a part of a join is loaded (its
    value is used only where the position is inside the part)."""
    local = index_value(position.plus(-begin))
    low = ir.Op(np.maximum, (local, ir.Constant(0, _INT64)), (_INT64, _INT64), (_INT64,))
    clamped = ir.Op(np.minimum, (low, ir.Constant(size - 1, _INT64)), (_INT64, _INT64), (_INT64,))
    return DataIndex(clamped, size, checked=False)


def _index_below(position: Lin, limit: int) -> ir.Expr:
    return ir.Op(np.less, (index_value(position), ir.Constant(limit, _INT64)), (_INT64, _INT64),
                 (np.dtype(bool),))  # fmt: skip


def _expand(tensor: Tensor, axis: int) -> Tensor:
    """``np.expand_dims(tensor, axis)`` as a view."""
    shape = tensor.shape[:axis] + (1,) + tensor.shape[axis:]
    return View(tensor, shape, lambda index: index[:axis] + index[axis + 1 :])


def _cast(expr: ir.Expr, dtype: np.dtype) -> ir.Expr:
    return expr if expr.dtype == dtype else ir.Cast(expr, np.dtype(dtype))


def _cast_tensor(tensor: Tensor, dtype: np.dtype) -> Tensor:
    if tensor.dtype == dtype:
        return tensor
    return Pointwise(np.dtype(dtype), tensor.shape, lambda index: _cast(tensor.load(index), dtype))


def _binary(ufunc, a: Tensor, b: Tensor, dtype: np.dtype) -> Tensor:
    shape = np.broadcast_shapes(a.shape, b.shape)
    loop = (dtype, dtype)
    return Pointwise(dtype, shape, lambda index: ir.Op(
        ufunc, (_operand_expr(a, index, dtype), _operand_expr(b, index, dtype)), loop, (dtype,)))  # fmt: skip


def _divide_by(tensor: Tensor, count: int, dtype: np.dtype) -> Tensor:
    divisor = ir.Constant(count, dtype)
    loop = (dtype, dtype)
    return Pointwise(dtype, tensor.shape,
                     lambda index: ir.Op(np.true_divide, (tensor.load(index), divisor), loop, (dtype,)))  # fmt: skip


def _squeeze(tensor: Tensor, axes: tuple[int, ...], keepdims: bool) -> Tensor:
    if keepdims:
        return tensor
    shape = tuple(s for i, s in enumerate(tensor.shape) if i not in axes)

    def remap(index):
        it = iter(index)
        return tuple(Lin() if i in axes else next(it) for i in range(len(tensor.shape)))

    return View(tensor, shape, remap)


def _constant_tensor(value, dtype: np.dtype, shape: tuple[int, ...] = ()) -> Tensor:
    constant = ir.Constant(value, np.dtype(dtype))
    return Pointwise(np.dtype(dtype), shape, lambda index: constant)


def _assigned(number, dtype: np.dtype):
    """A Python number as assigning it to an item of a ``dtype`` array stores it (1.5 into
    int64 is 1); where NumPy raises or warns doing so, the node runs in NumPy."""
    item = np.empty((), dtype)
    try:
        with np.errstate(all="raise"):
            item[()] = number
    except (ArithmeticError, ValueError) as why:
        raise Unlowerable(f"{number!r} assigned into {dtype} ({why})") from None
    return item[()]


def _assigned_as_python(value, source: np.dtype, target: np.dtype) -> bool:
    """Whether assigning ``value`` to items of a ``target`` array converts it as a Python
    number, raising for some values: a NumPy scalar (not an array, which casts silently) into
    signed integers that cannot hold every value of its type (an unsigned target wraps)."""
    return (
        isinstance(value, Node)
        and value.tensor is not None
        and value.tensor.kind == "scalar"
        and target.kind == "i"
        and not np.can_cast(source, target)
    )


def _numpy_layout(node: Node, value: Tensor) -> tuple | None:
    """The strides (in elements) of the array NumPy made for ``node`` when the trace saw it:
    a result keeps NumPy's memory order (``x.T + 1`` is Fortran-ordered), if it is dense; with
    sizes known only at run time, dense in the order the trace saw, for these sizes."""
    meta = node.tensor
    if meta is None or meta.kind != "array" or len(meta.shape) != len(value.shape):
        return None
    itemsize = meta.dtype.itemsize
    if meta.strides is not None:
        if meta.shape != value.shape or memory_order(meta.shape, meta.strides, itemsize) is None:
            return None
        return tuple(max(s, 0) // itemsize for s in meta.strides)
    if meta.order is None:
        return None
    strides, step = [0] * len(value.shape), 1
    for d in meta.order:
        strides[d] = step
        step *= max(value.shape[d], 1)
    return tuple(strides)


def _reads(tensor: Tensor) -> set:
    """The buffers ``tensor``'s elements are computed from."""
    probe = tuple(Lin.of(ir.IterVar(ir.Param(max(s, 1), "n"))) for s in tensor.shape)
    return {n.buffer for n in ir.walk(tensor.load(probe)) if isinstance(n, ir.Load)}


# What Triton's atomic add takes (narrower ints and bools have none).
_ATOMIC_ADD_DTYPES = tuple(map(np.dtype, (np.float64, np.float32, np.int64, np.int32)))

# ``ufunc.reduce`` as the reduction it computes.
_UFUNC_REDUCTIONS = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
                     np.logical_or: "any", np.logical_and: "all"}  # fmt: skip


def _is_creation(target) -> bool:
    try:
        return target in _CREATIONS
    except TypeError:  # an unhashable callable
        return False


# Array creation: the fill value of each (None: np.full's own argument).
_CREATIONS = {np.zeros: 0, np.ones: 1, np.empty: 0, np.zeros_like: 0, np.ones_like: 1,
              np.empty_like: 0, np.full: None, np.full_like: None}  # fmt: skip
# Python results a plan may compute once: they cannot change.
_IMMUTABLE = frozenset({"int", "float", "bool", "complex", "str", "tuple", "NoneType", "dtype",
                        "slice", "bytes", "frozenset", "ellipsis", "type"})  # fmt: skip


def _transpose(source: Tensor, axes) -> Tensor:
    ndim = len(source.shape)
    axes = tuple(reversed(range(ndim))) if axes is None else tuple(a % ndim for a in axes)
    shape = tuple(source.shape[a] for a in axes)

    def remap(index):
        out = [None] * ndim
        for position, axis in enumerate(axes):
            out[axis] = index[position]
        return tuple(out)

    return View(source, shape, remap)


def _broadcast_to(source: Tensor, shape: tuple[int, ...]) -> Tensor:
    return View(source, shape, lambda index: broadcast_index(index, source.shape))


def _basic_index(source: Tensor, index) -> Tensor:
    """``source[index]`` for ints, slices, None and Ellipsis: a view."""
    index = index if isinstance(index, tuple) else (index,)
    if any(isinstance(i, (np.ndarray, list, bool, np.bool_)) for i in index):
        raise Unlowerable("advanced indexing with a constant array")
    explicit = sum(1 for i in index if i is not None and i is not Ellipsis)
    if Ellipsis in index:
        at = index.index(Ellipsis)
        index = index[:at] + (slice(None),) * (len(source.shape) - explicit) + index[at + 1 :]
    index = index + (slice(None),) * (len(source.shape) - sum(1 for i in index if i is not None))
    plan = []  # per source dim: ("int", i) or ("slice", start, step); plus ("new",) for None
    shape = []
    dim = 0
    for part in index:
        if part is None:
            plan.append(("new",))
            shape.append(1)
            continue
        size = source.shape[dim]
        if isinstance(part, slice):
            start, stop, step = part.indices(size)
            plan.append(("slice", start, step))
            shape.append(len(range(start, stop, step)))
        else:
            i = operator.index(part)
            if not -size <= i < size:
                raise Unlowerable("an index out of range (NumPy raises IndexError)")
            plan.append(("int", i % size))
        dim += 1

    def remap(out_index):
        it = iter(out_index)
        result = []
        for entry in plan:
            if entry[0] == "new":
                next(it)
            elif entry[0] == "int":
                result.append(Lin(entry[1]))
            else:
                result.append(next(it).scaled(entry[2]).plus(entry[1]))
        return tuple(result)

    return View(source, tuple(shape), remap)


def _reshaped_strides(shape, strides, new_shape):
    """Strides viewing an array of ``shape``/``strides`` as ``new_shape`` in C order, as
    NumPy's ``_attempt_nocopy_reshape`` finds them, or None when a copy is needed."""
    old = [(s, st) for s, st in zip(shape, strides) if s != 1]
    new = [s for s in new_shape]
    if int(np.prod(shape)) != int(np.prod(new_shape)):
        return None
    if int(np.prod(shape)) == 0:
        return contiguous_strides(new_shape)
    result = [0] * len(new)
    oi, ni = 0, 0
    while oi < len(old) and ni < len(new):
        np_, op_ = new[ni], old[oi][0]
        nj, oj = ni + 1, oi + 1
        while np_ != op_:
            if np_ < op_:
                np_ *= new[nj]
                nj += 1
            else:
                op_ *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):  # the merged old dims must be contiguous among themselves
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        result[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            result[k - 1] = result[k] * new[k]
        ni, oi = nj, oj
    for k in range(ni, len(new)):  # trailing size-1 dims
        result[k] = 1
    return tuple(result)


def _store_affine(target: BufferTensor, index) -> ir.Affine:
    load = target.load(index)
    return load.index


def _reads_elsewhere(kernel: ir.Kernel, buffer: ir.Buffer) -> bool:
    """Whether the kernel reads ``buffer`` at another element than the one it stores there."""
    (store,) = kernel.stores
    want = _affine_key(store.index)
    for node in ir.walk(store.value):
        if isinstance(node, ir.Load) and node.buffer is buffer:
            if isinstance(node.index, ir.Gather) or _affine_key(node.index) != want:
                return True
    return False


def _affine_key(affine: ir.Affine):
    return (affine.offset.value if affine.offset else 0,
            tuple(sorted((v.id, p.value) for v, p in affine.terms)))  # fmt: skip


def _triton_dtype(dtype) -> bool:
    try:
        pointwise.triton_type(dtype)
    except Unlowerable:
        return False
    return True


def _check_dtype(node: Node, result) -> None:
    """The lowering's dtype is the one the trace saw, or the node runs in NumPy."""
    if result is None or node.tensor is None or node.tensor.kind == "python":
        return
    if result.dtype != node.tensor.dtype:
        raise Unlowerable(f"lowered to {result.dtype} where NumPy gave {node.tensor.dtype}")


def _has_tensor(value) -> bool:
    if isinstance(value, Tensor):
        return True
    if isinstance(value, (tuple, list)):
        return any(_has_tensor(v) for v in value)
    return isinstance(value, HostValue) and value.dtype is not None


def _is_known(value) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_is_known(v) for v in value)
    if isinstance(value, slice):
        return _is_known((value.start, value.stop, value.step))
    return isinstance(value, Known)


def _unwrap(value):
    if isinstance(value, (tuple, list)):
        return type(value)(_unwrap(v) for v in value)
    if isinstance(value, slice):
        return slice(*_unwrap((value.start, value.stop, value.step)))
    return value.value


def _text(arg) -> str:
    return getattr(arg, "name", repr(arg))


def _describe(node: Node) -> str:
    if node.op in ("getitem", "setitem"):
        return f"{node.op} {node.name}"
    return getattr(node.target, "__name__", str(node.target))
