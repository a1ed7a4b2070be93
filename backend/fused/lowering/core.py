"""The walk: `GraphLowering` gives each node a value through its rule (`registry`), keeps the
plan's steps, and realizes tensors into buffers where memory must exist."""

from __future__ import annotations

import numpy as np

from tcompile.tracer.ir import numpy_table
from tcompile.tracer.ir.graph import Graph
from tcompile.tracer.ir.node import Node, nodes_in, user_lines

from .. import loop_ir as ir
from ..dtypes import Unlowerable
from ..plan import HostValue, InputMeta, Known, Launch, Plan, Upload, WholeGraphInNumPy
from ..tensors import (
    BufferTensor,
    Lin,
    Pointwise,
    Tensor,
    broadcast_index,
    contiguous_strides,
    strided,
)
from . import compaction, externs, host, outputs, registry, selections
from .shared import (
    cast,
    dims_in_memory,
    is_known,
    reads,
    store_affine,
    traced_order,
    unwrap,
    written_nodes,
)


def lower(graph: Graph, inputs: list[InputMeta], target) -> Plan:
    """The plan for ``graph`` on inputs like ``inputs``, for ``target``'s kernels (a
    `target.Target`: which dtypes and ops they compute); kernels not yet fused (see
    `fusion`)."""
    _check_input_orders(graph, inputs)
    return GraphLowering(graph, inputs, target).run()


def _check_input_orders(graph: Graph, inputs: list[InputMeta]) -> None:
    """NumPy lays a result out after its inputs (``x.T + 1`` of a C-ordered ``x`` is
    Fortran-ordered); a plan lays results out as the trace saw them. A NumPy input whose dims
    are in another order in memory than the traced example's runs the graph in NumPy, which
    decides."""
    for node, meta in zip(graph.inputs, inputs):
        traced = node.tensor
        if meta.kind != "array" or meta.device_array or not meta.strides:
            continue
        was = traced_order(traced, meta.shape)
        if was is not None and dims_in_memory(meta.shape, meta.strides) != was:
            raise WholeGraphInNumPy(f"input {node.name} is laid out in another order than the "
                                    "traced one, and NumPy lays the results out after it")  # fmt: skip


def _may_view(node: Node) -> bool:
    """Whether ``node`` may give back an array argument or a view of one (``np.flip(x)``,
    ``np.asarray(x)``)."""
    return not numpy_table.returns_new_memory(node.op, node.target) and any(
        isinstance(a, Node) and a.tensor is not None and a.tensor.kind == "array"
        for a in nodes_in((node.args, node.kwargs))
    )


