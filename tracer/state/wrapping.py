"""How objects that exist before the call enter a trace: `Inputs.wrap` turns an object read
from a source (an argument, a global, an attribute or item of those) into a symbolic value,
adds the guards that make the trace valid for it, and makes arrays, NumPy scalars and dynamic
ints and floats graph inputs. A mutable object reached through two sources is one value."""

from __future__ import annotations

import types
from dataclasses import dataclass, field

import numpy as np

from .. import hatches
from ..ir import device_arrays
from ..ir.node import Node, TensorMeta, describe_value
from ..ir.static_lookup import static_lookup, subclass_of
from ..user_code import is_user_function, is_user_instance
from ..values.arrays import (
    ArrayMethod,
    ArrayValue,
    NumpyValue,
    ScalarValue,
    SymFloat,
    SymInt,
    SymStr,
)
from ..values.containers import ConstMethod, DictValue, ListValue, PreexistingList, TupleValue
from ..values.core import Const, Obj, Value
from ..values.functions import UserFunction
from ..values.objects import BoundMethod, Opaque, UserObject
from ..values.source import AttrSource, GlobalSource, ItemSource, LocalSource, Source
from . import contexts
from .guard_list import GuardList

CONST_TYPES = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis), range, frozenset)


@dataclass
class DynamicPolicy:
    """Which dims of which inputs are traced as symbolic sizes."""

    all_dims: bool = False  # dynamic=True
    marked: dict[str, set[int]] = field(default_factory=dict)  # source name -> dims
    force_static: bool = False
    numbers: frozenset = frozenset()  # source names of Python ints/floats traced as graph inputs

    def number_is_input(self, source: Source) -> bool:
        return not self.force_static and (self.all_dims or source.name() in self.numbers)

    def dims_for(self, source: Source, shape: tuple) -> set[int]:
        if self.force_static:
            return set()
        dims = set(range(len(shape))) if self.all_dims else self.marked.get(source.name(), set())
        return {d for d in dims if d < len(shape) and shape[d] >= 2}  # sizes 0 and 1 stay static


class DaskSizes:
    """Small example sizes for Dask arrays' dims: a trace computes on examples, and a Dask
    array may not fit in this process. Sizes of 2 and more are symbolic in the trace; their
    examples keep the order of the real sizes (equal sizes get equal examples: ``x + y`` of
    equal shapes broadcasts as it will), sizes 0 and 1 are their own."""

    def __init__(self):
        self.examples: dict[int, int] = {}  # real size -> its example size
        self.sources: set[str] = set()

    def prepare(self, arrays) -> None:
        """Example sizes for the dims of ``arrays`` (a call's Dask arguments), in order."""
        for size in sorted({n for a in arrays for n in a.shape if n >= 2}):
            self.examples.setdefault(size, len(self.examples) + 2)

    def example_shape(self, source: Source, shape: tuple) -> tuple:
        self.sources.add(source.name())
        for n in shape:  # a Dask array not among the arguments (a global): equal sizes equal
            if n >= 2:
                self.examples.setdefault(n, len(self.examples) + 2)
        return tuple(self.examples[n] if n >= 2 else n for n in shape)


