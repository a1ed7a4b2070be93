"""Containers made or read in the trace: tuples, lists, dicts, sets, ranges and iterators over
known items; their operators, items and truth are known at trace time (loops over them are
unrolled)."""

from __future__ import annotations

import operator

import numpy as np

from ..errors import UserErrorInTrace
from ..ir import operators
from ..state.trace_state import TraceState
from ..values.containers import (
    ConstMethod,
    DictValue,
    Iterator,
    ListValue,
    RangeValue,
    SetValue,
    TupleValue,
)
from ..values.core import Const, NotConstant, Value
from .folding import const_to_value, fixed_trip_count, fold, mutate_list, python_int
from .protocol import Semantics, register, semantics_of


class ContainerSemantics(Semantics):
    def truth(self, state, v):
        return bool(v.items)

    def get_attr(self, state, v, name, tx):
        return ConstMethod(v, name)


class SequenceSemantics(ContainerSemantics):
    rank = 20  # below numbers: ``lst * n`` pins ``n`` first

    def binary(self, state, fn, a, b, name, reflected):
        return sequence_op(state, operators.plain(fn), a, b)

    def get_item(self, state, obj, index, tx):
        key = index.constant() if index.is_constant() else None
        if isinstance(key, slice):
            return _sequence_like(obj, obj.items[key])
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool | np.bool_):
            try:
                return obj.items[key]
            except IndexError as error:
                raise UserErrorInTrace(error) from error
        return super().get_item(state, obj, index, tx)

    def iterate(self, state, v, taker, loop):
        return list(v.items)


@register(TupleValue)
class TupleSemantics(SequenceSemantics):
    def get_attr(self, state, v, name, tx):
        if v.namedtuple is not None:
            if name in v.namedtuple._fields:
                return v.items[v.namedtuple._fields.index(name)]
            if not callable(getattr(v.namedtuple, name, None)):
                return fold(state, getattr, v.namedtuple, name)
        return super().get_attr(state, v, name, tx)


@register(ListValue)
class ListSemantics(SequenceSemantics):
    def binary(self, state, fn, a, b, name, reflected):
        if reflected or fn not in (operator.iadd, operator.imul):
            return super().binary(state, fn, a, b, name, reflected)
        # in place, like list.__iadd__/__imul__: every alias of the list sees it
        if fn is operator.iadd:
            items = a.items + semantics_of(b).iterate(state, b, False, False)
        else:
            try:
                items = a.items * python_int(state, b)
            except TypeError as error:
                raise UserErrorInTrace(error) from error
        mutate_list(state, a)
        a.items[:] = items
        return a

    def set_item(self, state, obj, index, value):
        if not index.is_constant():
            return super().set_item(state, obj, index, value)
        mutate_list(state, obj)
        try:
            obj.items[index.constant()] = value
        except (IndexError, TypeError) as error:
            raise UserErrorInTrace(error) from error


@register(DictValue)
class DictSemantics(ContainerSemantics):
    def get_item(self, state, obj, index, tx):
        if not index.is_constant():
            return super().get_item(state, obj, index, tx)
        key = index.constant()
        if key not in obj.items:
            raise UserErrorInTrace(KeyError(key))
        return obj.items[key]

    def set_item(self, state, obj, index, value):
        if not index.is_constant():
            return super().set_item(state, obj, index, value)
        mutate_list(state, obj)
        obj.items[index.constant()] = value

    def iterate(self, state, v, taker, loop):
        return [const_to_value(k) for k in v.items]


@register(SetValue)
class SetSemantics(ContainerSemantics):
    def truth(self, state, v):
        return bool(v.values)

    def iterate(self, state, v, taker, loop):
        return [Const(i) for i in v.values]


@register(RangeValue)
class RangeSemantics(Semantics):
    def iterate(self, state, v, taker, loop):
        if loop:
            for part in (v.start, v.stop):
                fixed_trip_count(state, part, v.describe())
        known = Const(range(*(python_int(state, part) for part in v.parts())))  # unrolled
        return semantics_of(known).iterate(state, known, taker, loop)


@register(Iterator)
class IteratorSemantics(Semantics):
    def truth(self, state, v):
        return True

    def iterate(self, state, v, taker, loop):
        if not taker:
            check_untaken(state, v)
        items = v.known_items()[v.position :]
        v.position = len(v.items)
        return items


def _sequence_like(seq: Value, items: list) -> Value:
    """A new tuple or list value (a list read from an argument makes a plain list value)."""
    return TupleValue(items) if isinstance(seq, TupleValue) else ListValue(items)


def sequence_op(state: TraceState, fn, a: Value, b: Value) -> Value:
    if fn is operator.add and any(
        isinstance(a, k) and isinstance(b, k) for k in (TupleValue, ListValue)
    ):
        if isinstance(a, TupleValue) and not (a.items and b.items):
            return b if not a.items else a  # CPython returns the non-empty tuple itself
        return _sequence_like(a, list(a.items) + list(b.items))
    if fn is operator.mul:
        seq, count = (a, b) if isinstance(a, (TupleValue, ListValue)) else (b, a)
        n = python_int(state, count)
        if isinstance(seq, TupleValue) and n == 1:
            return seq  # CPython returns the tuple itself
        return _sequence_like(seq, list(seq.items) * n)
    if fn in (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge):
        try:
            return fold(state, fn, a.constant(), b.constant())
        except NotConstant:
            pass
    raise state.graph_break(
        "unsupported_object", f"{fn.__name__} on {a.describe()} and {b.describe()}"
    )


def take(state: TraceState, v: Value) -> None:
    """``v`` becomes the source of zip, enumerate, map or filter: an iterator is theirs from
    now on (`check_untaken`)."""
    if isinstance(v, Iterator):
        check_untaken(state, v)
        v.taken = True


def check_untaken(state: TraceState, it: Iterator) -> None:
    """An iterator that zip, enumerate, map or filter took is not advanced apart from them:
    they take all its items at once, where Python takes them one by one (``zip(it, it)``,
    ``next(z)`` during ``for i, x in enumerate(z)``)."""
    if it.taken:
        raise state.graph_break("unsupported_object", "an iterator that zip, enumerate, map or "
                                "filter takes items from, used on its own too")  # fmt: skip