class GraphLowering:
    """One graph's lowering: each node's value, and the plan the walk makes."""

    def __init__(self, graph: Graph, inputs: list[InputMeta], target):
        self.graph = graph
        self.target = target
        self.values: dict[Node, object] = {}
        self.plan = Plan([], [], [])
        self.names: dict[str, int] = {}
        self.written = written_nodes(graph)
        self.planned = selections.planned(graph, target)  # x[m].sum(): masked reductions
        self.selected: dict[Node, selections.Selection] = {}  # the lazy ones' selections
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
        self.target.check_dtype(dtype)  # Unlowerable for complex and friends
        return ir.Buffer(self.fresh(hint), np.dtype(dtype), tuple(shape), contiguous_strides(shape))

    # -- inputs ------------------------------------------------------------------------------
    def _input(self, node: Node, meta: InputMeta):
        if meta.kind == "array":
            if not self.target.holds(meta.dtype):
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
                outputs.lower_outputs(self, node)
                break
            self.position = position
            self.pending.append(node)
            try:
                self.values[node] = self.lower_node(node)
            except Unlowerable as why:
                if node in self.written and _may_view(node):
                    # the extern's result is a copy of NumPy's view: writes would miss the array
                    raise WholeGraphInNumPy(f"{node.name} is written later and may be a view "
                                            f"NumPy makes of an array outside the kernels "
                                            f"({why})") from None  # fmt: skip
                self.values[node] = externs.extern(self, node, str(why))
            value = self.values[node]
            if node in self.written and isinstance(value, HostValue) and value.shape is not None:
                value = self.values[node] = self._uploaded(value)
            if node in self.written and isinstance(value, Tensor) and strided(value) is None:
                # a computed value written later (directly or through a view): its memory
                # must exist now, so that views made of it see the write
                self.values[node] = self.realize(value, node.name)
        return self.plan

    def lower_node(self, node: Node):
        """``node``'s value by its rule (`Unlowerable` where it has none)."""
        if node.errstate and any(v in ("raise", "call") for _, v in node.errstate):
            raise Unlowerable("traced under np.errstate(...='raise'): NumPy must see the error")
        if node.sized_by_data:
            if node in self.planned.lazy:
                selection = self.selected[node] = selections.select(self, node)
                if node in self.planned.compacted:
                    return compaction.compact(self, node, selection)
                return selection
            found = compaction.positions(self, node) if self.target.compacts else None
            if found is not None:
                return found
            if node.op == "getitem" and isinstance(self.values.get(node.args[0]), tuple):
                return host.rule_on_host_values(self, node)(self, node)  # np.nonzero(m)[0]
            raise Unlowerable("its size follows array values (a plan fixes its buffers' sizes)")
        rule = registry.find(node)
        reads_selection = any(a in self.selected for a in node.args if isinstance(a, Node))
        if (rule is None or not rule.host_args) and not reads_selection:
            rule = host.rule_on_host_values(self, node) or rule
        if rule is None:
            raise registry.not_lowered(node)
        return rule(self, node)

    def before_write(self, buffer: ir.Buffer) -> None:
        """Compute now every pending value that reads ``buffer`` and is used later: eager code
        computed it before this write (``s = b.sum(); b *= 2``)."""
        for node, value in list(self.values.items()):
            if self.last_use.get(node, -1) <= self.position:
                continue
            if isinstance(value, Tensor) and strided(value) is None and buffer in reads(value):
                self.values[node] = self.realize(value, node.name)
            elif isinstance(value, tuple) and any(
                isinstance(v, Tensor) and buffer in reads(v) for v in value
            ):
                self.values[node] = tuple(
                    self.realize(v, f"{node.name}_{i}") if isinstance(v, Tensor) else v
                    for i, v in enumerate(value)
                )

    # -- values --------------------------------------------------------------------------------
    def value(self, arg):
        """A graph argument as a lowering value: nodes' values, constants as `Known`."""
        if isinstance(arg, Node):
            return self.values[arg]
        if isinstance(arg, (tuple, list)):
            return type(arg)(self.value(a) for a in arg)
        if isinstance(arg, slice):
            return slice(*(self.value(p) for p in (arg.start, arg.stop, arg.step)))
        return Known(arg)

    def known(self, arg):
        """A graph argument's Python value, known when the plan is made."""
        value = self.value(arg)
        if is_known(value):
            return unwrap(value)
        raise Unlowerable(f"{getattr(arg, 'name', repr(arg))} is only known at run time")

    def known_kw(self, kwargs: dict, name: str, default):
        """``kwargs.pop(name)``'s known value, or ``default``."""
        if name not in kwargs:
            return default
        return self.known(kwargs.pop(name))

    def tensor(self, value) -> Tensor:
        """A value as a tensor: NumPy scalars and arrays made on the host are uploaded."""
        if isinstance(value, Tensor):
            return value
        if (
            isinstance(value, HostValue)
            and value.dtype is not None
            and self.target.holds(value.dtype)
        ):
            if not all(isinstance(d, int) for d in value.shape or ()):
                raise Unlowerable(f"{value.name}'s size follows array values (known only at "
                                  "run time)")  # fmt: skip
            buffer = self.buffer(value.name, value.dtype, value.shape or ())
            self.plan.steps.append(Upload(value, buffer))
            return BufferTensor.whole(buffer)
        if isinstance(value, Known) and isinstance(value.value, np.generic):
            dtype = value.value.dtype
            constant = ir.Constant(value.value, dtype)
            return Pointwise(dtype, (), lambda index: constant)
        if isinstance(value, HostValue):
            raise Unlowerable(f"{value.name} is computed on the host (as NumPy makes it: its "
                              "size follows array values, or its kind is no kernel's)")  # fmt: skip
        raise Unlowerable(f"{value} is not an array a kernel can read")

    def operands(self, args) -> tuple[list, tuple]:
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

    def _uploaded(self, value: HostValue):
        """An array made on the host that the graph writes: in one buffer from now on."""
        try:
            return self.tensor(value)
        except Unlowerable:
            return value  # its writes run in NumPy too

    # -- memory ------------------------------------------------------------------------------
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
        self.emit(kernel)
        self.note_written(target.buffer)

    def _store_kernel(self, target: BufferTensor, value: Tensor, name: str) -> ir.Kernel:
        xvars = tuple(ir.IterVar(ir.Param(s, "n")) for s in target.shape)
        index = tuple(Lin.of(v) for v in xvars)
        expr = value.load(broadcast_index(index, value.shape))
        expr = cast(expr, target.dtype)
        store = ir.Store(target.buffer, store_affine(target, index), expr)
        return ir.Kernel(self.fresh(f"k_{name}"), xvars, (), [store], lines=self.lines())

    def lines(self) -> tuple[str, ...]:
        """The user's lines of the nodes computed since the last kernel (its comments)."""
        lines = user_lines(self.pending)
        self.pending = []
        return lines

    def note_written(self, buffer: ir.Buffer) -> None:
        for position, slot in enumerate(self.plan.inputs):
            if slot is buffer and position not in self.plan.written_inputs:
                self.plan.written_inputs.append(position)

    def realize(self, tensor: Tensor, hint: str, strides: tuple | None = None) -> BufferTensor:
        """``tensor`` computed into a new buffer: C-contiguous, or laid out with ``strides``
        (in elements)."""
        buffer = self.buffer(hint, tensor.dtype, tensor.shape)
        if strides is not None:
            buffer = ir.Buffer(buffer.name, buffer.dtype, buffer.shape, strides)
        target = BufferTensor.whole(buffer)
        self.emit(self._store_kernel(target, tensor, hint))
        return target

    def emit(self, kernel: ir.Kernel) -> None:
        kernel.verify(formed=False)
        self.plan.steps.append(Launch(kernel))

    def memory(self, tensor: Tensor) -> BufferTensor:
        """``tensor`` as a plain view of a buffer with non-negative strides (what a library
        call takes), computed into one if it is not."""
        layout = strided(tensor)
        if layout is not None and all(s >= 0 for s in layout[2]):
            buffer, offset, strides = layout
            return BufferTensor(buffer, tensor.shape, strides, offset)
        return self.realize(tensor, "operand")


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
