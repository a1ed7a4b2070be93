"""Python builtins on symbolic values.

``BUILTINS`` maps a builtin to its handler ``(tx, args, kwargs) -> Value``. Builtins not listed
here are graph breaks (``print``, ``open``, ``input`` as I/O; ``exec``/``eval``/``locals``
as dynamic code; anything else as an unsupported call).
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .. import user_text
from ..errors import UserErrorInTrace
from ..values.arrays import ArrayValue, NumpyValue, ScalarValue, SymInt
from ..values.containers import DictValue, Iterator, ListValue, RangeValue, SliceValue, TupleValue
from ..values.core import Const, Obj, Value
from ..values.objects import SuperValue, UserObject
from . import iteration, user_objects
from .arrays import array_dims
from .containers import check_untaken, take
from .folding import fold, python_int
from .numbers import array_number, array_text, number_conversion, number_text
from .operations import binary_op, iterate, unary_op

IO_BUILTINS = {builtins.print, builtins.open, builtins.input, builtins.breakpoint, builtins.help}
DYNAMIC_CODE_BUILTINS = {builtins.exec, builtins.eval, builtins.locals, builtins.vars, builtins.globals,
                         builtins.compile, builtins.__import__}  # fmt: skip


def _len(tx, args, kwargs):
    (v,) = args
    if isinstance(v, (TupleValue, ListValue)):
        return Const(len(v.items))
    if isinstance(v, DictValue):
        return Const(len(v.items))
    if isinstance(v, ArrayValue):
        if v.example.ndim == 0:
            raise UserErrorInTrace(TypeError("len() of unsized object"))
        return array_dims(tx.state, v)[0]
    if isinstance(v, UserObject):
        return tx.call(tx.special_method(v, "__len__"), [], {})
    return fold(tx.state, len, v.constant())


def _range(tx, args, kwargs):
    """A range; one whose stop is a dynamic int argument or an input's dynamic dim
    (``range(len(x))``), or whose bounds are made from the index of the loop whose body is
    traced (``for j in range(i, n)``), or read from arrays there (a CSR row's
    ``range(indptr[i], indptr[i + 1])``), or from the ints of a split loop's body (which change
    on every iteration), stays symbolic for a loop node or a loop run split (with a constant
    step, either way); any other use needs the numbers (pins them)."""
    watch = tx.state.loop_watch
    if watch is not None and tx.state.loop_nodes:
        args = tuple(_int_of_data(tx, a) for a in args)
    start, stop, step = [Const(0), *args, Const(1)][:3] if len(args) == 1 else [*args, Const(1)][:3]

    def symbolic(v: Value, argument_ok: bool) -> bool:
        follows = watch is not None and (watch.follows_index(v) or _from_data(v))
        if not isinstance(v, SymInt):
            return False
        given = v.source is not None or v.at_least > 0  # an argument, or an input's dim
        return follows or tx.state.per_iteration or (argument_ok and given)

    known = [v for v in (start, stop, step) if isinstance(v, Const) and type(v.value) is int]
    constant_step = step in known and step.value != 0
    # its lower bound and its upper one (``range(n - 1, -1, -1)``: -1 and n - 1)
    lower, upper = (start, stop) if not constant_step or step.value > 0 else (stop, start)
    if (
        tx.state.loop_nodes
        and constant_step
        and (symbolic(lower, False) or symbolic(upper, isinstance(lower, Const)))
        and all(v in known or symbolic(v, True) for v in (start, stop))
    ):  # fmt: skip
        numbers = range(
            *(v.hint if isinstance(v, SymInt) else v.value for v in (start, stop, step))
        )
        return RangeValue(numbers, *(v if isinstance(v, SymInt) else None for v in (start, stop)))
    return Const(range(*(python_int(tx.state, a) for a in args)))


def _int_of_data(tx, value: Value) -> Value:
    """An integer NumPy scalar of the graph (``indptr[i]``) as the Python int of the graph it
    stands for in a range (`numbers.array_number`); anything else as it is."""
    if not (isinstance(value, NumpyValue) and np.ndim(value.example) == 0
            and np.asarray(value.example).dtype.kind in "iu"):  # fmt: skip
        return value

    def needed():
        raise tx.state.graph_break("data_dependent_value", f"{_as_written(tx, 'a range')} "
                                   "bound read from an array is needed as a Python int")  # fmt: skip

    return array_number(tx.state, int, [value], {}, needed) or value


def _from_data(value: Value) -> bool:
    """An int of the graph made by ``int()`` of array data (its value changes from one
    iteration of the captured loop to the next, as its index's does)."""
    return isinstance(value, SymInt) and value.node.op == "call" and value.node.target is int


def _items_of(tx, v):
    return iterate(tx.state, v)


def _taken_items(tx, v):
    return iterate(tx.state, v, taker=True)


def _zip(tx, args, kwargs):
    strict = kwargs["strict"].constant() if "strict" in kwargs else False
    inners = [iteration.items_of(tx.state, a) for a in args]
    for a in args:
        take(tx.state, a)
    origin = iteration.ZipItems(tuple(inners)) if args and None not in inners else None
    if origin is not None and strict and len({i.count for i in inners}) > 1:
        origin = None  # let the items raise as zip does

    def items():
        columns = [_taken_items(tx, a) for a in args]
        if strict and len({len(c) for c in columns}) > 1:
            raise UserErrorInTrace(ValueError("zip() arguments have different lengths"))
        return [TupleValue(list(row)) for row in zip(*columns)]

    return iteration.iterator(tx.state, origin, items)


def _enumerate(tx, args, kwargs):
    start = python_int(tx.state, args[1] if len(args) > 1 else kwargs.get("start", Const(0)))
    inner = iteration.items_of(tx.state, args[0])
    take(tx.state, args[0])
    origin = iteration.EnumerateItems(start, inner) if inner is not None else None
    return iteration.iterator(
        tx.state,
        origin,
        lambda: [
            TupleValue([Const(start + i), v]) for i, v in enumerate(_taken_items(tx, args[0]))
        ],
    )


def _reversed(tx, args, kwargs):
    if isinstance(args[0], Iterator):
        raise UserErrorInTrace(TypeError("an iterator is not reversible"))
    return Iterator(list(reversed(_items_of(tx, args[0]))))


def _iter(tx, args, kwargs):
    if isinstance(args[0], Iterator):
        return args[0]  # an iterator's iter is itself
    return Iterator(_items_of(tx, args[0]))


def _next(tx, args, kwargs):
    it = args[0]
    if not isinstance(it, Iterator):
        raise tx.state.graph_break(
            "unsupported_object",
            f"{_as_written(tx, 'next()')} reads an iterator made outside the compiled function "
            f"({it.describe()}), which tcompile cannot read without using it up",
            "Rewrite the function to take a list or a tuple instead of an iterator (call it as "
            "f(list(xs)), then read xs[0], xs[1]), or call next() before calling it.",
        )
    check_untaken(tx.state, it)
    if it.position >= len(it.known_items()):
        if len(args) > 1:
            return args[1]
        raise UserErrorInTrace(StopIteration())
    tx.state.note_mutation(it)
    it.position += 1
    return it.items[it.position - 1]


def _container(kind):
    def build(tx, args, kwargs):
        items = _items_of(tx, args[0]) if args else []
        return TupleValue(items) if kind is tuple else ListValue(items)

    return build


def _dict(tx, args, kwargs):
    items: dict = {}
    if args:
        source = args[0]
        if isinstance(source, DictValue):
            items.update(source.items)
        else:
            for pair in _items_of(tx, source):
                key, value = _items_of(tx, pair)
                items[key.constant()] = value
    items.update(kwargs)
    return DictValue(items)


def _minmax(fn):
    def handle(tx, args, kwargs):
        items = _items_of(tx, args[0]) if len(args) == 1 else list(args)
        key = kwargs.pop("key", None)
        if key is not None and not (isinstance(key, Const) and key.value is None):
            keys = [tx.call(key, [i], {}).constant() for i in items]
            if not items:
                return kwargs["default"] if "default" in kwargs else fold(tx.state, fn, [])
            return items[keys.index(fn(keys))]
        if any(isinstance(i, NumpyValue) or isinstance(i, SymInt) for i in items):
            if kwargs:
                raise tx.state.graph_break(
                    "unsupported_call", f"{fn.__name__}() with key= on traced values"
                )
            values = [python_int(tx.state, i) if isinstance(i, SymInt) else i for i in items]
            if _scalars_of_one_dtype(values) and tx.state.loop_watch is not None:
                return _python_extreme(tx, fn, values)
            if any(isinstance(v, NumpyValue) for v in values):
                raise tx.state.graph_break(
                    "data_dependent_branch", f"{fn.__name__}() compares array values in Python",
                    f"Use np.{'maximum' if fn is max else 'minimum'} or np.{fn.__name__}() instead.",
                )  # fmt: skip
            items = [Const(v) if not isinstance(v, Value) else v for v in values]
        return fold(
            tx.state,
            fn,
            [i.constant() for i in items],
            **{k: v.constant() for k, v in kwargs.items()},
        )

    return handle


def _scalars_of_one_dtype(values: list) -> bool:
    """NumPy scalars of one dtype: whichever ``max`` picks, its type is known. (Only in a loop
    body being captured as a loop node: a loop unrolled around one would grow a select per
    iteration, where splitting the loop at the break costs what Python's ``max`` does.)"""
    dtypes = {v.example.dtype for v in values if isinstance(v, ScalarValue)}
    return len(values) > 1 and len(dtypes) == 1 and all(isinstance(v, ScalarValue) for v in values)


def _python_extreme(tx, fn, values: list) -> Value:
    """``max(a, b, ...)`` of NumPy scalars of one dtype as a node of the graph calling Python's
    own ``max``: each item replaces the one kept so far where it compares greater (``min``:
    less), so the first of equal items is kept and a NaN only where it comes first
    (``max(nan, 1.0)`` is nan, ``max(1.0, nan)`` is 1.0). No branch on the values: a loop
    around it stays one loop node."""
    return tx.state.graph_call("call", fn, tuple(values), {}, name=fn.__name__)


def _abs(tx, args, kwargs):
    return unary_op(tx.state, operator.abs, args[0], "abs")


def _sum(tx, args, kwargs):
    items = _items_of(tx, args[0])
    total = args[1] if len(args) > 1 else kwargs.get("start", Const(0))
    for item in items:
        total = binary_op(tx.state, operator.add, total, item, "sum")
    return total


def _sorted(tx, args, kwargs):
    items = _items_of(tx, args[0])
    key = kwargs.get("key")
    keys = [tx.call(key, [i], {}).constant() for i in items] if key is not None and not (
        isinstance(key, Const) and key.value is None) else [i.constant() for i in items]  # fmt: skip
    reverse = kwargs.get("reverse", Const(False)).constant()
    order = sorted(range(len(items)), key=keys.__getitem__, reverse=reverse)
    return ListValue([items[i] for i in order])


def _as_written(tx, what: str) -> str:
    """The call as the user wrote it (``int(x.sum())``), or ``what`` it does."""
    written = tx.written()
    return f"`{written}`" if written else what


def _scalar_conversion(kind):
    def handle(tx, args, kwargs):
        if args and (isinstance(args[0], NumpyValue)):
            what = _as_written(tx, f"{kind.__name__}() of {args[0].describe()}")

            def needed():
                raise tx.state.graph_break(
                    "data_dependent_value", f"{what} turns array data into a Python "
                    f"{kind.__name__}, needed here as a Python value")  # fmt: skip

            number = array_number(tx.state, kind, args, kwargs, needed)
            if number is not None:
                return number
            needed()
        converted = number_conversion(tx.state, kind, list(args)) if args and not kwargs else None
        if converted is not None:
            return converted
        if args and isinstance(args[0], SymInt) and kind is int and args[0].python_type() is int:
            return args[0]  # a size
        return fold(tx.state, kind, *(python_int(tx.state, a) for a in args))

    return handle


def _formatted(tx, what: str) -> str:
    """What is being formatted, as the user wrote it: an f-string's field (``{y.sum()}``), a
    call (``str(y)``); else ``what``."""
    inst = tx.current
    if inst is not None and inst.opname in ("FORMAT_VALUE", "CONVERT_VALUE"):
        has_spec = inst.opname == "FORMAT_VALUE" and inst.arg[1]
        inner = user_text.value_at(tx.code, inst.offset, 1 if has_spec else 0)
        if inner:
            return f"the f-string field {{{inner}}}"
    return _as_written(tx, what)


def text(tx, fn, args: list, kwargs: dict) -> Value:
    """``fn(*args, **kwargs)`` for ``fn`` one of str, repr, ascii, format (f-strings too): a
    dynamic number's text is the graph's (`operations.number_text`), other text a constant."""
    if args and isinstance(args[0], NumpyValue):
        what = _formatted(tx, f"{fn.__name__}() of {args[0].describe()}")
        made = array_text(tx.state, fn, list(args), what) if not kwargs else None
        if made is not None:
            return made
        raise tx.state.graph_break(
            "data_dependent_value",
            f"{what} formats array data as text",
            "Format and print outside the compiled function: return the value (or keep it in an "
            "array) and make the text where the function is called.",
        )
    made = number_text(tx.state, fn, list(args)) if args and not kwargs else None
    if made is not None:
        return made
    return fold(tx.state, fn, *(python_int(tx.state, a) for a in args),
                **{k: v.constant() for k, v in kwargs.items()})  # fmt: skip


def _text(fn):
    return lambda tx, args, kwargs: text(tx, fn, args, kwargs)


def _slice(tx, args, kwargs):
    parts = list(args) + [Const(None)] * (3 - len(args))
    if len(args) == 1:
        parts = [Const(None), args[0], Const(None)]
    if all(p.is_constant() for p in parts):
        return Const(slice(*(p.constant() for p in parts)))
    return SliceValue(*parts)


def _type(tx, args, kwargs):
    (v,) = args
    if isinstance(v, UserObject):
        return Obj(v.cls)
    return Obj(type(v.example) if isinstance(v, NumpyValue) else v.python_type())


def _getattr(tx, args, kwargs):
    obj, name = args[0], args[1].constant()
    if len(args) == 3:
        try:
            return tx.get_attr(obj, name)
        except UserErrorInTrace as error:
            if isinstance(error.error, AttributeError):
                return args[2]
            raise
    return tx.get_attr(obj, name)


def _hasattr(tx, args, kwargs):
    try:
        tx.get_attr(args[0], args[1].constant())
        return Const(True)
    except UserErrorInTrace as error:
        if isinstance(error.error, AttributeError):
            return Const(False)
        raise


def _callable(tx, args, kwargs):
    v = args[0]
    if isinstance(v, (Const, Obj)) or (isinstance(v, UserObject) and v.new_cls is None):
        return Const(callable(v.value))
    # callable(x) asks whether x's type defines __call__
    return Const(any("__call__" in vars(t) for t in v.python_type().__mro__))


def _divmod_pow_round(fn):
    def handle(tx, args, kwargs):
        if any(isinstance(a, NumpyValue) for a in args):
            return tx.state.graph_call("call", fn, tuple(args), kwargs, name=fn.__name__)
        converted = number_conversion(tx.state, fn, list(args)) if args and not kwargs else None
        if converted is not None:
            return converted
        return fold(
            tx.state,
            fn,
            *(python_int(tx.state, a) for a in args),
            **{k: v.constant() for k, v in kwargs.items()},
        )

    return handle


def _any_all(fn):
    def handle(tx, args, kwargs):
        items = _items_of(tx, args[0])
        if any(isinstance(i, NumpyValue) for i in items):
            raise tx.state.graph_break("data_dependent_value", f"{fn.__name__}() over array values in Python",
                                       f"Use np.{fn.__name__}() on an array instead.")  # fmt: skip
        return Const(fn(tx.truth(i) for i in items))

    return handle


def _map(tx, args, kwargs):
    fn, *iterables = args
    if not iterables:
        raise UserErrorInTrace(TypeError("map() must have at least two arguments."))
    for iterable in iterables:
        take(tx.state, iterable)
    columns = [_taken_items(tx, it) for it in iterables]
    return Iterator([tx.call(fn, list(row), {}) for row in zip(*columns)])


def _filter(tx, args, kwargs):
    fn, iterable = args
    take(tx.state, iterable)
    items = _taken_items(tx, iterable)
    keep = [
        i
        for i in items
        if tx.truth(i if isinstance(fn, Const) and fn.value is None else tx.call(fn, [i], {}))
    ]
    return Iterator(keep)


def _super(tx, args, kwargs):
    if args:
        return SuperValue(args[0].constant(), args[1])
    return tx.zero_arg_super()


BUILTINS = {
    super: _super,
    len: _len,
    range: _range,
    zip: _zip,
    enumerate: _enumerate,
    reversed: _reversed,
    iter: _iter,
    next: _next,
    tuple: _container(tuple),
    list: _container(list),
    dict: _dict,
    min: _minmax(min),
    max: _minmax(max),
    abs: _abs,
    sum: _sum,
    sorted: _sorted,
    int: _scalar_conversion(int),
    float: _scalar_conversion(float),
    bool: _scalar_conversion(bool),
    complex: _scalar_conversion(complex),
    **{fn: _text(fn) for fn in (str, repr, ascii, format)},
    slice: _slice,
    type: _type,
    getattr: _getattr,
    hasattr: _hasattr,
    callable: _callable,
    divmod: _divmod_pow_round(divmod),
    pow: _divmod_pow_round(pow),
    round: _divmod_pow_round(round),
    any: _any_all(any),
    all: _any_all(all),
    map: _map,
    filter: _filter,
}
BUILTINS.update(user_objects.HANDLERS)  # isinstance, issubclass, object.__getattribute__...
for _pure in (hash, ord, chr, bin, hex, oct, frozenset, set):
    BUILTINS[_pure] = lambda tx, args, kwargs, _fn=_pure: fold(
        tx.state, _fn, *(a.constant() for a in args), **{k: v.constant() for k, v in kwargs.items()}
    )
# Pure functions of the math module, folded when every argument is a constant.
MATH_FUNCTIONS = {id(getattr(math, n)) for n in dir(math) if callable(getattr(math, n))}
