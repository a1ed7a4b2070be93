"""Running plans: the compiled graph a backend call returns.

Per call: the inputs become device tensors (`device`), the plan for their shapes and layouts is
found (made on first sight: lower, fuse, generate, load), its steps run, written inputs are
copied back, and outputs come back as NumPy (or stay device arrays). A kernel that raised the
error flag (an index out of range, an integer to a negative power) makes the call raise
`GraphRuntimeError`; the glue then runs the frame eagerly, so the user sees NumPy's own error.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from tcompile.tracer.ir.compiled_graph import KernelInfo
from tcompile.tracer.ir.graph import Graph
from tcompile.tracer.ir.graph_failure import fp_errors_raise

from ..eager import eager_backend
from ..source_files import load_kernel, load_module
from . import autotune, codegen, device, fusion, loop_graphs, pointwise
from . import loop_ir as ir
from .host_nodes import replay_view
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
from .tensors import BufferTensor, Tensor, is_whole, strided


@functools.cache
def _kernel_build_errors() -> tuple[type[BaseException], ...]:
    """Triton's errors for a kernel it cannot compile (or, interpreting, run)."""
    from triton.compiler.errors import CompilationError
    from triton.runtime.errors import InterpreterError, PTXASError

    return CompilationError, InterpreterError, PTXASError


class GraphRuntimeError(RuntimeError):
    """A kernel found what NumPy raises for (the frame then runs eagerly and raises it)."""


class KernelBuildError(RuntimeError):
    """A generated kernel Triton could not compile (or, interpreting, run): tcompile's bug."""


@dataclass
class Compiled:
    """One kernel, ready to launch: its source, its Triton function, its sizes and the launch
    configurations to choose from (`autotune`)."""

    kernel: ir.Kernel
    source: codegen.KernelSource
    fn: object
    xnumel: int
    configs: list
    chosen: autotune.Config | None = None
    launcher: object = None  # ``fn[grid]`` for the chosen configuration
    options: dict = field(default_factory=dict)  # its block sizes and warps

    def __post_init__(self):
        # The arguments in order: ints fixed now, buffers (and the error flag) filled per call.
        self.args = [a.value if isinstance(a, ir.Param) else None for a in self.source.args]
        self.slots = [(i, a) for i, a in enumerate(self.source.args) if not isinstance(a, ir.Param)]
        self.writes = self.kernel.writes()

    @property
    def empty(self) -> bool:  # nothing to compute (a size-0 dim): not launched
        return self.xnumel == 0

    def grid(self, config: autotune.Config) -> tuple:
        return (max(1, math.ceil(self.xnumel / config.XBLOCK)),)


@dataclass
class Program:
    """A plan with its kernels loaded: what a call with these input layouts runs."""

    plan: Plan
    steps: list
    compiled: dict = field(default_factory=dict)  # id(kernel) -> Compiled
    decisions: list = field(default_factory=list)
    bodies: dict = field(default_factory=dict)  # id(DeviceLoop) -> the Runner of its body
    loop_graphs: dict = field(default_factory=dict)  # id(DeviceLoop) -> its CUDA graphs

    def compile(self, kernel: ir.Kernel) -> None:
        self.compiled[id(kernel)] = _compile(kernel)

    def add_loop(self, step) -> None:
        """A loop step's body, planned at its first run, and its CUDA graphs."""
        self.bodies[id(step)] = Runner(step.node.target.body, loop_body=True)
        self.loop_graphs[id(step)] = loop_graphs.LoopGraphs()

    def infos(self) -> tuple[KernelInfo, ...]:
        """What the program runs, for the Kernels tab: its kernels, then its library calls,
        loops (whose bodies' kernels are listed once made: at the loop's first run) and
        extern steps."""
        infos = [info for step in self.steps if (info := step.info(self)) is not None]
        return tuple(sorted(infos, key=lambda info: _TAB_ORDER.get(info.kind, 0)))


_TAB_ORDER = {"library": 1, "loop": 2, "extern": 3}  # kernels first (0)


def make_program(graph: Graph, metas: list[InputMeta]) -> Program:
    plan = lower(graph, metas)
    counter = iter(range(1_000_000))

    def make_buffer(hint, dtype, shape):
        from .tensors import contiguous_strides

        return ir.Buffer(f"{hint}{next(counter)}", np.dtype(dtype), tuple(shape),
                         contiguous_strides(tuple(shape)))  # fmt: skip

    steps, decisions = fusion.schedule(plan.steps, make_buffer)
    program = Program(plan, steps, decisions=decisions)
    for step in steps:
        step.prepare(program)
    plan.kernels = [s.kernel for s in steps if isinstance(s, Launch)]
    plan.checks = plan.checks or any(c.source.checks for c in program.compiled.values())
    return program


def _compile(kernel: ir.Kernel) -> Compiled:
    xnumel = int(np.prod([v.size.value for v in kernel.xvars], dtype=np.int64))
    rnumel = int(np.prod([v.size.value for v in kernel.rvars], dtype=np.int64))
    persistent = bool(kernel.rvars) and rnumel <= codegen.PERSISTENT_LIMIT
    source = codegen.generate(kernel, persistent=persistent)
    fn = load_kernel(source.text, source.name)
    if device.interpreting():  # the interpreter has no libdevice: NumPy's C functions stand in
        load_module(source.text).libdevice = pointwise.interpreter_libdevice()
    configs = autotune.candidates(xnumel, rnumel, reduction=kernel.is_reduction,
                                  persistent=persistent, interpreting=device.interpreting())  # fmt: skip
    return Compiled(kernel, source, fn, xnumel, configs)


