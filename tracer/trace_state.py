"""State of one frame's trace: the graph being built, its guards, and how values enter it.

`TraceState.wrap` turns a pre-existing object read from a source into a symbolic value and
records the guards that make the trace valid for it. `TraceState.graph_call` adds a NumPy
operation to the graph: it runs the operation on the example values (the real inputs, or
values computed from them) so shapes, dtypes and NumPy scalar types are exactly NumPy's,
without ever mutating a real input (in-place operations run on copies at trace time).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import sys
import sysconfig
import types
from dataclasses import dataclass, field

import numpy as np

from . import device_arrays, effects, hatches, numpy_table
from .canonical import canonicalize
from .errors import BREAK_KINDS, BreakRecord, FrameLoc, GraphBreak
from .examples import ExampleMemory, run_with_stand_ins, traced_leaves, value_dependent_shape
from .graph import Graph, Node, TensorMeta, describe_value
from .guards import Guard
from .source import (
    AttrSource,
    GlobalSource,
    ItemSource,
    LocalSource,
    Source,
)
from .values import (
    ArrayFlags,
    ArrayMethod,
    ArrayValue,
    BoundMethod,
    Const,
    ConstMethod,
    ContextManager,
    DictValue,
    ListValue,
    Obj,
    ScalarValue,
    SymFloat,
    SymInt,
    TupleValue,
    UserFunction,
    UserObject,
    Value,
    rebuild,
)

# ``arr.flags.<name> = v`` is ``arr.setflags(<keyword>=v)``
_SETFLAGS = {"writeable": "write", "aligned": "align", "writebackifcopy": "uic"}
CONST_TYPES = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis), range, frozenset)


@dataclass
class DynamicPolicy:
    """Which dims of which inputs are traced as symbolic sizes."""

    all_dims: bool = False  # dynamic=True
    marked: dict[str, set[int]] = field(default_factory=dict)  # source name -> dims
    force_static: bool = False
    floats: frozenset = frozenset()  # source names of Python floats traced as graph inputs

    def float_is_input(self, source: Source) -> bool:
        return not self.force_static and (self.all_dims or source.name() in self.floats)

    def dims_for(self, source: Source, shape: tuple) -> set[int]:
        if self.force_static:
            return set()
        dims = set(range(len(shape))) if self.all_dims else self.marked.get(source.name(), set())
        return {d for d in dims if d < len(shape) and shape[d] >= 2}  # sizes 0 and 1 stay static


class TraceState:
    def __init__(self, graph_name: str, dynamic: DynamicPolicy, root_globals: dict,
                 error_on_graph_break: bool = False, device_arrays: bool = False):  # fmt: skip
        self.graph = Graph(graph_name)
        self.device_arrays = device_arrays  # the backend runs on torch/CuPy arrays as they are
        self.guards: list[Guard] = []
        self.dynamic = dynamic
        self.root_globals = root_globals
        self.example_inputs: list = []
        self.input_sources: list[Source] = []
        self.input_nodes: list[Node] = []
        self._wrapped: dict[str, Value] = {}
        self._mutables: dict[int, tuple] = {}  # id -> (object, its value): lists, dicts, objects
        self.tx = None  # the innermost translator running (for locations)
        self.instruction_count = 0
        self.has_dynamic_dims = False
        # Writes to pre-existing Python state, replayed in order after the graph runs:
        # ("global", name, value) / ("cell", Cell) / ("attr", UserObject, name) / ("container", v)
        self.side_effects: list[tuple] = []
        self.global_writes: dict[tuple[int, str], Value] = {}
        self._named: set[int] = set()
        self.region_break: BreakRecord | None = None
        self.error_on_graph_break: list[bool] = [error_on_graph_break]  # innermost last
        self.forced_errors = 0  # > 0 inside an inlined tc.compile(fullgraph=True) function
        self.contexts: list = []  # active supported with-blocks (ContextExit values)
        self.memory = ExampleMemory()  # the examples of array values, and the caller's memory
        self.cell_models: dict[int, object] = {}  # id(real cell) -> its Cell model
        self.keep_alive: list = []  # the real cells behind cell_models (ids stay unique)

    # -- guards and breaks -------------------------------------------------------------------
    def guard(self, source: Source | None, kind: str, expected: object) -> None:
        if source is not None:
            self.guards.append(Guard(source, kind, expected))

    def enter_region(self, kind: str, explanation: str) -> None:
        """The trace entered a try block or an unsupported with-block: the frame will run
        eagerly, but tracing goes on (symbolically) to find the first real break inside."""
        if self.region_break is None:
            self.region_break = self.graph_break(kind, explanation).record

    def blocked_by(self, brk: GraphBreak, kind: str, where: str) -> GraphBreak:
        """The break, re-kinded: it happened where a frame cannot resume (try/with blocks)."""
        if brk.record.kind.id == kind:
            return brk
        record = BreakRecord(BREAK_KINDS[kind], f"{brk.record.explanation} ({where})",
                             brk.record.stack, brk.record.hints)  # fmt: skip
        return GraphBreak(record, error_on_graph_break=brk.error_on_graph_break)

    def in_region(self, brk: GraphBreak) -> GraphBreak:
        """A break met inside such a region is reported at its own line, as the region's kind."""
        region = self.region_break
        if region is None:
            return brk
        return self.blocked_by(brk, region.kind.id, region.explanation)

    def user_stack(self) -> tuple[FrameLoc, ...]:
        return self.tx.user_stack() if self.tx is not None else ()

    # -- side effects on pre-existing Python state --------------------------------------------
    def record_global_write(self, f_globals: dict, name: str, value: Value) -> None:
        self.global_writes[(id(f_globals), name)] = value
        self.side_effects.append(("global", name))

    def record_cell_write(self, cell) -> None:
        if cell.preexisting is None:
            raise self.graph_break(
                "unsupported_mutation", "write to a closure cell tcompile cannot address"
            )
        self.side_effects.append(("cell", cell))

    def record_mutation(self, container: Value) -> None:
        if not any(e[0] == "container" and e[1] is container for e in self.side_effects):
            self.side_effects.append(("container", container))
        container.mutated = True

    def store_attr(self, obj: Value, name: str, value: Value) -> None:
        if isinstance(obj, UserObject) and obj.new_cls is not None:
            obj.overlay[name] = value  # an object made in the trace: no side effect to replay
            return
        if isinstance(obj, UserObject) and obj.source is not None:
            obj.overlay[name] = value
            obj.mutated = True
            self.side_effects.append(("attr", obj, name))
            return
        if isinstance(obj, ArrayFlags) and name in _SETFLAGS:
            self.graph_call("method", "setflags", (obj.array,), {_SETFLAGS[name]: value},
                            name="setflags")  # fmt: skip
            return
        raise self.graph_break(
            "unsupported_mutation", f"setting attribute {name!r} of {obj.describe()}"
        )

    def name_value(self, value: Value, name: str) -> None:
        """Name a graph node after the user's variable the first time it is stored."""
        node = getattr(value, "node", None)
        if isinstance(node, Node) and node.op != "input" and id(node) not in self._named:
            self._named.add(id(node))
            self.graph.rename(node, name)

    def global_source_for(self, fn) -> object:
        """Source maker for globals read by an inlined function ``fn``."""
        if fn.globals is self.root_globals:
            return GlobalSource
        if fn.source is None:
            return None
        base = AttrSource(fn.source, "__globals__")
        return lambda name: ItemSource(base, name)

    def specialize_dim(self, source_name: str, dim: int) -> None:
        """A dynamic input dim was used as a Python int: guard its exact size from now on."""
        for i, guard in enumerate(self.guards):
            if (
                guard.kind == "shape"
                and guard.source.name() == source_name
                and guard.expected[dim] is None
            ):
                size = self._wrapped[guard.source.expr()].example.shape[dim]
                dims = tuple(size if d == dim else e for d, e in enumerate(guard.expected))
                self.guards[i] = Guard(guard.source, "shape", dims)

    def graph_break(self, kind: str, explanation: str, *hints: str) -> GraphBreak:
        """Build (the caller raises) a located graph break, with the error_on_graph_break
        setting in force where it happens (an inlined fullgraph function forces it)."""
        return GraphBreak(
            BreakRecord(BREAK_KINDS[kind], explanation, self.user_stack(), tuple(hints)),
            error_on_graph_break=self.forced_errors > 0 or self.error_on_graph_break[-1],
        )

    # -- supported context managers ------------------------------------------------------------
    def enter_context(self, exit_value) -> None:
        manager = exit_value.manager
        if manager.python_type() is hatches.error_on_graph_break:
            self.error_on_graph_break.append(_context_flag(manager))
        self.contexts.append(exit_value)

    def errstate(self) -> tuple:
        """The np.errstate settings of the supported with-blocks open now (innermost wins)."""
        settings: dict = {}
        for exit_value in self.contexts:
            if exit_value.manager.python_type() is np.errstate:
                settings.update(errstate_settings(exit_value.manager))
        return tuple(sorted(settings.items()))

    def exit_context(self, exit_value) -> None:
        if exit_value.manager.python_type() is hatches.error_on_graph_break:
            self.error_on_graph_break.pop()
        self.contexts.remove(exit_value)

    # -- values entering the trace -----------------------------------------------------------
    def wrap(self, obj: object, source: Source) -> Value:
        """The symbolic value for ``obj`` read from ``source``, guarding what the trace assumes."""
        key = source.expr()
        if key not in self._wrapped:
            self._wrapped[key] = self._shared(obj, source) or self._wrap_new(obj, source)
        return self._wrapped[key]

    def _wrap_new(self, obj: object, source: Source) -> Value:
        value = self._wrap(obj, source)
        if isinstance(value, (ListValue, DictValue, UserObject)):
            self._mutables[id(obj)] = (obj, value)
        return value

    def _shared(self, obj: object, source: Source) -> Value | None:
        """A mutable object reached through two sources (an argument that is also a global,
        a list holding one list twice) is one value: writes through one are seen through the
        other. The aliasing is guarded."""
        known = self._mutables.get(id(obj))
        if known is None or known[0] is not obj:
            return None
        self.guard(source, "alias", (known[1].source, True))
        return known[1]

    def guard_mutable_aliasing(self) -> None:
        """Mutable objects the trace wrote are assumed distinct from the others of their type
        it read: a later call passing one object twice must not reuse this entry."""
        values = [v for _, v in self._mutables.values()]
        for written in (v for v in values if v.mutated):
            for other in values:
                if other is not written and other.python_type() is written.python_type():
                    self.guard(written.source, "alias", (other.source, False))

    def _wrap(self, obj: object, source: Source) -> Value:
        t = type(obj)
        if t is np.ndarray:
            return self._wrap_array(obj, source)
        if self.device_arrays and device_arrays.numpy_meta(obj) is not None:
            return self._wrap_device_array(obj, source)
        if isinstance(obj, np.ndarray):
            self.guard(source, "type", t)  # a new object of the same class reuses the entry
            raise self.graph_break(
                "unsupported_object",
                f"{source.name()} is a {t.__module__}.{t.__qualname__}, an ndarray subclass: "
                "tcompile traces plain ndarrays only",
                "Pass a plain array (np.asarray(...)) to the compiled function.",
            )
        if isinstance(obj, np.generic):
            self.guard(source, "type", t)
            node = self._input_node(obj, source)
            return ScalarValue(node, obj, source)
        if t is float and self.dynamic.float_is_input(source):
            self.guard(source, "type", float)  # the value is an input: any float will do
            value = SymFloat(self._input_node(obj, source), obj, source=source)
            value.inputs = (value,)
            value.guard_value = lambda: self.guard(source, "const", obj)
            return value
        if t in CONST_TYPES:
            self.guard(source, "const", obj)
            return Const(obj, source)
        if t is tuple or t is list or (isinstance(obj, tuple) and hasattr(t, "_fields")):
            self.guard(source, "type", t)
            self.guard(source, "len", len(obj))
            items = [self.wrap(item, ItemSource(source, i)) for i, item in enumerate(obj)]
            if t is list:
                return ListValue(items, source)
            return TupleValue(items, source, namedtuple=None if t is tuple else t)
        if t is dict and all(type(k) in (str, int) for k in obj):
            self.guard(source, "type", t)
            self.guard(source, "keys", tuple(obj))
            return DictValue(
                {k: self.wrap(v, ItemSource(source, k)) for k, v in obj.items()}, source
            )
        if isinstance(obj, np.dtype):
            self.guard(source, "const", obj)
            return Const(obj, source)
        if t is slice:
            self.guard(source, "const", obj)
            return Const(obj, source)
        if t is types.BuiltinMethodType and isinstance(
            obj.__self__, (np.ndarray, np.generic, list, dict, tuple, str)
        ):
            # e.g. ``x.reshape`` or ``lst.append`` left on the stack at a break: a new object
            # each call, so guard what it is bound to instead of its identity.
            owner = self.wrap(obj.__self__, AttrSource(source, "__self__"))
            if isinstance(owner, (ArrayValue, ScalarValue)):
                return ArrayMethod(owner, obj.__name__)
            return ConstMethod(owner, obj.__name__)
        if (
            t is types.MethodType
            and type(obj.__func__) is types.FunctionType
            and (is_user_function(obj.__func__) or hasattr(obj.__func__, "__tc_compiled__"))
        ):
            # A bound method is made anew on each access: guard its function and its self.
            func = self.wrap(obj.__func__, AttrSource(source, "__func__"))
            return BoundMethod(func, self.wrap(obj.__self__, AttrSource(source, "__self__")))
        if isinstance(obj, _SUPPORTED_CONTEXTS):
            # A with-block's manager handed to a resume function: a new object each call.
            self.guard(source, "type", t)
            if t is hatches.error_on_graph_break:
                self.guard(AttrSource(source, "flag"), "const", obj.flag)
            return Obj(obj, source)
        if _is_user_instance(obj):
            self.guard(source, "type", t)  # attributes are guarded through their own sources
            return UserObject(obj, source)
        self.guard(source, "id", obj)
        if hatches.is_allowed(obj) or hatches.is_disallowed(obj):
            return Obj(obj, source)  # never inlined: one opaque node, or always a break
        compiled = getattr(obj, "__tc_compiled__", None) if t is types.FunctionType else None
        if compiled is not None:  # a tc.compile wrapper met while tracing: inline what it wraps
            return function_value(compiled.fn, source, wrapper=compiled)
        if t is types.FunctionType and is_user_function(obj):
            if isinstance(source, LocalSource):
                # A function handed over in a local (e.g. a lambda passed to a resume function)
                # may be made anew on each call: guard its type and code only.
                self.guards.pop()
                self.guard(source, "type", t)
            # Its code can be replaced (f.__code__ = ...); defaults and cells are guarded where
            # the trace reads them.
            self.guard(AttrSource(source, "__code__"), "id", obj.__code__)
            return function_value(obj, source)
        if isinstance(obj, BaseException):
            # An exception about to be raised, handed to a resume function: made anew each
            # call. Its type is what matters (raising it ends the trace: the frame runs eagerly).
            self.guards.pop()
            self.guard(source, "type", t)
        return Obj(obj, source)

    def _wrap_array(self, arr: np.ndarray, source: Source) -> ArrayValue:
        dyn = self.dynamic.dims_for(source, arr.shape)
        self.guard(source, "type", np.ndarray)
        self.guard(source, "dtype", arr.dtype)
        if arr.dtype == object:
            raise self.graph_break(
                "unsupported_object",
                f"{source.name()} is an object array: its items are Python objects whose "
                "operations tcompile does not trace",
            )
        self.guard(source, "shape", tuple(None if d in dyn else s for d, s in enumerate(arr.shape)))
        node = self._input_node(arr, source)
        if dyn:  # symbolic dims are named s<dim> in the printed graph
            shape = tuple(f"s{d}" if d in dyn else n for d, n in enumerate(arr.shape))
            node.tensor = TensorMeta("array", arr.dtype, shape, None)
            node.meta = node.tensor.text()
        value = ArrayValue(node, arr, source)
        self.memory.add_input(value)
        if dyn:
            self.has_dynamic_dims = True
            value.sym_dims = tuple(
                self._input_dim(value, source, d) if d in dyn else None for d in range(arr.ndim)
            )
        return value

    def _wrap_device_array(self, obj, source: Source) -> ArrayValue:
        """A torch tensor, CuPy array... traced as the NumPy array of its data; the example is
        zeros of its dtype and shape (the data stays on its device; values never decide a
        trace: a value-dependent shape or branch is a break)."""
        dtype, shape = device_arrays.numpy_meta(obj)
        self.guard(source, "type", type(obj))
        self.guard(source, "device_array", device_arrays.guard_key(obj))
        self.guard(source, "shape", shape)
        example = np.zeros(shape, dtype)
        node = self._input_node(example, source)
        node.tensor = TensorMeta("array", dtype, shape, None,
                                 placement=device_arrays.placement(obj)[0])  # fmt: skip
        node.meta = node.tensor.text()
        value = ArrayValue(node, example, source)
        value.device = True
        self.memory.add_input(value)
        return value

    def _input_dim(self, array: ArrayValue, source: Source, dim: int) -> SymInt:
        shape = self.graph.add("call", np.shape, (array.node,), name=f"{array.node.name}_shape",
                               meta="tuple", stack=(), risk="silent")  # fmt: skip
        node = self.graph.add("getitem", None, (shape, dim), name=f"{array.node.name}_size{dim}",
                              meta="int", risk="silent")  # fmt: skip
        return SymInt(node, int(array.example.shape[dim]), frozenset({(source.name(), dim)}))

    def _input_node(self, obj: object, source: Source) -> Node:
        # Inputs come first in the graph: insert before the first non-input node.
        node = Node(self.graph, self.graph.fresh_name(source.hint()), "input", source.name(),
                    meta=describe_value(obj), tensor=TensorMeta.of(obj))  # fmt: skip
        position = sum(1 for n in self.graph.nodes if n.op == "input")
        self.graph.nodes.insert(position, node)
        self.example_inputs.append(obj)
        self.input_sources.append(source)
        self.input_nodes.append(node)
        return node

    def guard_layout(self) -> None:
        """The trace read a memory layout (strides, flags): every array input's strides and
        writeability now matter, since the layouts and flags of results follow them."""
        for source, example, node in zip(self.input_sources, self.example_inputs, self.input_nodes):
            if type(example) is np.ndarray and node.tensor.placement is None:
                self.guard(source, "strides", example.strides)
                self.guard(AttrSource(AttrSource(source, "flags"), "writeable"), "const",
                           bool(example.flags.writeable))  # fmt: skip

    # -- graph operations --------------------------------------------------------------------
    def graph_call(self, op: str, target, args: tuple, kwargs: dict, *, name: str,
                   writes: list | None = None, example_fn=None) -> Value:  # fmt: skip
        """Add ``target(*args, **kwargs)`` (or a method/attr/getitem) and return its value.

        The operation runs on the examples, writes included (see `examples.ExampleMemory`):
        ``writes`` are the arguments it writes into, found from NumPy's signatures
        (``out=``, in-place methods and functions) unless given (custom ops).
        """
        what = _op_text(op, target)
        if writes is None:
            try:
                writes = effects.written_values(op, target, args, kwargs)
            except effects.UnknownWrites:
                raise self.graph_break("unsupported_numpy", f"{what}: NumPy does not say "
                                       "whether it writes into its arguments") from None  # fmt: skip
        for w in writes:
            if not isinstance(w, ArrayValue):
                raise self.graph_break("unsupported_numpy", f"{what} writing into {w.describe()}")
        g_args, g_kwargs = as_graph_arg(self, args), as_graph_arg(self, kwargs)
        written_inputs = self._prepare_writes(writes)
        example = run_with_stand_ins(op, example_fn or target, args, kwargs, writes)
        if not writes and not effects.shape_from_meta(op, target):
            self._check_static_shape(what, op, example_fn or target, args, kwargs, example)
        node = self.graph.add(*canonicalize(op, target, g_args, g_kwargs), name=name,
                              stack=self.user_stack())  # fmt: skip
        node.mutates = bool(writes)
        node.writes_inputs = written_inputs
        node.errstate = self.errstate()
        node.risk = effects.risk(op, target, args, kwargs, dynamic=self.has_dynamic_dims)
        if node.risk == effects.FP and any(v in ("raise", "call") for _, v in node.errstate):
            node.risk = effects.RAISE  # traced inside np.errstate(...="raise")
        if op == "inplace":  # canonical form: ``np.add(a, b, out=a)``, whose value is ``a``
            example = writes[0].example
        if op == "setitem":
            return writes[0]
        node.tensor = self.tensor_meta(example)
        node.meta = node.tensor.text()
        return self.value_of(node, example, writes) if op != "inplace" else writes[0]

    def tensor_meta(self, example) -> TensorMeta:
        """The structured meta of a value computed in the graph, with the graph input whose
        memory it views, if any."""
        meta = TensorMeta.of(example, symbolic=self.has_dynamic_dims)
        if isinstance(example, np.ndarray):
            block = self.memory.block_of(example)
            if block is not None and block.inputs:
                meta = dataclasses.replace(meta, view_of=block.inputs[0][0].node.name)
        return meta

    def _check_static_shape(self, what: str, op: str, target, args, kwargs, example) -> None:
        """A result shape that follows array values is a break; one that follows a dynamic
        float argument pins that float's value instead (``np.arange(step)``)."""
        leaves = traced_leaves((args, kwargs))
        data = [v for v in leaves if not isinstance(v, SymFloat)]
        if value_dependent_shape(op, target, args, kwargs, example, data):
            raise self.graph_break(
                "data_dependent_shape", f"{what}: its output shape depends on array values",
                "Keep sizes static, or compute them outside the compiled function.",
            )  # fmt: skip
        floats = [v for v in leaves if isinstance(v, SymFloat)]
        if value_dependent_shape(op, target, args, kwargs, example, floats):
            for value in floats:
                value.pin()

    def _prepare_writes(self, writes: list) -> tuple:
        """Make the written examples private; the graph inputs whose memory gets written."""
        inputs: list = []
        for w in writes:
            block = self.memory.prepare_write(w)
            if block is None:
                continue
            for value, writeable in block.inputs:
                # the caller's flag decides whether eager code raises here (a device array
                # has no flags: it is always writeable)
                if not value.device:
                    self.guard(AttrSource(AttrSource(value.source, "flags"), "writeable"),
                               "const", writeable)  # fmt: skip
                if value.node not in inputs:
                    inputs.append(value.node)
        return tuple(inputs)

    def value_of(self, node: Node, example: object, writes=()) -> Value:
        """Wrap an operation's example result, unpacking tuples/lists of arrays into items.
        A result that *is* a written argument (``out=``) is that argument's value."""
        for w in writes:
            if example is w.example:
                return w
        if type(example) is np.ndarray:
            if example.dtype == object:
                raise self.graph_break("unsupported_object", f"{_op_text(node.op, node.target)} "
                                       "makes an object array (its items are Python objects)")  # fmt: skip
            value = ArrayValue(node, example)
            self.memory.add(value)
            return value
        if isinstance(example, np.ndarray):
            raise self.graph_break("unsupported_object", f"{_op_text(node.op, node.target)} "
                                   f"returns a {type(example).__qualname__} (an ndarray subclass)")  # fmt: skip
        if isinstance(example, np.generic):
            return ScalarValue(node, example)
        if isinstance(example, (tuple, list)) and all(
            isinstance(e, (np.ndarray, np.generic)) for e in example
        ):
            items = []
            for i, ex in enumerate(example):
                written = next((w for w in writes if w.example is ex), None)
                if written is not None:
                    items.append(written)
                    continue
                item = self.graph.add("getitem", None, (node, i), name=f"{node.name}_{i}",
                                      meta=describe_value(ex), stack=node.stack, risk="silent")  # fmt: skip
                item.tensor = self.tensor_meta(ex)
                items.append(self.value_of(item, ex))
            return TupleValue(items) if isinstance(example, tuple) else ListValue(items)
        if example is None:
            return Const(None)
        raise self.graph_break(
            "data_dependent_value",
            f"{_op_text(node.op, node.target)} returns a {type(example).__name__} computed from array data",
        )


