"""Symbolic values: what the tracer's stack and locals hold.

Each class stands for one kind of Python value during tracing; ``source`` says where a
pre-existing value was read from (for guards and for rebuilding it after the graph runs).
Each answers, by its own methods, what the rest of the tracer asks of every value: its Python
value when it is fully known (`Value.constant`), what a graph call takes for it
(`Value.graph_arg`), and the glue's text for it after the graph ran (`Value.rebuild_text`).

  Const         an immutable Python constant known at trace time (int, str, tuple of consts...)
  Obj           a known object used by identity (module, function, class, dtype, ufunc)
  ArrayValue    an ndarray computed by (or fed into) the graph; ``example`` gives shape/dtype
  ScalarValue   a NumPy scalar (``np.float64``) computed by the graph; value unknown
  SymInt        a dynamic size (``x.shape[0]`` under dynamic shapes), graph node + hint
  SymFloat      a Python float argument that is a graph input (dynamic floats)
  TupleValue / ListValue / DictValue   containers of values
  UserFunction  a Python function to inline (with its closure cells as values)
  BoundMethod   ``self.f`` where f is a function to inline
  ArrayMethod   ``arr.sum`` before it is called
  ArrayFlags    ``arr.flags``
  UserObject    an instance of a user class (attributes read through its source)
  Iterator      iteration over known items (for loops are unrolled)
  Cell          a closure cell (made in the traced code, or standing for a real one)
  Null          the NULL of the call protocol; Unbound marks a deleted/unset local
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from types import CodeType

import numpy as np

from .graph import Node, literal_text
from .source import Source


class NotConstant(Exception):
    """`Value.constant` of a value whose Python value is not known at trace time."""


class NotGraphArgument(Exception):
    """`Value.graph_arg` of a value a graph call cannot take (it exists only while tracing)."""


class Value:
    source: Source | None = None

    def python_type(self) -> type:
        raise NotImplementedError

    def describe(self) -> str:
        return self.python_type().__name__

    def constant(self):
        """The Python value of a fully known value (constants and containers of them). A
        dynamic float is known from here on: its value gets pinned by a guard."""
        raise NotConstant(self)

    def is_constant(self) -> bool:
        """Whether `constant` would succeed, asked without pinning any dynamic float."""
        return False

    def graph_arg(self):
        """What a graph call takes in this value's place: its node, or a constant."""
        raise NotGraphArgument(self)

    def rebuild_text(self, rb) -> str:
        """Python text for this value in the glue, after the graph ran (``rb`` is the
        `glue.rebuild.Rebuilder`): the source a pre-existing object is read from (a list or
        dict read so gets its new contents replayed), else how it is made."""
        if self.source is not None:
            return self.source.expr()
        return self.made_text(rb)

    def made_text(self, rb) -> str:
        """Text making this value anew; a value that exists only while tracing has none."""
        raise rb.cannot_leave(self)


class GraphValue(Value):
    """A value the graph computes or takes as an input: ``node`` is its node."""

    node: Node

    def graph_arg(self):
        return self.node

    def rebuild_text(self, rb) -> str:
        return rb.output(self.node)


class NumpyValue(GraphValue):
    """An ndarray or NumPy scalar of the graph; ``example`` is a real value of its kind."""

    example: object


@dataclass(eq=False)
class Const(Value):
    value: object
    source: Source | None = None

    def python_type(self) -> type:
        return type(self.value)

    def describe(self) -> str:
        return repr(self.value)

    def constant(self):
        return self.value

    def is_constant(self) -> bool:
        return True

    def graph_arg(self):
        return self.value

    def rebuild_text(self, rb) -> str:
        literal = literal_text(self.value)
        return literal if literal is not None else rb.bind(self.value)


@dataclass(eq=False)
class Obj(Value):
    value: object
    source: Source | None = None

    def python_type(self) -> type:
        return type(self.value)

    def describe(self) -> str:
        name = getattr(self.value, "__qualname__", None) or getattr(self.value, "__name__", None)
        return f"{type(self.value).__name__} {name}" if name else repr(self.value)

    def constant(self):
        return self.value

    def is_constant(self) -> bool:
        return True

    def graph_arg(self):
        if _is_graph_constant(self.value):
            return self.value
        raise NotGraphArgument(self)

    def made_text(self, rb) -> str:
        return rb.bind(self.value)


