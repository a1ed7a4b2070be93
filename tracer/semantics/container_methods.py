"""Methods of containers and constants known to the trace: ``lst.append(x)``, ``d.get(k)``,
``s.add(x)``, ``"a,b".split(",")``. Lists and dicts are modelled item by item (a mutation of a
pre-existing one is replayed after the graph); sets and constants run the real method on their
real values."""

from __future__ import annotations

import numpy as np

from ..errors import UserErrorInTrace
from ..values.containers import (
    ConstMethod,
    DictValue,
    Iterator,
    ListValue,
    PreexistingList,
    SetValue,
    TupleValue,
)
from ..values.core import Const, NotConstant, Value
from .folding import const_to_value, fold, mutate_list, python_int
from .operations import iterate

_PURE_CONST_TYPES = (str, bytes, int, float, complex, tuple, range, np.dtype, bool, type(None))


def call_const_method(tx, method: ConstMethod, args: list[Value], kwargs: dict) -> Value:
    owner, name = method.self_value, method.name
    if isinstance(owner, ListValue):
        return _list_method(tx, owner, name, args, kwargs)
    if isinstance(owner, DictValue):
        return _dict_method(tx, owner, name, args, kwargs)
    if isinstance(owner, SetValue):
        return _set_method(tx, owner, name, args, kwargs)
    if isinstance(owner, TupleValue) and name in ("index", "count"):
        return fold(tx.state, getattr(owner.constant(), name), *(a.constant() for a in args))
    try:
        value = owner.constant()
        const_args = [a.constant() for a in args]
        const_kwargs = {k: v.constant() for k, v in kwargs.items()}
    except NotConstant:
        raise tx.state.graph_break(
            "unsupported_call", f"{type(owner).__name__}.{name}() on traced values"
        ) from None
    if isinstance(value, _PURE_CONST_TYPES):
        return fold(tx.state, getattr(value, name), *const_args, **const_kwargs)
    raise tx.state.graph_break("unsupported_call", f"method {name}() of {owner.describe()}")


def _list_method(tx, lst: ListValue, name: str, args, kwargs) -> Value:
    if name == "append" and isinstance(lst, PreexistingList) and lst.unread:
        mutate_list(tx.state, lst)
        lst.appended.append(args[0])
        return Const(None)
    items = lst.items
    if name in ("index", "count", "copy", "__len__"):
        if name == "copy":
            return ListValue(list(items))
        return fold(tx.state, getattr([i.constant() for i in items], name),
                    *(a.constant() for a in args))  # fmt: skip
    mutate_list(tx.state, lst)
    if name == "append":
        items.append(args[0])
    elif name == "extend":
        items.extend(iterate(tx.state, args[0]))
    elif name == "insert":
        items.insert(python_int(tx.state, args[0]), args[1])
    elif name == "pop":
        index = python_int(tx.state, args[0]) if args else -1
        if not items:
            raise UserErrorInTrace(IndexError("pop from empty list"))
        return items.pop(index)
    elif name == "clear":
        items.clear()
    elif name == "reverse":
        items.reverse()
    elif name == "remove":
        target = args[0].constant()
        for i, item in enumerate(items):
            if item.is_constant() and item.constant() == target:
                del items[i]
                break
        else:
            raise UserErrorInTrace(ValueError("list.remove(x): x not in list"))
    else:
        raise tx.state.graph_break("unsupported_call", f"list.{name}()")
    return Const(None)


def _set_method(tx, owner: SetValue, name: str, args, kwargs) -> Value:
    """Methods of a set made in the trace run on its real set of constants."""
    result = fold(tx.state, getattr(owner.values, name), *(a.constant() for a in args),
                  **{k: v.constant() for k, v in kwargs.items()})  # fmt: skip
    return result


def _dict_method(tx, d: DictValue, name: str, args, kwargs) -> Value:
    items = d.items
    if name == "get":
        return items.get(args[0].constant(), args[1] if len(args) > 1 else Const(None))
    if name == "keys":
        return Iterator([const_to_value(k) for k in items])
    if name == "values":
        return Iterator(list(items.values()))
    if name == "items":
        return Iterator([TupleValue([const_to_value(k), v]) for k, v in items.items()])
    if name == "copy":
        return DictValue(dict(items))
    if name == "__contains__":
        return Const(args[0].constant() in items)
    mutate_list(tx.state, d)
    if name == "update":
        other = args[0] if args else DictValue({})
        if not isinstance(other, DictValue):
            raise tx.state.graph_break("unsupported_call", "dict.update() with a non-dict")
        items.update(other.items)
        items.update(kwargs)
        return Const(None)
    if name == "setdefault":
        return items.setdefault(args[0].constant(), args[1] if len(args) > 1 else Const(None))
    if name == "pop":
        key = args[0].constant()
        if key in items:
            return items.pop(key)
        if len(args) > 1:
            return args[1]
        raise UserErrorInTrace(KeyError(key))
    if name == "clear":
        items.clear()
        return Const(None)
    raise tx.state.graph_break("unsupported_call", f"dict.{name}()")