class Runner:
    """The callable a Triton-compiled graph is: ``runner(*inputs) -> tuple``."""

    def __init__(self, graph: Graph, *, loop_body: bool = False):
        self.graph = graph
        self.programs: dict[tuple, Program] = {}
        self.device = device.current_device()
        # Inputs the graph writes get a device copy of their own even where the device could
        # use their memory (the interpreter): results land in the caller's array only once the
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
                    if copied and self.device.kind == "interpreter":
                        value = value.copy()  # the interpreter would write the caller's memory
                    tensor = self.device.from_host(value)
                    key.append((value.dtype.str, value.shape, tensor.stride()))
                else:
                    tensor = None
                    key.append(("host", value.dtype.str, value.shape))
            elif isinstance(value, np.generic):
                tensor = None
                key.append(("scalar", value.dtype.str))
            else:
                kind = device.array_kind(value)
                if kind is None:
                    tensor = None
                    key.append(type(value).__name__)
                else:  # a torch tensor, a CuPy array: used where it is
                    tensor = device.to_device_tensor(value, self.device)
                    if copied:  # written: a copy of its own until the call succeeded
                        tensor = tensor.clone()
                    key.append((kind, tensor.dtype, tuple(tensor.shape), tensor.stride()))
            tensors.append(tensor)
        key = tuple(key)
        if key not in self.programs:
            try:
                self.programs[key] = make_program(self.graph, _metas(inputs, tensors))
            except WholeGraphInNumPy as why:
                self.programs[key] = None
                self.in_numpy_because[key] = str(why)
        return self.programs[key], tensors

    def __call__(self, *inputs, error=None):
        """``error``: a loop's body runs with the flag of the loop's call, checked once after
        the loop (a check per iteration would wait for the device every iteration)."""
        kind = next((k for k in map(device.array_kind, inputs) if k not in (None, "numpy")), None)
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
        for step in self.program.steps:
            step.run(self)
        if self.checks_error and self.error is not None and int(self.error.cpu()[0]):
            raise GraphRuntimeError("a kernel found a value NumPy raises for")
        for position in plan.written_inputs:
            slot = plan.inputs[position]
            self.device.write_back(self.tensors[id(slot)], self.inputs[position])
        return tuple(self._output(out) for out in plan.outputs)

    def new_error_flag(self) -> None:
        self.error = self.device.empty((1,), np.dtype(np.int32))
        self.error.zero_()

    # -- steps ---------------------------------------------------------------------------------
    def tensor(self, buffer: ir.Buffer):
        tensor = self.tensors.get(id(buffer))
        if tensor is None:
            tensor = self.device.empty(buffer.shape, buffer.dtype, buffer.strides)
            self.tensors[id(buffer)] = tensor
        return tensor

    def launch(self, compiled: Compiled) -> None:
        if compiled.empty:
            return
        for buffer in compiled.writes:
            self.host.pop(id(buffer), None)  # the host copy is out of date from here on
        args = compiled.args.copy()
        for i, arg in compiled.slots:
            args[i] = self.error if arg == "error" else self.tensor(arg)
        try:
            if compiled.launcher is None:
                self._choose(compiled, args)
            compiled.launcher(*args, **compiled.options)
        except _kernel_build_errors() as error:
            raise KernelBuildError(f"kernel {compiled.source.name} failed in Triton "
                                   f"({type(error).__name__}: {str(error).strip()[:300]})") from error  # fmt: skip

    def _choose(self, compiled: Compiled, args: list) -> None:
        """Pick the launch configuration (`autotune`), measuring on these arguments."""

        def run(config: autotune.Config) -> None:
            compiled.fn[compiled.grid(config)](*args, **config.launch_options())

        written = [self.tensor(b) for b in compiled.writes]
        saved = [t.clone() for t in written] if len(compiled.configs) > 1 else []

        def restore() -> None:
            for tensor, copy in zip(written, saved):
                tensor.copy_(copy)

        key = f"{compiled.source.digest}:{compiled.xnumel}:{compiled.configs}:{self.device!r}"
        chosen = autotune.choose(key, compiled.configs, run, self.device.synchronize, restore)
        compiled.chosen, compiled.options = chosen, chosen.launch_options()
        compiled.launcher = compiled.fn[compiled.grid(chosen)]

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
            own = device.to_device_tensor(value, self.device).as_strided(shape, strides, offset)
            return device.from_device_tensor(own, self.kind, scalar=out.scalar, device=self.device)
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
            tensor = tensor.as_strided(shape, strides, offset)
        return device.from_device_tensor(tensor, self.kind, scalar=out.scalar, device=self.device)


def _metas(inputs, tensors) -> list[InputMeta]:
    """What a plan is made from: each input's kind, dtype, shape and device layout."""
    metas = []
    for value, tensor in zip(inputs, tensors):
        if tensor is not None:
            dtype = value.dtype if type(value) is np.ndarray else device.numpy_dtype(tensor)
            metas.append(InputMeta("array", dtype, tuple(tensor.shape), tuple(tensor.stride()),
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