@dataclass(eq=False)
class ArrayValue(NumpyValue):
    node: Node
    example: np.ndarray
    source: Source | None = None
    # For each dim: None if static, else the SymInt standing for it (graph inputs only).
    sym_dims: tuple | None = None
    device: bool = False  # a device array (torch, CuPy) traced as the NumPy array of its data

    def python_type(self) -> type:
        return np.ndarray

    def describe(self) -> str:
        return f"ndarray {self.node.meta}"


@dataclass(eq=False)
class ScalarValue(NumpyValue):
    node: Node
    example: np.generic
    source: Source | None = None

    def python_type(self) -> type:
        return type(self.example)


@dataclass(eq=False)
class SymInt(GraphValue):
    """A size known only at run time. ``deps``: the (input ArrayValue, dim) pairs it is made
    of, or None when it comes from an intermediate array (then concretising it restarts the
    trace with static shapes)."""

    node: Node
    hint: int
    deps: frozenset | None
    source: Source | None = None

    def python_type(self) -> type:
        return int


@dataclass(eq=False)
class SymFloat(GraphValue):
    """A Python float argument traced as a graph input (automatic dynamic floats), or float
    arithmetic on such inputs. NumPy calls and ``+ - * /`` keep it symbolic; any other use
    needs its value and pins the ``inputs`` it is made of with value guards (`pin`)."""

    node: Node
    hint: float
    inputs: tuple = ()  # the input SymFloats it is computed from
    source: Source | None = None
    guard_value: object = None  # inputs only: adds the guard pinning the value

    def python_type(self) -> type:
        return float

    def pin(self) -> float:
        for value in self.inputs:
            value.guard_value()
        return self.hint

    def constant(self) -> float:
        return self.pin()


@dataclass(eq=False)
class TupleValue(Value):
    items: list
    source: Source | None = None
    namedtuple: type | None = None  # the class, for namedtuple instances

    def python_type(self) -> type:
        return self.namedtuple or tuple

    def constant(self) -> tuple:
        return tuple(i.constant() for i in self.items)

    def is_constant(self) -> bool:
        return all(i.is_constant() for i in self.items)

    def rebuild_text(self, rb) -> str:
        if self.source is not None and all(_read_or_const(i) for i in self.items):
            return self.source.expr()
        inner = "".join(f"{rb.expr(i)}, " for i in self.items)
        return rb.temp(f"{rb.bind(self.namedtuple)}({inner})" if self.namedtuple else f"({inner})",
                       self)  # fmt: skip


@dataclass(eq=False)
class ListValue(Value):
    items: list
    source: Source | None = None
    mutated: bool = False

    def python_type(self) -> type:
        return list

    def constant(self) -> list:
        return [i.constant() for i in self.items]

    def is_constant(self) -> bool:
        return all(i.is_constant() for i in self.items)

    def made_text(self, rb) -> str:
        return rb.temp("[" + ", ".join(rb.expr(i) for i in self.items) + "]", self)


@dataclass(eq=False)
class DictValue(Value):
    items: dict  # constant key -> Value
    source: Source | None = None
    mutated: bool = False

    def python_type(self) -> type:
        return dict

    def constant(self) -> dict:
        return {k: i.constant() for k, i in self.items.items()}

    def is_constant(self) -> bool:
        return all(i.is_constant() for i in self.items.values())

    def made_text(self, rb) -> str:
        pairs = ", ".join(f"{rb.bind(k)}: {rb.expr(i)}" for k, i in self.items.items())
        return rb.temp("{" + pairs + "}", self)