def errstate_settings(manager: Value) -> dict:
    """The keyword arguments of an np.errstate made in the trace, or of a real one."""
    if isinstance(manager, ContextManager):
        return {k: v.value for k, v in manager.kwargs.items() if k != "call"}
    real = manager.value
    names = ("all", "divide", "over", "under", "invalid")
    return {k: getattr(real, f"_{k}") for k in names if getattr(real, f"_{k}", None) is not None}


def _context_flag(manager: Value) -> bool:
    """The flag of an error_on_graph_break manager (made in the trace, or a real object)."""
    if isinstance(manager, ContextManager):
        return bool(manager.args[0].value if manager.args else manager.kwargs["flag"].value)
    return manager.value.flag


def _op_text(op: str, target) -> str:
    if op == "method":
        return f"ndarray.{target}()"
    return getattr(target, "__name__", str(target)) + "()"


def function_value(fn: types.FunctionType, source: Source | None, wrapper=None) -> UserFunction:
    return UserFunction(
        code=fn.__code__,
        globals=fn.__globals__,
        name=fn.__name__,
        defaults=fn.__defaults__ or (),
        kwdefaults=fn.__kwdefaults__ or {},
        closure=fn.__closure__ or (),
        fn=fn,
        source=source,
        wrapper=wrapper,
    )


