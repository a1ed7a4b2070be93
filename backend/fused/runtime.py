"""Running plans: the compiled graph a backend call returns.

Per call: the inputs become the target's device tensors (`target.Device`), the plan for their
shapes and layouts is found (made on first sight: lower, fuse, and compile each kernel with
``target.compile``), its steps run, written inputs are copied back, and outputs come back as
NumPy (or stay device arrays). A kernel that raised the error flag (an index out of range, an
integer to a negative power) makes the call raise `GraphRuntimeError`; the glue then runs the
frame eagerly, so the user sees NumPy's own error.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from tcompile.tracer.ir.compiled_graph import CompiledGraph, KernelInfo
from tcompile.tracer.ir.device_arrays import array_kind
from tcompile.tracer.ir.graph import Graph
from tcompile.tracer.ir.graph_failure import fp_errors_raise

from ..eager import eager_backend
from . import fusion
from . import loop_ir as ir
from .host_nodes import replay_view
from .lifetimes import frees_after
from .lowering import lower, written_nodes
from .plan import (
    HostValue,
    InputMeta,
    Known,
    Launch,
    NumpyScalar,
    Plan,
    WholeGraphInNumPy,
    map_leaves,
)
from .target import KernelBuildError, Target
from .tensors import BufferTensor, Tensor, contiguous_strides, is_whole, strided


class GraphRuntimeError(RuntimeError):
    """A kernel found what NumPy raises for (the frame then runs eagerly and raises it)."""


@dataclass
class Program:
    """A plan with its kernels compiled: what a call with these input layouts runs."""

    plan: Plan
    steps: list
    target: Target
    compiled: dict = field(default_factory=dict)  # id(kernel) -> CompiledKernel
    decisions: list = field(default_factory=list)
    # id(DeviceLoop) -> the Runner of its body; id(DeviceCond) -> a Runner per side
    bodies: dict = field(default_factory=dict)
    loop_runners: dict = field(default_factory=dict)  # id(DeviceLoop) -> the target's runner
    frees: list = field(default_factory=list)  # per step, the buffers a call lets go of after it

    def compile(self, kernel: ir.Kernel) -> None:
        self.compiled[id(kernel)] = self.target.compile(kernel)

    def add_loop(self, step) -> None:
        """A loop step's body, planned at its first run, and the target's way to run it."""
        self.bodies[id(step)] = Runner(step.node.target.body, self.target, loop_body=True)
        self.loop_runners[id(step)] = self.target.loop_runner(step)

    def add_cond(self, step) -> None:
        """A cond step's sides, each planned at its first run."""
        self.bodies[id(step)] = tuple(Runner(body, self.target, loop_body=True)
                                      for body in step.node.target.bodies)  # fmt: skip

    def infos(self) -> tuple[KernelInfo, ...]:
        """What the program runs, for the Kernels tab: its kernels, then its library calls,
        loops (whose bodies' kernels are listed once made: at the loop's first run) and
        extern steps."""
        infos = [info for step in self.steps if (info := step.info(self)) is not None]
        return tuple(sorted(infos, key=lambda info: _TAB_ORDER.get(info.kind, 0)))


_TAB_ORDER = {"library": 1, "loop": 2, "cond": 2, "extern": 3}  # kernels first (0)


def make_program(graph: Graph, metas: list[InputMeta], target: Target) -> Program:
    plan = lower(graph, metas, target)
    counter = iter(range(1_000_000))

    def make_buffer(hint, dtype, shape):
        return ir.Buffer(f"{hint}{next(counter)}", np.dtype(dtype), tuple(shape),
                         contiguous_strides(tuple(shape)))  # fmt: skip

    steps, decisions = fusion.schedule(plan.steps, make_buffer)
    frees = frees_after(plan, steps) or [()] * len(steps)
    program = Program(plan, steps, target, decisions=decisions, frees=frees)
    for step in steps:
        step.prepare(program)
    plan.kernels = [s.kernel for s in steps if isinstance(s, Launch)]
    plan.checks = plan.checks or any(c.source.checks for c in program.compiled.values())
    return program