@dataclass(eq=False)
class SetValue(Value):
    """A set made in the trace; its members are constants, kept in a real set so that
    iteration order is exactly Python's."""

    values: set

    def python_type(self) -> type:
        return set

    def constant(self) -> set:
        return self.values  # the real set: its iteration order is its own history's

    def is_constant(self) -> bool:
        return True

    def made_text(self, rb) -> str:
        # a copy of the set the trace built: same members, and (checked) the same order
        if list(self.values.copy()) != list(self.values):
            raise rb.state.graph_break("unsupported_object", "a set built in the trace cannot "
                                       "be rebuilt with its iteration order")  # fmt: skip
        return rb.temp(f"{rb.bind(self.values)}.copy()", self)


@dataclass(eq=False)
class SliceValue(Value):
    start: Value
    stop: Value
    step: Value

    def python_type(self) -> type:
        return slice

    def parts(self) -> tuple[Value, Value, Value]:
        return self.start, self.stop, self.step

    def constant(self) -> slice:
        return slice(*(p.constant() for p in self.parts()))

    def is_constant(self) -> bool:
        return all(p.is_constant() for p in self.parts())

    def made_text(self, rb) -> str:
        return f"__tc_slice({', '.join(rb.expr(p) for p in self.parts())})"


@dataclass(eq=False)
class Cell(Value):
    """A closure cell: made in the trace (``preexisting`` None), or standing for a real cell
    read through ``preexisting`` (its Source); writes to those are replayed after the graph."""

    contents: Value | None = None
    preexisting: Source | None = None
    real: bool = False

    def python_type(self) -> type:
        return types.CellType

    def made_text(self, rb) -> str:
        return rb.cell(self)


@dataclass(eq=False)
class UserFunction(Value):
    """A Python function the tracer inlines. ``fn`` is the real function when it pre-exists;
    functions made by MAKE_FUNCTION inside the trace have ``fn=None`` and their pieces here."""

    code: CodeType
    globals: dict
    name: str
    defaults: tuple = ()
    kwdefaults: dict = field(default_factory=dict)
    closure: tuple = ()  # of Cell (made in the trace) or Value-producing callables
    fn: object = None
    source: Source | None = None
    wrapper: object = None  # the tc.compile wrapper it was reached through, if any

    def python_type(self) -> type:
        return types.FunctionType

    def describe(self) -> str:
        return f"function {self.code.co_qualname}"

    def made_text(self, rb) -> str:
        if self.fn is not None:
            return rb.bind(self.fn)
        return rb.temp(rb.function_text(self), self)


@dataclass(eq=False)
class BoundMethod(Value):
    func: Value
    self_value: Value
    source: Source | None = None

    def python_type(self) -> type:
        return types.MethodType

    def made_text(self, rb) -> str:
        method = rb.bind(types.MethodType)
        return rb.temp(f"{method}({rb.expr(self.func)}, {rb.expr(self.self_value)})", self)


@dataclass(eq=False)
class ArrayMethod(Value):
    """``arr.name`` (or a NumPy scalar's method) before it is called."""

    self_value: Value
    name: str

    def python_type(self) -> type:
        return type(np.zeros(0).sum)

    def made_text(self, rb) -> str:
        return f"{rb.expr(self.self_value)}.{self.name}"


@dataclass(eq=False)
class ArrayFlags(Value):
    """``arr.flags``: read from the example's flags; writes become ``arr.setflags(...)``."""

    array: Value

    def python_type(self) -> type:
        return type(np.zeros(0).flags)

    def describe(self) -> str:
        return f"flags of {self.array.describe()}"

    def made_text(self, rb) -> str:
        return f"{rb.expr(self.array)}.flags"


@dataclass(eq=False)
class ConstMethod(Value):
    """A method of a known immutable constant or container, e.g. ``"a,b".split``."""

    self_value: Value
    name: str

    def python_type(self) -> type:
        return type("".split)

    def made_text(self, rb) -> str:
        return f"{rb.expr(self.self_value)}.{self.name}"