_OWN_DIR = os.path.dirname(os.path.abspath(__file__))
_STDLIB = tuple({sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})


def is_user_function(fn: types.FunctionType) -> bool:
    """Functions tcompile inlines: not NumPy's, not tcompile's, not the standard library's."""
    return _is_user_code(getattr(fn, "__module__", None) or "", fn.__code__.co_filename)


@functools.lru_cache(maxsize=4096)
def _is_user_code(module: str, filename: str) -> bool:
    top = module.partition(".")[0]
    if (
        top in ("numpy", "tcompile")
        or top in sys.stdlib_module_names
        or filename.startswith("<frozen")
    ):
        return False
    path = os.path.abspath(filename)
    if path.startswith(_OWN_DIR):
        return False  # tcompile's wrappers (disable, error_on_graph_break, compile)
    return not (path.startswith(_STDLIB) and "site-packages" not in path)


_SUPPORTED_CONTEXTS = (contextlib.nullcontext, np.errstate, hatches.error_on_graph_break)


def _is_user_instance(obj: object) -> bool:
    t = type(obj)
    module = getattr(t, "__module__", "") or ""
    if module.partition(".")[0] == "tcompile":
        return False  # tcompile's own objects (custom ops, nonstrict_trace wrappers) are known
    if (
        module in ("builtins", "functools")  # C objects with a __dict__ (lru_cache wrappers)
        or numpy_table.is_numpy_object(obj)
        or isinstance(obj, types.ModuleType)
    ):
        return False
    return hasattr(obj, "__dict__") and not isinstance(
        obj, (type, types.FunctionType, types.MethodType)
    )


# -- converting values to graph arguments and examples -------------------------------------


def as_graph_arg(state: TraceState, value):
    """The graph-side form of an argument: nodes for graph values, constants as they are."""

    def graph_arg(v):
        if isinstance(v, (ArrayValue, ScalarValue, SymInt, SymFloat)):
            return v.node
        if isinstance(v, Const):
            return v.value
        if isinstance(v, Obj) and _is_graph_constant(v.value):
            return v.value
        raise state.graph_break(
            "unsupported_object", f"{v.describe()} cannot be passed to a NumPy operation"
        )

    return rebuild(value, graph_arg)


def _is_graph_constant(obj: object) -> bool:
    """Objects a graph may hold as constants: dtypes, NumPy types and callables."""
    return isinstance(obj, (np.dtype, np.ufunc)) or (isinstance(obj, type) and issubclass(obj, np.generic)) \
        or obj in (float, int, bool, complex)  # fmt: skip