class Runner:
    """The callable a compiled graph is: ``runner(*inputs) -> tuple``; its kernels are
    ``target``'s, its arrays live on ``target.device()``.

    >>> runner = Runner(graph, target)  # doctest: +SKIP
    >>> runner(np.ones(3))  # doctest: +SKIP
    (array([2., 2., 2.]),)
    """

    def __init__(self, graph: Graph, target: Target, *, loop_body: bool = False):
        self.graph = graph
        self.target = target
        self.programs: dict[tuple, Program] = {}
        self.device = target.device()
        # Inputs the graph writes get a device copy of their own even where the device could
        # use their memory (the interpreter, NumPy): results land in the caller's array only once the
        # whole call succeeded, so a call that fails leaves the caller's arrays as they were
        # and the eager rerun starts from them. A loop body writes where its inputs are: they
        # are the loop's call's own buffers, which that call copied already.
        written = written_nodes(graph)
        self.copied = [node in written and not loop_body for node in graph.inputs]
        self.in_numpy_because: dict[tuple, str] = {}  # input layouts the graph runs in NumPy for
        self._numpy = None

    def program_for(self, inputs) -> tuple[Program, list]:
        """The program for these inputs' layouts (made on first sight) and their device
        tensors. The per-call part is kept small: it runs on every call."""
        tensors, key = [], []
        for value, copied in zip(inputs, self.copied):
            if type(value) is np.ndarray:
                if _kernel_dtype(value.dtype):
                    if copied and self.device.shares_host_memory:
                        value = value.copy()  # kernels would write the caller's memory
                    tensor = self.device.from_host(value)
                    key.append((value.dtype.str, value.shape, self.device.strides(tensor)))
                else:
                    tensor = None
                    key.append(("host", value.dtype.str, value.shape))
            elif isinstance(value, np.generic):
                tensor = None
                key.append(("scalar", value.dtype.str))
            else:
                kind = array_kind(value)
                if kind not in self.device.array_kinds:
                    tensor = None
                    key.append(type(value).__name__)
                else:  # a torch tensor, a CuPy array: used where it is
                    tensor = self.device.adopt(value)
                    if copied:  # written: a copy of its own until the call succeeded
                        tensor = self.device.clone(tensor)
                    key.append((kind, tensor.dtype, tuple(tensor.shape),
                                self.device.strides(tensor)))  # fmt: skip
            tensors.append(tensor)
        key = tuple(key)
        if key not in self.programs:
            try:
                metas = _metas(inputs, tensors, self.device)
                self.programs[key] = make_program(self.graph, metas, self.target)
            except WholeGraphInNumPy as why:
                self.programs[key] = None
                self.in_numpy_because[key] = str(why)
        return self.programs[key], tensors

    def __call__(self, *inputs, error=None):
        """``error``: a loop's body runs with the flag of the loop's call, checked once after
        the loop (a check per iteration would wait for the device every iteration)."""
        kinds = self.device.array_kinds
        kind = next((k for k in map(array_kind, inputs) if k in kinds and k != "numpy"), None)
        if kind is None:  # NumPy in, NumPy out; else outputs are the first device array's kind
            if fp_errors_raise():  # the caller's np.errstate wants NumPy's floating-point errors
                return self.in_numpy(*inputs)
            if any(self.copied) and self._written_input_overlaps(inputs):
                return self.in_numpy(*inputs)  # a write must show through the other name too
        program, tensors = self.program_for(inputs)
        if program is None:
            return self.in_numpy(*inputs)
        try:
            return Call(self.device, program, inputs, tensors, kind or "numpy", error).run()
        except KernelBuildError as why:
            # Never the user's fault: say so (the tests fail on this warning), run these layouts
            # in NumPy from now on, and let the glue run this call's frame eagerly.
            for key, known in self.programs.items():
                if known is program:
                    self.programs[key], self.in_numpy_because[key] = None, str(why)
            warnings.warn(f"tcompile: internal error: {why}; the graph runs in NumPy",
                          UserWarning, stacklevel=2)  # fmt: skip
            raise

    def _written_input_overlaps(self, inputs) -> bool:
        """Whether an input the graph writes shares memory with another input (one array
        passed twice, a view and its base): device copies would keep them apart."""
        arrays = [(i, a) for i, a in enumerate(inputs) if isinstance(a, np.ndarray)]
        for i, a in arrays:
            if self.copied[i]:
                for j, b in arrays:
                    if j != i and np.may_share_memory(a, b):
                        return True
        return False

    def infos(self) -> tuple[KernelInfo, ...]:
        """Its programs so far (a loop body's: one per layout of its inputs), as
        `Program.infos`."""
        programs = [p for p in self.programs.values() if p is not None]
        if not programs:
            return self.in_numpy_infos()
        return sum((p.infos() for p in programs), ())

    def in_numpy_infos(self) -> tuple[KernelInfo, ...]:
        """The graph runs in NumPy as a whole, if a plan said so."""
        return tuple(KernelInfo("the whole graph", "extern", notes=(reason,))
                     for reason in list(self.in_numpy_because.values())[:1])  # fmt: skip

    def in_numpy(self, *inputs):
        """The graph run by NumPy: the eager backend's code for it."""
        if self._numpy is None:
            self._numpy = eager_backend(self.graph, None).fn
        return self._numpy(*inputs)