class Inputs:
    """The values read from sources so far, and the graph inputs among them (``nodes``, with
    their ``sources`` and example ``examples``, in the order the graph takes them)."""

    def __init__(self, state, dynamic: DynamicPolicy, guards: GuardList, array_kinds: frozenset):
        self.state = state  # the TraceState: its graph, memory and breaks
        self.dynamic = dynamic
        self.guards = guards
        self.array_kinds = array_kinds  # the backend runs on these (torch, Dask...) as they are
        self.examples: list = []
        self.sources: list[Source] = []
        self.nodes: list[Node] = []
        self.has_dynamic_dims = False
        self.has_dask = False  # a Dask array is among the inputs (`graph_calls.writes_dask`)
        self.dask_sizes = DaskSizes()
        self._wrapped: dict[str, Value] = {}
        self._mutables: dict[int, tuple] = {}  # id -> (object, its value): lists, dicts, objects

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

    def _items(self, obj, source: Source) -> list[Value]:
        """A list's or tuple's items, wrapped, with the guard on their number."""
        self.guards.add(source, "len", len(obj))
        return [self.wrap(item, ItemSource(source, i)) for i, item in enumerate(obj)]

    def _shared(self, obj: object, source: Source) -> Value | None:
        """A mutable object reached through two sources (an argument that is also a global,
        a list holding one list twice) is one value: writes through one are seen through the
        other. The aliasing is guarded."""
        known = self._mutables.get(id(obj))
        if known is None or known[0] is not obj:
            return None
        self.guards.add(source, "alias", (known[1].source, True))
        return known[1]

    def guard_mutable_aliasing(self) -> None:
        """Mutable objects the trace wrote are assumed distinct from the others of their type
        it read: a later call passing one object twice must not reuse this entry."""
        values = [v for _, v in self._mutables.values()]
        for written in (v for v in values if v.mutated):
            for other in values:
                if other is not written and other.python_type() is written.python_type():
                    self.guards.add(written.source, "alias", (other.source, False))

    def _wrap(self, obj: object, source: Source) -> Value:
        """The value of ``obj``, asked of each family in turn (the order matters: an ndarray
        before any object, a number read as an input before a constant, a user's function
        before any object known by identity)."""
        t = type(obj)
        for family in (self._wrap_numpy, self._wrap_data, self._wrap_method, self._wrap_known):
            value = family(obj, source, t)
            if value is not None:
                return value
        return self._wrap_by_identity(obj, source, t)

    def _wrap_numpy(self, obj: object, source: Source, t: type) -> Value | None:
        """Arrays and NumPy scalars; device and Dask arrays, where the backend takes them."""
        if t is np.ndarray:
            return self._wrap_array(obj, source)
        if (
            self.array_kinds
            and device_arrays.array_kind(obj) in self.array_kinds
            and device_arrays.numpy_meta(obj) is not None
        ):
            return self._wrap_device_array(obj, source)
        # What the object is, asked of its type: isinstance() would read obj.__class__, which
        # may be the user's code (a property, __getattribute__) and must run only when theirs does
        if subclass_of(t, (np.ndarray,)):
            self.guards.add(source, "type", t)  # a new object of the same class reuses the entry
            raise self.state.graph_break(
                "unsupported_object",
                f"{source.name()} is a {t.__module__}.{t.__qualname__}, an ndarray subclass: "
                "tcompile traces plain ndarrays only",
                "Pass a plain array (np.asarray(...)) to the compiled function.",
            )
        if subclass_of(t, (np.generic,)):
            self.guards.add(source, "type", t)
            node = self._input_node(obj, source)
            return ScalarValue(node, obj, source)
        return None

    def _wrap_data(self, obj: object, source: Source, t: type) -> Value | None:
        """Numbers and text (inputs of the graph once seen with a second value), constants,
        lists, tuples, dicts, dtypes and slices."""
        if (t is float or (t is int and -(2**63) <= obj < 2**63)) and self.dynamic.number_is_input(
            source
        ):
            return self._input_number(obj, source)
        if t is str and self.dynamic.number_is_input(source):
            return self._input_text(obj, source)
        if t in CONST_TYPES or t is slice or subclass_of(t, (np.dtype,)):
            self.guards.add(source, "const", obj)
            return Const(obj, source)
        if t is list:
            self.guards.add(source, "type", t)
            return PreexistingList(source, lambda: self._items(obj, source))
        if t is tuple or (subclass_of(t, (tuple,)) and static_lookup(t, "_fields") is not None):
            self.guards.add(source, "type", t)
            items = self._items(obj, source)
            return TupleValue(items, source, namedtuple=None if t is tuple else t)
        if t is dict and all(type(k) in (str, int) for k in obj):
            self.guards.add(source, "type", t)
            self.guards.add(source, "keys", tuple(obj))
            return DictValue(
                {k: self.wrap(v, ItemSource(source, k)) for k, v in obj.items()}, source
            )
        return None

    def _wrap_method(self, obj: object, source: Source, t: type) -> Value | None:
        """A bound method, made anew on each access: guard what it is bound to, not its
        identity."""
        if t is types.BuiltinMethodType and subclass_of(
            type(obj.__self__), (np.ndarray, np.generic, list, dict, tuple, str)
        ):
            # e.g. ``x.reshape`` or ``lst.append`` left on the stack at a break
            owner = self.wrap(obj.__self__, AttrSource(source, "__self__"))
            if isinstance(owner, NumpyValue):
                return ArrayMethod(owner, obj.__name__)
            return ConstMethod(owner, obj.__name__)
        if (
            t is types.MethodType
            and type(obj.__func__) is types.FunctionType
            and (is_user_function(obj.__func__) or hasattr(obj.__func__, "__tc_compiled__"))
        ):
            func = self.wrap(obj.__func__, AttrSource(source, "__func__"))
            return BoundMethod(func, self.wrap(obj.__self__, AttrSource(source, "__self__")))
        return None

    def _wrap_known(self, obj: object, source: Source, t: type) -> Value | None:
        """Context managers, the user's objects, and objects only passed along."""
        if subclass_of(t, contexts.SUPPORTED):
            # A with-block's manager handed to a resume function: a new object each call.
            self.guards.add(source, "type", t)
            if t is hatches.error_on_graph_break:
                self.guards.add(AttrSource(source, "flag"), "const", obj.flag)
            return Obj(obj, source)
        if is_user_instance(obj):
            self.guards.add(source, "type", t)  # attributes are guarded through their own sources
            return UserObject(obj, source)
        if isinstance(source, LocalSource) and not _known_by_identity(obj) \
                and not subclass_of(t, (BaseException,)):  # fmt: skip
            self.guards.add(source, "type", t)
            return Opaque(t, source)
        return None

    def _wrap_by_identity(self, obj: object, source: Source, t: type) -> Value:
        """Anything else, guarded by identity: functions (the user's, inlined; tc.compile
        wrappers, what they wrap), the escape hatches, exceptions, modules, classes..."""
        self.guards.add(source, "id", obj)
        if hatches.is_allowed(obj) or hatches.is_disallowed(obj):
            return Obj(obj, source)  # never inlined: one opaque node, or always a break
        compiled = getattr(obj, "__tc_compiled__", None) if t is types.FunctionType else None
        if compiled is not None:  # a tc.compile wrapper met while tracing: inline what it wraps
            return function_value(compiled.fn, source, wrapper=compiled)
        if t is types.FunctionType and is_user_function(obj):
            # A function may be made anew on each call (a lambda handed to a resume function,
            # a builtin or global replaced by a new lambda each time): guard what inlining it
            # reads of it, not its identity. Its code (replaceable: f.__code__ = ...) and its
            # globals here; its defaults, cells and names where the trace reads them.
            self.guards.drop_last()
            self.guards.add(source, "type", t)
            self.guards.add(AttrSource(source, "__code__"), "id", obj.__code__)
            self.guards.add(AttrSource(source, "__globals__"), "id", obj.__globals__)
            return function_value(obj, source)
        if subclass_of(t, (BaseException,)):
            # An exception about to be raised, handed to a resume function: made anew each
            # call. Its type is what matters (raising it ends the trace: the frame runs eagerly).
            self.guards.drop_last()
            self.guards.add(source, "type", t)
        return Obj(obj, source)

    def _wrap_array(self, arr: np.ndarray, source: Source) -> ArrayValue:
        dyn = self.dynamic.dims_for(source, arr.shape)
        self.guards.add(source, "type", np.ndarray)
        self.guards.add(source, "dtype", arr.dtype)
        if arr.dtype == object:
            raise self.state.graph_break(
                "unsupported_object",
                f"{source.name()} is an object array: its items are Python objects whose "
                "operations tcompile does not trace",
            )
        self.guards.add(
            source, "shape", tuple(None if d in dyn else s for d, s in enumerate(arr.shape))
        )
        node = self._input_node(arr, source)
        if dyn:  # symbolic dims are named s<dim> in the printed graph
            shape = tuple(f"s{d}" if d in dyn else n for d, n in enumerate(arr.shape))
            node.tensor = TensorMeta("array", arr.dtype, shape, None)
            node.meta = node.tensor.text()
        value = ArrayValue(node, arr, source)
        self.state.memory.add_input(value)
        if dyn:
            self.has_dynamic_dims = True
            value.sym_dims = tuple(
                self._input_dim(value, source, d) if d in dyn else None for d in range(arr.ndim)
            )
        return value

    def _wrap_device_array(self, obj, source: Source) -> ArrayValue:
        """A torch tensor, CuPy array... traced as the NumPy array of its data; the example is
        zeros of its dtype and shape (the data stays on its device; values never decide a
        trace: a value-dependent shape or branch is a break). A Dask array's dims are
        symbolic, its example small (`DaskSizes`): it may not fit in this process."""
        dtype, shape = device_arrays.numpy_meta(obj)
        kind = device_arrays.placement(obj)[0]
        self.guards.add(source, "type", type(obj))
        self.guards.add(source, "device_array", device_arrays.guard_key(obj))
        if kind == "dask":
            return self._wrap_dask_array(obj, source, dtype, shape)
        self.guards.add(source, "shape", shape)
        example = np.zeros(shape, dtype)
        node = self._input_node(example, source)
        node.tensor = TensorMeta("array", dtype, shape, None, placement=kind)
        node.meta = node.tensor.text()
        value = ArrayValue(node, example, source)
        value.device = True
        self.state.memory.add_input(value)
        return value

    def _wrap_dask_array(self, obj, source: Source, dtype, shape: tuple) -> ArrayValue:
        dyn = {d for d, n in enumerate(shape) if n >= 2}  # sizes 0 and 1 stay static
        self.guards.add(
            source, "shape", tuple(None if d in dyn else n for d, n in enumerate(shape))
        )
        example = np.zeros(self.dask_sizes.example_shape(source, shape), dtype)
        node = self._input_node(example, source)
        node.tensor = TensorMeta("array", dtype, tuple(f"s{d}" if d in dyn else n
                                                       for d, n in enumerate(shape)),
                                 None, placement="dask", chunks=obj.chunks)  # fmt: skip
        node.meta = node.tensor.text()
        value = ArrayValue(node, example, source)
        value.device = True
        self.has_dask = self.has_dynamic_dims = True
        self.state.memory.add_input(value)
        value.sym_dims = tuple(
            self._input_dim(value, source, d) if d in dyn else None for d in range(len(shape))
        )
        return value

    def _input_number(self, obj: int | float, source: Source) -> SymInt | SymFloat:
        """A Python int or float argument seen with a second value: a graph input, so that
        any value of its type reuses the entry (an int: within int64's range, where NumPy
        gives it one dtype), until the trace needs it as a Python number (a branch, a size,
        a slice bound): then a value guard pins it."""
        self.guards.add(source, "int64" if type(obj) is int else "type", type(obj))
        node = self._input_node(obj, source)

        def pin():
            self.guards.add(source, "const", obj)

        if type(obj) is int:
            return SymInt(node, obj, frozenset(), source=source, on_concrete=(pin,))
        return SymFloat.leaf(node, obj, pin, source)

    def _input_text(self, obj: str, source: Source) -> SymStr:
        """A str seen with a second value: a graph input (no recompile per text: a progress
        message an f-string made before a break), until a use needs its value (pinned)."""
        self.guards.add(source, "type", str)
        node = self._input_node(obj, source)
        return SymStr(node, obj, (lambda: self.guards.add(source, "const", obj),), source)

    def _input_dim(self, array: ArrayValue, source: Source, dim: int) -> SymInt:
        graph = self.state.root_graph
        shape = graph.add("call", np.shape, (array.node,), name=f"{array.node.name}_shape",
                          meta="tuple", stack=(), risk="silent")  # fmt: skip
        node = graph.add("getitem", None, (shape, dim), name=f"{array.node.name}_size{dim}",
                         meta="int", risk="silent")  # fmt: skip
        return SymInt(node, int(array.example.shape[dim]), frozenset({(source.name(), dim)}),
                      at_least=2)  # the shape guard's "s>=2"  # fmt: skip

    def wrapped_values(self) -> list[Value]:
        """Every value read from a source so far."""
        return list(self._wrapped.values())

    def _input_node(self, obj: object, source: Source) -> Node:
        # Inputs come first in the frame's graph (also while a loop body is traced into a graph
        # of its own: the body reads them as values from before the loop).
        graph = self.state.root_graph
        node = Node(graph, graph.fresh_name(source.hint()), "input", source.name(),
                    meta=describe_value(obj), tensor=TensorMeta.of(obj))  # fmt: skip
        position = sum(1 for n in graph.nodes if n.op == "input")
        graph.nodes.insert(position, node)
        self.examples.append(obj)
        self.sources.append(source)
        self.nodes.append(node)
        return node

    def guard_layout(self) -> None:
        """The trace read a memory layout (strides, flags): every array input's strides and
        writeability now matter, since the layouts and flags of results follow them."""
        self.state.note_layout_read()
        for source, example, node in zip(self.sources, self.examples, self.nodes):
            if type(example) is np.ndarray and node.tensor.placement is None:
                self.guards.add(source, "strides", example.strides)
                self.guards.add(AttrSource(AttrSource(source, "flags"), "writeable"), "const",
                           bool(example.flags.writeable))  # fmt: skip

    def specialize_dim(self, source_name: str, dim: int) -> None:
        """A dynamic input dim was used as a Python int: guard its exact size from now on. A
        Dask array's dim cannot be (its example is smaller than it): that is a break."""
        if source_name in self.dask_sizes.sources:
            raise self.state.graph_break("dask_size", f"the size of dim {dim} of "
                                         f"{source_name} is needed as a Python int here")  # fmt: skip
        for source, example in zip(self.sources, self.examples):
            if source.name() == source_name:
                self.guards.specialize_dim(source_name, dim, int(example.shape[dim]))
                return

    def global_source_for(self, fn) -> object:
        """Source maker for globals read by an inlined function ``fn``."""
        if fn.globals is self.state.root_globals:
            return GlobalSource
        if fn.source is None:
            return None
        base = AttrSource(fn.source, "__globals__")
        return lambda name: ItemSource(base, name)


def _known_by_identity(obj) -> bool:
    """Modules, classes and callables: objects that live on from call to call, which the
    trace may read (attributes, calls) once it has guarded their identity. Any other object
    a local holds may be made anew on every call (`Opaque`), and so is a method bound to an
    object (``buf.append`` of an ``array.array``), a new one on every read."""
    t = type(obj)  # asked of the type: a user's __class__ property never runs for this
    if subclass_of(t, (types.BuiltinMethodType, types.MethodType, types.MethodWrapperType)):
        return isinstance(obj.__self__, types.ModuleType)  # a builtin function: len, print
    return subclass_of(t, (types.ModuleType, type)) or callable(obj)


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
