"""Symbolic values: what the tracer's stack and locals hold.

Each class stands for one kind of Python value during tracing; ``source`` says where a
pre-existing value was read from (for guards and for rebuilding it after the graph runs).

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
  Cell          a closure cell created in the traced code
  Null          the NULL of the call protocol; Unbound marks a deleted/unset local
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import CodeType

import numpy as np

from .graph import Node
from .source import Source


class Value:
    source: Source | None = None

    def python_type(self) -> type:
        raise NotImplementedError

    def describe(self) -> str:
        return self.python_type().__name__


@dataclass(eq=False)
class Const(Value):
    value: object
    source: Source | None = None

    def python_type(self) -> type:
        return type(self.value)

    def describe(self) -> str:
        return repr(self.value)


@dataclass(eq=False)
class Obj(Value):
    value: object
    source: Source | None = None

    def python_type(self) -> type:
        return type(self.value)

    def describe(self) -> str:
        name = getattr(self.value, "__qualname__", None) or getattr(self.value, "__name__", None)
        return f"{type(self.value).__name__} {name}" if name else repr(self.value)


@dataclass(eq=False)
class ArrayValue(Value):
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
class ScalarValue(Value):
    node: Node
    example: np.generic
    source: Source | None = None

    def python_type(self) -> type:
        return type(self.example)


@dataclass(eq=False)
class SymInt(Value):
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
class SymFloat(Value):
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


@dataclass(eq=False)
class TupleValue(Value):
    items: list
    source: Source | None = None
    namedtuple: type | None = None  # the class, for namedtuple instances

    def python_type(self) -> type:
        return self.namedtuple or tuple


@dataclass(eq=False)
class ListValue(Value):
    items: list
    source: Source | None = None
    mutated: bool = False

    def python_type(self) -> type:
        return list


@dataclass(eq=False)
class DictValue(Value):
    items: dict  # constant key -> Value
    source: Source | None = None
    mutated: bool = False

    def python_type(self) -> type:
        return dict


@dataclass(eq=False)
class SetValue(Value):
    """A set made in the trace; its members are constants, kept in a real set so that
    iteration order is exactly Python's."""

    values: set

    def python_type(self) -> type:
        return set


@dataclass(eq=False)
class SliceValue(Value):
    start: Value
    stop: Value
    step: Value

    def python_type(self) -> type:
        return slice


@dataclass(eq=False)
class Cell(Value):
    """A closure cell: made in the trace (``preexisting`` None), or standing for a real cell
    read through ``preexisting`` (its Source); writes to those are replayed after the graph."""

    contents: Value | None = None
    preexisting: Source | None = None
    real: bool = False

    def python_type(self) -> type:
        return type(Cell)


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
        return type(lambda: None)

    def describe(self) -> str:
        return f"function {self.code.co_qualname}"


@dataclass(eq=False)
class BoundMethod(Value):
    func: Value
    self_value: Value
    source: Source | None = None

    def python_type(self) -> type:
        return type(Value().describe)


@dataclass(eq=False)
class ArrayMethod(Value):
    """``arr.name`` (or a NumPy scalar's method) before it is called."""

    self_value: Value
    name: str

    def python_type(self) -> type:
        return type(np.zeros(0).sum)


@dataclass(eq=False)
class ArrayFlags(Value):
    """``arr.flags``: read from the example's flags; writes become ``arr.setflags(...)``."""

    array: Value

    def python_type(self) -> type:
        return type(np.zeros(0).flags)

    def describe(self) -> str:
        return f"flags of {self.array.describe()}"


@dataclass(eq=False)
class ConstMethod(Value):
    """A method of a known immutable constant or container, e.g. ``"a,b".split``."""

    self_value: Value
    name: str

    def python_type(self) -> type:
        return type("".split)


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


@dataclass(eq=False)
class ContextExit(Value):
    """The ``__exit__`` a supported with-block pushed: calling it leaves the block."""

    manager: Value
    owner: object = None  # for a user-defined manager: the translator whose block it closes

    def python_type(self) -> type:
        return type(lambda: None)

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