class Call:
    """One run of a program: device tensors and host values by the plan's objects."""

    def __init__(self, dev, program: Program, inputs, tensors, kind: str, error=None):
        self.device = dev
        self.program = program
        self.inputs = inputs
        self.kind = kind  # what outputs are returned as: "numpy", "torch", "cupy"...
        self.tensors: dict[int, object] = {}  # id(Buffer) -> device tensor
        self.host: dict[int, object] = {}  # id(HostValue) / id(Buffer) -> host value
        self.error = error  # the error flag; a loop's call's own, in its body (checked there)
        self.checks_error = error is None
        written = set(program.plan.written_inputs)
        for position, (slot, value, tensor) in enumerate(zip(program.plan.inputs, inputs, tensors)):
            if isinstance(slot, ir.Buffer):
                self.tensors[id(slot)] = tensor
                if position not in written and type(value) is np.ndarray:
                    self.host[id(slot)] = value  # externs read the caller's array as it is
            elif isinstance(slot, HostValue):
                self.host[id(slot)] = value

    def run(self) -> tuple:
        plan = self.program.plan
        if plan.checks and self.error is None:
            self.new_error_flag()
        for step, done in zip(self.program.steps, self.program.frees):
            step.run(self)
            for buffer in done:
                self.tensors.pop(buffer, None)
                self.host.pop(buffer, None)
        if self.checks_error and self.error is not None and self.device.error_raised(self.error):
            raise GraphRuntimeError("a kernel found a value NumPy raises for")
        for position in plan.written_inputs:
            slot = plan.inputs[position]
            self.device.write_back(self.tensors[id(slot)], self.inputs[position])
        return tuple(self._output(out) for out in plan.outputs)

    def new_error_flag(self) -> None:
        self.error = self.device.error_flag()

    # -- steps ---------------------------------------------------------------------------------
    def tensor(self, buffer: ir.Buffer):
        tensor = self.tensors.get(id(buffer))
        if tensor is None:
            tensor = self.device.empty(buffer.shape, buffer.dtype, buffer.strides)
            self.tensors[id(buffer)] = tensor
        return tensor

    def launch(self, compiled) -> None:
        """Run one compiled kernel (`target.CompiledKernel`) on this call's tensors."""
        if compiled.empty:
            return
        for buffer in compiled.writes:
            self.host.pop(id(buffer), None)  # the host copy is out of date from here on
        compiled.run(self)

    def host_arg(self, value):
        def leaf(item):
            if isinstance(item, Known):
                return item.value
            if isinstance(item, HostValue):
                return self.host[id(item)]
            if isinstance(item, Tensor):
                return self.host_array(item)
            if isinstance(item, NumpyScalar):
                return self.host_array(item.tensor)[()]
            return item

        return map_leaves(value, leaf)

    def host_array(self, tensor: Tensor) -> np.ndarray:
        buffer, offset, strides = strided(tensor)
        whole = self.host.get(id(buffer))
        if whole is None:
            whole = self.device.to_host(self.tensor(buffer), scalar=False)
            self.host[id(buffer)] = whole
        if is_whole(buffer, offset, strides, tensor.shape):
            return whole
        return _view_at(whole, offset, tensor.shape, strides, buffer)

    # -- outputs --------------------------------------------------------------------------------
    def _output(self, out):
        source = out.source
        if isinstance(source, int):  # an input, or a view of one
            value = self.inputs[source]
            if out.view is None and out.replay is None:
                return value
            if type(value) is np.ndarray:  # NumPy makes the view from the caller's array
                return replay_view(out.replay, self.inputs)
            offset, strides, shape = out.view  # a device array: a view of its own memory
            own = self.device.view(self.device.adopt(value), shape, strides, offset)
            return self.device.give(own, self.kind, scalar=out.scalar)
        if isinstance(source, Known):
            return source.value
        if isinstance(source, HostValue):
            return self.host[id(source)]
        if out.replay is not None:  # NumPy makes the view from the value the buffer holds
            base = self.host_array(BufferTensor.whole(source))
            return replay_view(out.replay, self.inputs, (out.base, base))
        if self.kind == "numpy" and out.view is None and id(source) in self.host:
            # an extern's result as NumPy made it, or the host copy an extern read: that one is
            # an array, even of a value the trace saw as a NumPy scalar
            value = self.host[id(source)]
            return value[()] if out.scalar and isinstance(value, np.ndarray) else value
        tensor = self.tensor(source)
        if out.view is not None:
            offset, strides, shape = out.view
            tensor = self.device.view(tensor, shape, strides, offset)
        return self.device.give(tensor, self.kind, scalar=out.scalar)


