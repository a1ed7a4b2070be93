"""A plan: what one call runs, for one set of input shapes and layouts (`lowering` makes it).

Its values are buffers, `Known` Python values and `HostValue` s computed per call; its steps each
prepare what they need in a program (`prepare`), run on one call's device tensors and host
values (`run`), and say what they do: a line of the plan's text (`describe`) and an entry of the
Kernels tab (`info`, None for host-side bookkeeping). `runtime` holds the call they run in.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from tcompile.tracer.ir.compiled_graph import KernelInfo
from tcompile.tracer.ir.node import Node, user_lines

from . import loop_ir as ir
from .host_nodes import run_node
from .tensors import BufferTensor, Tensor, strided


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


# -- steps ---------------------------------------------------------------------------------------


class Step:
    """One step of a plan; ``program`` is a `runtime.Program`, ``call`` one `runtime.Call` of
    it. ``host_only``: it touches no memory a kernel writes (fusion may move
    a launch across it); ``device_only``: it runs on the device alone (a CUDA graph may record
    it)."""

    host_only = False
    device_only = False

    def prepare(self, program) -> None:
        """Make what running needs in ``program`` (nothing, for most steps)."""

    def run(self, call) -> None:
        raise NotImplementedError

    def describe(self, program) -> str:
        raise NotImplementedError

    def info(self, program) -> KernelInfo | None:
        return None


@dataclass(eq=False)
class Launch(Step):
    kernel: ir.Kernel
    device_only = True

    def prepare(self, program) -> None:
        program.compile(self.kernel)

    def run(self, call) -> None:
        call.launch(call.program.compiled[id(self.kernel)])

    def describe(self, program) -> str:
        reads = ", ".join(b.name for b in self.kernel.reads())
        writes = ", ".join(b.name for b in self.kernel.writes())
        how = program.compiled[id(self.kernel)].describe()
        return f"launch {self.kernel.name}({how})  reads {reads or '-'}  writes {writes}"

    def info(self, program) -> KernelInfo:
        compiled = program.compiled[id(self.kernel)]
        kernel = compiled.kernel
        return KernelInfo(kernel.name, _kernel_kind(kernel), compiled.source.text, kernel.lines,
                          kernel.fused)  # fmt: skip


@dataclass(eq=False)
class Extern(Step):
    """``node``'s NumPy call on host values; ``results`` receive what it returns (buffers
    uploaded, host values kept); ``writes`` are buffers it writes in place."""

    node: Node
    args: tuple
    kwargs: dict
    results: tuple
    writes: tuple[ir.Buffer, ...]
    reason: str

    def run(self, call) -> None:
        args = [call.host_arg(a) for a in self.args]
        kwargs = {k: call.host_arg(v) for k, v in self.kwargs.items()}
        with np.errstate(**dict(self.node.errstate)):  # as it was traced
            result = run_node(self.node, args, kwargs)
        for buffer in self.writes:  # the host copy was written: the device copy follows it
            call.device.copy_from_host(call.tensor(buffer), call.host[id(buffer)])
        if len(self.results) == 1:
            _take(call, self.results[0], result)
        elif self.results:
            for slot, item in zip(self.results, result):
                _take(call, slot, item)

    def describe(self, program) -> str:
        return (f"extern {getattr(self.node.target, '__name__', self.node.op)} "
                f"in NumPy on the host: {self.reason}")  # fmt: skip

    def info(self, program) -> KernelInfo:
        name = getattr(self.node.target, "__name__", None) or self.node.op
        return KernelInfo(f"extern {name}", "extern", lines=user_lines(self.node),
                          notes=(self.reason,))  # fmt: skip


COMPACTION_NOTE = (
    "the selected elements in order: a first run counts each share's, a second writes each "
    "share's from the count of the shares before it, into a result of the total's size"
)


@dataclass(eq=False)
class Compaction(Step):
    """A compaction kernel (`loop_ir.Compacted`): the values each of its stores selects, in
    order, become one of ``results``, NumPy arrays whose size follows data (what reads them
    runs in NumPy); several for ``np.nonzero``, the positions along each dim."""

    kernel: ir.Kernel
    results: tuple[HostValue, ...]

    def prepare(self, program) -> None:
        program.compile(self.kernel)

    def run(self, call) -> None:
        compiled = call.program.compiled[id(self.kernel)]
        if compiled.empty:
            arrays = [np.empty(0, b.dtype) for b in self.kernel.writes()]
        else:
            arrays = [call.device.to_host(t, scalar=False) for t in compiled.compact(call)]
        for result, array in zip(self.results, arrays, strict=True):
            call.host[id(result)] = array

    def describe(self, program) -> str:
        reads = ", ".join(b.name for b in self.kernel.reads())
        how = program.compiled[id(self.kernel)].describe()
        results = ", ".join(r.name for r in self.results)
        return (f"compact {self.kernel.name}({how})  reads {reads or '-'}  "
                f"-> {results} (sizes follow data)")  # fmt: skip

    def info(self, program) -> KernelInfo:
        compiled = program.compiled[id(self.kernel)]
        return KernelInfo(self.kernel.name, "compaction", compiled.source.text, self.kernel.lines,
                          notes=(COMPACTION_NOTE,))  # fmt: skip


LOOP_NOTE = (
    "its body (the source) is a plan of its own: its kernels compile at its first run "
    "(listed below once made) and launch once per iteration, its arrays staying on the device"
)


@dataclass(eq=False)
class DeviceLoop(Step):
    """A loop node: its body graph runs as a program of its own (its kernels compiled once), once
    per iteration, on the device tensors of ``args``; ``results`` receive the loop's outputs;
    ``writes`` are buffers its body writes in place."""

    node: Node
    args: tuple
    results: tuple
    writes: tuple[ir.Buffer, ...]

    def prepare(self, program) -> None:
        program.add_loop(self)

    def run(self, call) -> None:
        """The body's program once per iteration, on device tensors (views of this call's
        buffers): carried arrays stay on the device from one iteration to the next."""
        body = call.program.bodies[id(self)]
        for buffer in self.writes:
            call.host.pop(id(buffer), None)
        args = [map_leaves(a, functools.partial(_device_arg, call)) for a in self.args]
        if call.error is None:
            call.new_error_flag()
        outputs = None
        runner = call.program.loop_runners.get(id(self))
        if runner is not None:  # the target's own way (a CUDA graph's replay, a native loop)
            outputs = runner(call, body, args)
        if outputs is None:
            outputs = self.node.target.drive(functools.partial(body, error=call.error), *args)
        _put_results(call, self.results, outputs)

    def describe(self, program) -> str:
        results = ", ".join(getattr(r, "name", None) or r.buffer.name for r in self.results)
        return (f"{self.node.op} {self.node.target.body.name}: its body's "
                f"kernels launched per iteration on the device -> {results}")  # fmt: skip

    def info(self, program) -> KernelInfo:
        body = self.node.target.body
        return KernelInfo(f"{self.node.op} {body.name}", "loop", body.python_code(),
                          user_lines(self.node), notes=(LOOP_NOTE,),
                          parts=program.bodies[id(self)].infos)  # fmt: skip


COND_NOTE = (
    "its predicate is read on the host, then the side it picks runs as a program of its own "
    "(each side's kernels are made at its first run, and listed below once made)"
)


@dataclass(eq=False)
class DeviceCond(Step):
    """A cond node: its predicate ``pred`` read on the host, then the side it picks run as a
    program of its own on the device tensors of ``args`` (only that side runs: the other's
    writes and errors never happen); ``results`` receive the side's outputs; ``writes`` are
    buffers either side writes in place."""

    node: Node
    pred: object
    args: tuple
    results: tuple
    writes: tuple[ir.Buffer, ...]

    def prepare(self, program) -> None:
        program.add_cond(self)

    def run(self, call) -> None:
        for buffer in self.writes:
            call.host.pop(id(buffer), None)
        pred = _device_arg(call, self.pred)
        if not isinstance(pred, np.generic | bool | int):
            pred = call.device.to_host(pred, scalar=True)
        side = call.program.bodies[id(self)][0 if pred else 1]
        args = [map_leaves(a, functools.partial(_device_arg, call)) for a in self.args]
        if call.error is None:
            call.new_error_flag()
        _put_results(call, self.results, side(*args, error=call.error))

    def describe(self, program) -> str:
        results = ", ".join(getattr(r, "name", None) or r.buffer.name for r in self.results)
        return f"{self._name()}: the side its predicate picks, on the device -> {results}"

    def info(self, program) -> KernelInfo:
        sides = program.bodies[id(self)]
        return KernelInfo(self._name(), "cond", "", user_lines(self.node),
                          notes=(COND_NOTE,),
                          parts=lambda: sum((side.infos() for side in sides), ()))  # fmt: skip

    def _name(self) -> str:
        return f"if {getattr(self.node.args[0], 'name', 'its predicate')}"  # "if gt"


def _put_results(call, results: tuple, outputs) -> None:
    """A body's outputs (a loop's, a cond side's) into the step's result slots."""
    for slot, value in zip(results, outputs, strict=True):
        if isinstance(value, np.generic | int | float):  # a counter, or a body that ran
            # without device arrays
            call.host[id(slot)] = value
            continue
        tensor = call.device.adopt(value)
        if isinstance(slot, BufferTensor):
            call.device.copy(call.tensor(slot.buffer), tensor)
        else:
            call.host[id(slot)] = call.device.to_host(tensor, scalar=True)


@dataclass(eq=False)
class LibraryCall(Step):
    """An operation of the array library on device buffers (``op`` names it: "matmul",
    "cumsum", "cumprod"; ``options``: ``axis``); the result is a new buffer of the node's
    dtype. The device runs it (`target.Device.library`): torch on the GPU, NumPy on the CPU."""

    op: str
    operands: tuple
    options: dict
    result: ir.Buffer | None
    device_only = True

    def run(self, call) -> None:
        """The device's library on its tensors, in the result's dtype (NumPy's: the trace saw
        it)."""
        operands = [call.device.view(call.tensor(o.buffer), o.shape, o.strides, o.offset)
                    for o in self.operands]  # fmt: skip
        out = call.device.library(self.op, operands, self.result.dtype, self.options)
        call.device.copy(call.tensor(self.result), out)
        call.host.pop(id(self.result), None)

    def describe(self, program) -> str:
        operands = ", ".join(o.buffer.name for o in self.operands)
        return f"{self._name(program)}({operands}) on the device -> {self.result.name}"

    def info(self, program) -> KernelInfo:
        return KernelInfo(self._name(program), "library",
                          notes=("the array library's kernel, on the device buffers",))  # fmt: skip

    def _name(self, program) -> str:
        return f"{program.target.library_name}.{self.op}"


@dataclass(eq=False)
class Upload(Step):
    """A host value a kernel reads, put in a 0-d buffer."""

    value: HostValue
    buffer: ir.Buffer
    host_only = True  # the buffer is its own: no kernel wrote it

    def run(self, call) -> None:
        value = np.asarray(call.host[id(self.value)], dtype=self.buffer.dtype)
        call.tensors[id(self.buffer)] = call.device.from_host(value.copy())

    def describe(self, program) -> str:
        return f"upload {self.value.name} -> {self.buffer.name}"


@dataclass(eq=False)
class HostCall(Step):
    """A Python or NumPy operation on host values, run on every call (``x * 0.5`` with a
    dynamic float; ``np.arange(n)``, a new array each call)."""

    fn: object
    args: tuple
    kwargs: dict
    result: HostValue
    host_only = True

    def run(self, call) -> None:
        args = [call.host_arg(a) for a in self.args]
        kwargs = {k: call.host_arg(v) for k, v in self.kwargs.items()}
        call.host[id(self.result)] = self.fn(*args, **kwargs)

    def describe(self, program) -> str:
        return f"host {getattr(self.fn, '__name__', self.fn)} -> {self.result.name}"


# -- the plan ------------------------------------------------------------------------------------


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
    steps: list[Step]
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


def map_leaves(value, leaf):
    """``value`` with ``leaf`` applied to everything inside its tuples, lists, dicts and slices."""
    if isinstance(value, (tuple, list)):
        return type(value)(map_leaves(v, leaf) for v in value)
    if isinstance(value, dict):
        return {k: map_leaves(v, leaf) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(*(map_leaves(p, leaf) for p in (value.start, value.stop, value.step)))
    return leaf(value)


def _kernel_kind(kernel: ir.Kernel) -> str:
    if any(store.accumulate for store in kernel.stores):
        return "scatter"
    return "reduction" if kernel.rvars else "pointwise"


def _device_arg(call, item):
    if isinstance(item, Known):
        return item.value
    if isinstance(item, HostValue):
        return call.host[id(item)]
    buffer, offset, strides = strided(item)
    return call.device.view(call.tensor(buffer), item.shape, strides, offset)


def _take(call, slot, value) -> None:
    """An extern's result: kept as NumPy made it (a result returned as it is keeps NumPy's
    layout), and on the device for the kernels that read it."""
    if isinstance(slot, BufferTensor):
        call.host[id(slot.buffer)] = value
        call.tensors[id(slot.buffer)] = call.device.from_host(np.ascontiguousarray(value))
    else:
        call.host[id(slot)] = value