@dataclass(eq=False)
class UserObject(Value):
    """A user-class instance: pre-existing (``value`` and ``source``), or constructed in the
    trace (``new_cls`` set, ``value`` None: all its attributes live in ``overlay``)."""

    value: object
    source: Source | None = None
    overlay: dict = field(default_factory=dict)  # attributes written during the trace
    new_cls: type | None = None
    mutated: bool = False  # attributes written (a pre-existing object)

    @property
    def cls(self) -> type:
        return self.new_cls if self.new_cls is not None else type(self.value)

    def python_type(self) -> type:
        return self.cls

    def describe(self) -> str:
        return f"{self.cls.__qualname__} object"

    def rebuild_text(self, rb) -> str:
        if self.new_cls is None:
            return self.source.expr()
        name = rb.temp(f"__tc_new_object({rb.bind(self.new_cls)})", self)
        attrs = ", ".join(f"{a!r}: {rb.expr(x)}" for a, x in self.overlay.items())
        rb.prelude.append(f"{name}.__dict__.update({{{attrs}}})")
        return name


@dataclass(eq=False)
class Iterator(Value):
    items: list
    position: int = 0

    def python_type(self) -> type:
        return type(iter(()))


@dataclass(eq=False)
class SuperValue(Value):
    """``super()`` inside a method: attribute lookups start after ``cls`` in self's MRO."""

    cls: type
    self_value: Value

    def python_type(self) -> type:
        return super


@dataclass(eq=False)
class ContextManager(Value):
    """A context manager object made in the trace (``np.errstate(...)``, ``nullcontext()``)."""

    cls: type
    args: list
    kwargs: dict

    def python_type(self) -> type:
        return self.cls

    def describe(self) -> str:
        return f"{self.cls.__qualname__}()"

    def made_text(self, rb) -> str:
        args = [rb.expr(a) for a in self.args] + [
            f"{k}={rb.expr(a)}" for k, a in self.kwargs.items()
        ]
        return rb.temp(f"{rb.bind(self.cls)}({', '.join(args)})", self)


@dataclass(eq=False)
class ContextExit(Value):
    """The ``__exit__`` a supported with-block pushed: calling it leaves the block."""

    manager: Value
    owner: object = None  # for a user-defined manager: the translator whose block it closes

    def python_type(self) -> type:
        return types.FunctionType

    def describe(self) -> str:
        return f"exit of {self.manager.describe()}"


class NullValue(Value):
    def describe(self) -> str:
        return "NULL"


class UnboundValue(Value):
    def describe(self) -> str:
        return "<unbound>"


NULL = NullValue()
UNBOUND = UnboundValue()


def _read_or_const(v: Value) -> bool:
    """Read from a source, or a constant: a container of only those can be re-read as is."""
    return v.source is not None or isinstance(v, Const)


def _is_graph_constant(obj: object) -> bool:
    """Objects a graph may hold as constants: dtypes, NumPy types and callables."""
    return isinstance(obj, (np.dtype, np.ufunc)) or (isinstance(obj, type) and issubclass(obj, np.generic)) \
        or obj in (float, int, bool, complex)  # fmt: skip


# -- walking arguments: Python containers and container values hold the leaves ------------------


def leaves(obj) -> list:
    """Every value inside ``obj`` that is not a container (tuples, lists, dicts, slices, and
    their symbolic counterparts)."""
    if isinstance(obj, (tuple, list)):
        return [leaf for item in obj for leaf in leaves(item)]
    if isinstance(obj, dict):
        return leaves(list(obj.values()))
    if isinstance(obj, (TupleValue, ListValue, DictValue)):
        return leaves(obj.items)
    if isinstance(obj, SliceValue):
        return leaves([obj.start, obj.stop, obj.step])
    return [obj]


def rebuild(obj, leaf):
    """``obj`` as plain Python containers, with ``leaf(v)`` in place of each leaf value."""
    if isinstance(obj, (TupleValue, tuple)):
        return tuple(rebuild(v, leaf) for v in (obj.items if isinstance(obj, TupleValue) else obj))
    if isinstance(obj, ListValue):
        return [rebuild(v, leaf) for v in obj.items]
    if isinstance(obj, (DictValue, dict)):
        items = obj.items if isinstance(obj, DictValue) else obj
        return {k: rebuild(v, leaf) for k, v in items.items()}
    if isinstance(obj, SliceValue):
        return slice(*(rebuild(v, leaf) for v in (obj.start, obj.stop, obj.step)))
    return leaf(obj)