def _metas(inputs, tensors, dev) -> list[InputMeta]:
    """What a plan is made from: each input's kind, dtype, shape and device layout."""
    metas = []
    for value, tensor in zip(inputs, tensors):
        if tensor is not None:
            dtype = value.dtype if type(value) is np.ndarray else dev.numpy_dtype(tensor)
            metas.append(InputMeta("array", dtype, tuple(tensor.shape), tuple(dev.strides(tensor)),
                                   type(value) is not np.ndarray))  # fmt: skip
        elif isinstance(value, np.ndarray):
            metas.append(InputMeta("array", value.dtype, tuple(value.shape), ()))
        elif isinstance(value, np.generic):
            metas.append(InputMeta("scalar", value.dtype))
        else:
            metas.append(InputMeta("python"))
    return metas


def _view_at(base: np.ndarray, offset: int, shape, strides, buffer: ir.Buffer) -> np.ndarray:
    """A view of ``base`` (laid out as ``buffer``) starting ``offset`` elements after its first
    element, with ``strides`` in elements."""
    itemsize = base.dtype.itemsize
    byte_strides = tuple(s * itemsize for s in strides)
    whole_strides = tuple(s * itemsize for s in buffer.strides)
    if base.strides != whole_strides and base.size > 1:
        base = np.ascontiguousarray(base)  # only for reading: a copied input's values
    pointer = base.__array_interface__["data"][0] + offset * itemsize
    interface = {"data": (pointer, not base.flags.writeable), "shape": tuple(shape),
                 "strides": byte_strides, "typestr": base.dtype.str, "version": 3}  # fmt: skip
    return np.asarray(_Interface(interface, base))


class _Interface:
    """An object exposing raw memory to NumPy, keeping the array that owns it alive."""

    def __init__(self, interface: dict, owner):
        self.__array_interface__ = interface
        self.owner = owner


def _kernel_dtype(dtype: np.dtype) -> bool:
    return (
        dtype.kind in "biuf" and dtype.isnative and dtype.itemsize <= 8 and dtype != np.longdouble
    )


def compile_graph(graph: Graph, example_inputs, target: Target, backend: str) -> CompiledGraph:
    """A backend's result for ``graph`` in ``target``'s kernels: the plan for the example
    inputs' layouts is made now (its kernel sources and plan go in the report), others on first
    sight.

    >>> compile_graph(graph, inputs, NumbaTarget(), "cpu").fn(*inputs)  # doctest: +SKIP
    """
    runner = Runner(graph, target)
    program, _ = runner.program_for(example_inputs)
    if program is None:
        return CompiledGraph(runner, backend, MappingProxyType({}), runner.in_numpy_infos())
    sources = {"kernels": "\n\n".join(c.source.text for c in program.compiled.values()),
               "plan": describe(program)}  # fmt: skip
    return CompiledGraph(runner, backend, MappingProxyType(sources),
                         program.infos() + tuple(program.decisions))  # fmt: skip


def describe(program: Program) -> str:
    """The plan as readable steps: what the Kernels tab and the report's "plan" source show."""
    lines = ["# inputs: " + ", ".join(_slot_text(s) for s in program.plan.inputs)]
    lines += [step.describe(program) for step in program.steps]
    outputs = ", ".join(_output_text(o) for o in program.plan.outputs)
    lines.append(f"return ({outputs})")
    return "\n".join(lines) + "\n"


def _slot_text(slot) -> str:
    if isinstance(slot, ir.Buffer):
        return f"{slot.name}: {slot.dtype}{list(slot.shape)}"
    return getattr(slot, "name", str(slot))


def _output_text(out) -> str:
    source = out.source
    if isinstance(source, int):
        return f"input {source}" + (" (a view)" if out.replay is not None else "")
    if isinstance(source, Known):
        return repr(source.value)
    return getattr(source, "name", str(source)) + (" (a view)" if out.replay is not None else "")
