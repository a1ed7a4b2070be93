"""The semantics protocol: what one family of symbolic values does under Python's operations
(a `Semantics`), registered by value class and found along a value's MRO, so that a new kind
of value is one new module; and Python's rule that picks the operand a binary operator asks.
"""

from __future__ import annotations

import operator

from ..state.trace_state import TraceState
from ..values.core import NotConstant, Value
from .folding import fold, python_int


class Semantics:
    """One family's semantics. ``binary`` returns NotImplemented for what it leaves to the
    other operand; every other method's default is what a value of no family gets: folded
    where it is a constant, else a graph break."""

    rank = 0  # who answers a binary operator first: the higher (`binary`)
    symbolic_index = False  # takes a dynamic int as an index as it is; else it is pinned first

    def binary(self, state: TraceState, fn, a: Value, b: Value, name: str, reflected: bool):
        """``a <op> b``, asked of ``b``'s family when ``reflected``, else of ``a``'s."""
        return NotImplemented

    def unary(self, state: TraceState, fn, v: Value, name: str) -> Value:
        try:
            return fold(state, fn, python_int(state, v))
        except NotConstant:
            raise state.graph_break(
                "unsupported_object", f"unary {name} on {v.describe()}"
            ) from None

    def truth(self, state: TraceState, v: Value) -> bool:
        raise state.graph_break("unsupported_object", f"truth value of {v.describe()}")

    def get_attr(self, state: TraceState, v: Value, name: str, tx) -> Value:
        raise state.graph_break("unsupported_object", f"attribute {name!r} of {v.describe()}")

    def get_item(self, state: TraceState, obj: Value, index: Value, tx) -> Value:
        try:
            return fold(state, operator.getitem, obj.constant(), index.constant())
        except NotConstant:
            raise state.graph_break(
                "unsupported_object", f"indexing {obj.describe()} with {index.describe()}"
            ) from None

    def set_item(self, state: TraceState, obj: Value, index: Value, value: Value) -> None:
        raise state.graph_break("unsupported_mutation", f"item assignment on {obj.describe()}")

    def iterate(self, state: TraceState, v: Value, taker: bool, loop: bool) -> list[Value]:
        """The items a for loop over ``v`` sees (`operations.iterate`)."""
        raise state.graph_break("unsupported_object", f"iterating over {v.describe()}")

    def call(self, tx, fn: Value, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """``fn(*args, **kwargs)`` in the translator ``tx``, which inlines, puts NumPy into the
        graph or breaks (its `interpreter.calls` methods do the work)."""
        raise tx.state.graph_break("unsupported_call", f"calling {fn.describe()}")


_DEFAULT = Semantics()
_REGISTRY: dict[type, Semantics] = {}


def register(*classes: type):
    """Class decorator: an instance of the decorated `Semantics` answers for values of
    ``classes`` and of their subclasses (unless one of those has its own)."""

    def decorate(semantics: type[Semantics]) -> type[Semantics]:
        instance = semantics()
        for cls in classes:
            _REGISTRY[cls] = instance
        return semantics

    return decorate


def semantics_of(v: Value) -> Semantics:
    """The semantics registered for the nearest class in ``v``'s MRO."""
    for cls in type(v).__mro__:
        found = _REGISTRY.get(cls)
        if found is not None:
            return found
    return _DEFAULT


def _first(left: Semantics, right: Semantics) -> bool:
    """Whether the right operand's family answers first: it outranks the left's (as NumPy's
    ``__array_priority__`` makes ``list + ndarray`` an array), or ranks the same and
    specialises it (Python's rule: a subclass's reflected method goes first)."""
    if right.rank != left.rank:
        return right.rank > left.rank
    return type(right) is not type(left) and isinstance(right, type(left))


def binary(state: TraceState, fn, a: Value, b: Value, name: str, below: int | None = None):
    """``a <op> b`` for an ``operator`` function (``operator.iadd`` for ``+=``): the left
    operand's family, then the right's reflected (`_first` may swap them; one family is asked
    once), NotImplemented passing on; where both pass, constants fold. ``below``: only
    families ranked below it are asked (one that has pinned its operands asks the rest)."""
    left, right = semantics_of(a), semantics_of(b)
    asked = [(left, False), (right, True)]
    if _first(left, right):
        asked.reverse()
    for semantics, reflected in asked[: 1 if left is right else 2]:
        if below is None or semantics.rank < below:
            result = semantics.binary(state, fn, a, b, name, reflected)
            if result is not NotImplemented:
                return result
    try:
        return fold(state, fn, a.constant(), b.constant())
    except NotConstant:
        raise state.graph_break(
            "unsupported_object", f"operator {name!r} on {a.describe()} and {b.describe()}"
        ) from None
