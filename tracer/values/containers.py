"""Python containers built or read in the trace (tuples, lists, dicts, sets, slices), their
methods before a call (``"a,b".split``), iterators over known items, and the walk over
arguments that reaches the values inside containers (`leaves`, `rebuild`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .core import Const, Value, birth
from .source import Source


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
class MutableContainer(Value):
    """A list or dict value: its ``items`` (values; for a dict, constant keys -> values), the
    source it was read from if it existed before the call, and whether the trace changed it."""

    items: object
    source: Source | None = None
    mutated: bool = False
    born: int = field(default_factory=birth, repr=False)

    def members(self) -> list:
        raise NotImplementedError

    def is_constant(self) -> bool:
        return all(i.is_constant() for i in self.members())


@dataclass(eq=False)
class ListValue(MutableContainer):
    def members(self) -> list:
        return self.items

    def python_type(self) -> type:
        return list

    def constant(self) -> list:
        return [i.constant() for i in self.items]

    def made_text(self, rb) -> str:
        return rb.temp("[" + ", ".join(rb.expr(i) for i in self.items) + "]", self)


class PreexistingList(ListValue):
    """A list made before the call, read lazily. Appending needs nothing of its items: appends
    alone are replayed as ``lst.extend([...])``, with no guard on its length or contents (a
    list that grows on every call, or every iteration of a split loop, keeps its compiled
    entry). Any other use reads it: ``read_items()`` wraps its items, with their guards, and
    what was appended follows them."""

    def __init__(self, source: Source, read_items):
        self._items, self.appended, self._read_items = None, [], read_items
        super().__init__(None, source)

    @property
    def items(self) -> list:
        if self._items is None:
            self._items = self._read_items() + self.appended
            self.appended = None
        return self._items

    @items.setter
    def items(self, value) -> None:
        if value is not None:  # None: the dataclass __init__'s, before anything was read
            self._items = value

    @property
    def unread(self) -> bool:
        return self._items is None


@dataclass(eq=False)
class DictValue(MutableContainer):
    def members(self) -> list:
        return list(self.items.values())

    def python_type(self) -> type:
        return dict

    def constant(self) -> dict:
        return {k: i.constant() for k, i in self.items.items()}

    def made_text(self, rb) -> str:
        pairs = ", ".join(f"{rb.bind(k)}: {rb.expr(i)}" for k, i in self.items.items())
        return rb.temp("{" + pairs + "}", self)


@dataclass(eq=False)
class SetValue(Value):
    """A set made in the trace; its members are constants, kept in a real set so that
    iteration order is exactly Python's."""

    values: set
    born: int = field(default_factory=birth, repr=False)

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

    def parts(self) -> tuple[Value, Value, Value]:
        return self.start, self.stop, self.step

    def python_type(self) -> type:
        return slice

    def constant(self) -> slice:
        return slice(*(p.constant() for p in self.parts()))

    def is_constant(self) -> bool:
        return all(p.is_constant() for p in self.parts())

    def made_text(self, rb) -> str:
        return f"__tc_slice({', '.join(rb.expr(p) for p in self.parts())})"


@dataclass(eq=False)
class RangeValue(Value):
    """``range(start, stop, step)`` with a symbolic ``start`` or ``stop`` (a dynamic int
    argument, or made from the index of the loop whose body is traced): a loop over it can be
    a loop node whose trip count is computed in the graph. ``numbers`` is the range at trace
    time; any other use needs the numbers, which pins them."""

    numbers: range
    start: Value | None
    stop: Value | None

    def python_type(self) -> type:
        return range

    def parts(self) -> tuple:
        r = self.numbers
        return (self.start or Const(r.start), self.stop or Const(r.stop), Const(r.step))

    def describe(self) -> str:
        return f"range({', '.join(p.describe() for p in self.parts())})"

    def constant(self) -> range:
        for part in self.parts():
            part.constant()
        return self.numbers

    def made_text(self, rb) -> str:
        return f"range({', '.join(rb.expr(p) for p in self.parts())})"


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
class Iterator(Value):
    """Iteration over known items (a loop over them is unrolled), or, where ``origin`` says
    how its k-th item is made, a loop that can be captured whole (`tracer.loops`)."""

    items: list  # the items made so far (all of them, once ``pending`` is None)
    position: int = 0
    origin: object = None
    pending: object = None  # makes all the items, if they were left to make
    peeled: str = ""  # why the loop's first iteration was unrolled before capturing the rest
    # zip, enumerate, map or filter took it (`operations.take`): it is theirs, as they make
    # their items all at once, and any other use breaks the graph
    taken: bool = False
    born: int = field(default_factory=birth, repr=False)

    def known_items(self) -> list:
        """The items, made now if they were left to make (a loop that is unrolled after all);
        those made already stay (a peeled first iteration used them)."""
        if self.pending is not None:
            made, self.pending = self.pending(), None
            self.items = self.items + made[len(self.items) :]
        return self.items

    def untouched(self) -> bool:
        """No item was taken from it yet, nor made."""
        return self.position == 0 and not self.items and self.pending is not None

    def python_type(self) -> type:
        return type(iter(()))

    def describe(self) -> str:
        return "an iterator"  # not tuple_iterator: the model's type, not the user's

    def made_text(self, rb) -> str:
        """A fresh iterator whose ``origin`` says what it iterates is that made anew (a loop
        left to run in Python starts it: `loops.split_loop`), with the iterators it took from."""
        if self.origin is None or self.position or self.items or self.taken:
            raise rb.cannot_leave(self)
        # one iterator, however many places hold it (``zip(e, e)``)
        return rb.temp(f"{rb.bind(iter)}({self.origin.iterable_text(rb)})", self)


def _read_or_const(v: Value) -> bool:
    """Read from a source, or a constant: a container of only those can be re-read as is."""
    return v.source is not None or isinstance(v, Const)


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
