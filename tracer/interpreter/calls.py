"""Calls: inlining user functions, NumPy calls into the graph, builtins, and breaks for the rest.

Mixed into `Translator`; ``self`` is the translator of the calling frame.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
import types

import numpy as np

from .. import hatches, markers
from ..bytecode import signature
from ..errors import UserErrorInTrace
from ..ir import numpy_table as table
from ..ir import operators, quiet
from ..ir.static_lookup import protocol_hook
from ..semantics import folding, iteration, objects, user_objects
from ..semantics import operations as ops
from ..semantics.builtins_impl import BUILTINS, DYNAMIC_CODE_BUILTINS, IO_BUILTINS, MATH_FUNCTIONS
from ..semantics.container_methods import call_const_method
from ..semantics.protocol import semantics_of
from ..state import contexts, data_sizes
from ..user_code import GENERATOR_FLAGS, name_of
from ..values.arrays import ArrayMethod, ArrayValue, NumpyValue, SymInt
from ..values.containers import ConstMethod, DictValue, TupleValue
from ..values.core import Const, Obj, Value
from ..values.functions import ContextManager, UserFunction
from ..values.objects import UserObject
from ..values.source import AttrSource, ItemSource
from .nonstrict import NonstrictRunner

MAX_INLINE_DEPTH = 48
_LRU_CACHE_WRAPPER = type(functools.lru_cache(lambda: None))
# Context managers that survive graph breaks: made as values, entered by BEFORE_WITH.


class CallMixin:
    def call(self, fn: Value, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """``fn(*args, **kwargs)``, as the semantics of ``fn``'s family say (`protocol.call`)."""
        return semantics_of(fn).call(self, fn, args, kwargs)

    def call_const_method(self, fn: ConstMethod, args: list[Value], kwargs: dict) -> Value:
        """A method of a container or constant the trace knows (``lst.append(x)``)."""
        return call_const_method(self, fn, args, kwargs)

    def special_method(self, v: UserObject, name: str) -> Value:
        """The method an implicit call of ``v`` runs (``len(v)``, ``v[i]``, ``v()``)."""
        return user_objects.special_method(self, v, name)

    # -- user functions -------------------------------------------------------------------------
    def inline(self, fn: UserFunction, args: list[Value], kwargs: dict[str, Value]) -> Value:
        code = fn.code
        if code.co_flags & GENERATOR_FLAGS:
            raise self.state.graph_break(
                "generator", f"call to generator/coroutine function {code.co_qualname}"
            )
        if self.depth >= MAX_INLINE_DEPTH:
            raise self.state.graph_break(
                "recursion_limit", f"inlining deeper than {MAX_INLINE_DEPTH} calls"
            )
        bound = bind_arguments(self, fn, args, kwargs)
        closure_source = AttrSource(fn.source, "__closure__") if fn.source is not None else None

        def cell_source(index, name):
            return None if closure_source is None else ItemSource(closure_source, index)

        global_source = getattr(fn, "global_source", None) or self.state.inputs.global_source_for(
            fn
        )
        child = type(self)(self.state, code, fn.globals, global_source, bound, {}, cell_source,
                           closure=fn.closure, parent=self)  # fmt: skip
        # A tc.compile(fullgraph=True) function inlined here keeps its promise: it breaks nowhere.
        forced = getattr(fn.wrapper, "fullgraph", False)
        with self.state.breaks.forced(forced):
            return child.run()

    # -- escape hatches and settings (tracer/hatches.py) ----------------------------------------
    def call_hatch(self, fn_value: Obj, args: list[Value], kwargs: dict) -> Value | None:
        """Calls of tcompile's own markers and wrapped functions; None for anything else."""
        state, fn = self.state, fn_value.value
        if fn in (hatches.allow_in_graph, hatches.disallow_in_graph) and len(args) == 1:
            real = self._hatch_target(args[0], f"{fn.__name__}()")
            fn(real)  # registering is harmless at trace time, and the eager run repeats it
            return Obj(real)
        if fn is hatches.skip_frame:
            raise state.graph_break("skip_frame", "tc.skip_frame() was called")
        if _hashable(fn) and hatches.is_disallowed(fn):
            raise state.graph_break(
                "unsupported_call", f"{_name(fn)} is marked tc.disallow_in_graph"
            )
        setting = _marker(fn, "__tc_error_on_graph_break__")
        if setting is not None:
            inner = state.wrap(setting[1], ItemSource(AttrSource(fn_value.source, "__tc_error_on_graph_break__"), 1)) \
                if fn_value.source is not None else folding.wrap_unguarded(state, setting[1])  # fmt: skip
            with state.breaks.setting(setting[0]):
                return self.call(inner, args, kwargs)
        if _marker(fn, "__tc_disabled__") is not None:
            raise state.graph_break(
                "unsupported_call", f"{_name(fn)} is tc.disable()d: it runs eagerly"
            )
        if fn is hatches.nonstrict_trace and len(args) == 1:
            return Obj(hatches.nonstrict_trace(self._hatch_target(args[0], "tc.nonstrict_trace()")))
        if isinstance(fn, hatches.nonstrict_trace):
            return NonstrictRunner(state).run(fn.fn, args, kwargs)
        if isinstance(fn, hatches.CustomOp):
            return self.call_opaque(fn, args, kwargs, example_fn=fn.fake, mutates=fn.mutates_args)
        if _hashable(fn) and hatches.is_allowed(fn):
            return self.call_opaque(fn, args, kwargs, example_fn=None, mutates=())
        return None

    def _hatch_target(self, target: Value, what: str):
        """The function an escape hatch is applied to in the trace: the graph calls that very
        object (a function read from a source is guarded by its code only: here by identity)."""
        real = target.fn if isinstance(target, UserFunction) else getattr(target, "value", None)
        if real is None:
            raise self.state.graph_break(
                "unsupported_call", f"{what} of a function made while tracing"
            )
        if isinstance(target, UserFunction) and target.source is not None:
            self.state.guards.add(target.source, "id", real)
        return real

    def call_opaque(self, fn, args, kwargs, *, example_fn, mutates) -> Value:
        """One graph node for the whole call; its output meta from the fake (or, for pure
        functions without one, from running it on the examples, output discarded)."""
        writes = []
        if mutates:
            inner = getattr(fn, "fn", fn)
            if isinstance(inner, types.FunctionType):
                bound = signature.bind(inner, tuple(args), kwargs)
            else:
                bound = inspect.signature(inner).bind(*args, **kwargs).arguments
            writes = [bound[name] for name in mutates if name in bound]
        name = getattr(fn, "name", None) or getattr(fn, "__name__", "opaque")
        return self.state.graph_call("call", fn, tuple(args), kwargs, name=name.replace("::", "_"),
                                     writes=writes, example_fn=example_fn or _quietly(getattr(fn, "fn", fn)))  # fmt: skip

    # -- ndarray methods ------------------------------------------------------------------------
    def call_array_method(self, method: ArrayMethod, args: list[Value], kwargs: dict) -> Value:
        name, owner = method.name, method.self_value
        kind = table.classify_method(name)
        if kind == table.PURE or (kind == table.INPLACE and isinstance(owner, ArrayValue)):
            return self.state.graph_call("method", name, (owner, *args), kwargs, name=name)
        if kind == table.DATA_SHAPE and data_sizes.enabled():
            return self.state.graph_call("method", name, (owner, *args), kwargs, name=name,
                                         data_shape=True)  # fmt: skip
        self._numpy_break(kind, f"ndarray.{name}()")

    # -- everything else ------------------------------------------------------------------------
    def call_object(self, fn: object, args: list[Value], kwargs: dict) -> Value:
        state = self.state
        if fn is markers.graph_break:
            msg = args[0].constant() if args else kwargs.get("msg", Const("")).constant()
            raise state.graph_break(
                "graph_break", f"tc.graph_break() was called{': ' + msg if msg else ''}"
            )
        hashable = _hashable(fn)  # callables like np.poly1d objects are not
        if any(fn is cm for cm in contexts.SUPPORTED):
            return ContextManager(fn, list(args), dict(kwargs))
        if hashable and fn in IO_BUILTINS:
            raise state.graph_break("io_call", f"call to {fn.__name__}()")
        if hashable and fn in DYNAMIC_CODE_BUILTINS:
            raise state.graph_break("dynamic_code", f"call to {fn.__name__}()")
        handler = BUILTINS.get(fn) if hashable else None
        if handler is not None:
            return handler(self, args, kwargs)
        known = operators.of_function(fn) if hashable and not kwargs else None
        if known is not None and known.arity == len(args) == 2:
            return ops.binary_op(state, fn, args[0], args[1], known.name)
        if known is not None and known.arity == len(args) == 1:
            return ops.unary_op(state, fn, args[0], known.name)
        if id(fn) in MATH_FUNCTIONS and all(a.is_constant() for a in args):
            return folding.fold(state, fn, *(a.constant() for a in args))
        special = _NUMPY_SPECIAL.get(id(fn))
        if special is not None:
            return getattr(self, special)(args, kwargs)
        kind, _ = table.classify_callable(fn)
        if kind is not None:
            return self.call_numpy(fn, kind, args, kwargs)
        if table.is_numpy_object(fn):
            raise state.graph_break(
                "unsupported_numpy", f"{_name(fn)} is not in tcompile's NumPy table"
            )
        if isinstance(fn, type):
            if table.module_of(fn).partition(".")[0] not in ("builtins", "numpy"):
                return objects.construct(state, fn, args, kwargs, self)
            raise state.graph_break("unsupported_call", f"constructing a {name_of(fn)} object")
        if isinstance(fn, _LRU_CACHE_WRAPPER):
            raise state.graph_break("unsupported_call", f"{_name(fn)} is a functools.lru_cache "
                                    "wrapper: its cache decides whether the function runs, so "
                                    "the call runs eagerly")  # fmt: skip
        raise state.graph_break(
            "unsupported_call", f"call to {_name(fn)}, which tcompile cannot trace"
        )

    def _ndarray_constructor(self, args: list[Value], kwargs: dict) -> Value:
        """``np.ndarray(shape, dtype, order=...)``: new, uninitialised memory, as ``np.empty``
        makes (NPBench's vadv); over a ``buffer`` (with ``offset``, ``strides``) it is a view of
        other memory: a break."""
        if len(args) > 2 or set(kwargs) - {"shape", "dtype", "order"}:
            raise self.state.graph_break("unsupported_numpy", "np.ndarray(...) over a buffer "
                                         "(a view of another object's memory)")  # fmt: skip
        return self.call_numpy(np.empty, table.PURE, args, kwargs)

    def _ndindex(self, args: list[Value], kwargs: dict) -> Value:
        """``np.ndindex(*shape)`` over a shape known at trace time: an iterator whose items a
        loop node makes from the iteration's position (`iteration.IndexItems`), or all of
        them where the loop is unrolled. Over a dynamic dim it breaks, and the loop runs
        split over NumPy's own iterator: a body made from the dims could not be a loop node,
        and unrolled it would recompile for every shape."""
        dims = args[0].items if len(args) == 1 and isinstance(args[0], TupleValue) else args
        if any(isinstance(d, SymInt) for d in dims):
            raise self.state.graph_break("unsupported_numpy", "np.ndindex over a dynamic dim")
        shape = tuple(d.value if isinstance(d, Const) else None for d in dims)
        if kwargs or not all(type(n) is int for n in shape):
            raise self.state.graph_break("unsupported_numpy", "np.ndindex of other than ints")
        return iteration.iterator(self.state, iteration.IndexItems(shape), lambda: [
            folding.const_to_value(index) for index in np.ndindex(*shape)])  # fmt: skip

    def _ndenumerate(self, args: list[Value], kwargs: dict) -> Value:
        """``np.ndenumerate(x)`` over an array of a shape known at trace time: as
        ``np.ndindex(*x.shape)``, each position with its element (`iteration.EnumeratedItems`).
        Over a dynamic dim it breaks, as ``np.ndindex`` does."""
        if kwargs or len(args) != 1 or not isinstance(args[0], ArrayValue):
            raise self.state.graph_break("unsupported_numpy", "np.ndenumerate of other than "
                                         "one array")  # fmt: skip
        dims = ops.get_attr(self.state, args[0], "shape", self).items
        if not all(isinstance(d, Const) for d in dims):
            raise self.state.graph_break("unsupported_numpy", "np.ndenumerate over a dynamic dim")
        origin = iteration.EnumeratedItems(tuple(d.value for d in dims), args[0])

        def unrolled():  # items made up front would read elements before the loop writes them
            raise self.state.graph_break("unsupported_numpy", "np.ndenumerate in a loop that is "
                                         "no loop node: its elements are read as it runs")  # fmt: skip

        return iteration.iterator(self.state, origin, unrolled)

    def call_numpy(self, fn, kind: str, args: list[Value], kwargs: dict) -> Value:
        state = self.state
        name = getattr(fn, "__name__", "np_call")
        if kind == table.SHAPE_QUERY:
            (value,) = args
            if isinstance(value, NumpyValue):
                return ops.get_attr(state, value, name, self)
            return folding.fold(state, fn, value.constant())
        if kind == table.CONST_ONLY:
            if fn is np.result_type:  # depends on dtypes only (NEP 50: arrays are strongly typed)
                args = [Const(a.example.dtype) if isinstance(a, ArrayValue) else a for a in args]
            if all(a.is_constant() for a in [*args, *kwargs.values()]):
                return folding.fold(state, fn, *(a.constant() for a in args),
                                **{k: v.constant() for k, v in kwargs.items()})  # fmt: skip
            self._numpy_break(table.PY_VALUE, f"np.{name}() on traced values")
        if fn is np.where and len(args) == 1:
            kind = table.DATA_SHAPE  # np.where(cond) is np.nonzero(cond)
        if kind == table.PURE and all(a.is_constant() for a in [*args, *kwargs.values()]):
            folded = self._fold_numpy(fn, args, kwargs)
            if folded is not None:
                return folded
        if kind in (table.PURE, table.INPLACE):
            return state.graph_call("call", fn, tuple(args), kwargs, name=name)
        if kind == table.DATA_SHAPE and data_sizes.enabled():
            return state.graph_call("call", fn, tuple(args), kwargs, name=name, data_shape=True)
        self._numpy_break(kind, f"np.{name}()")

    def _fold_numpy(self, fn, args, kwargs) -> Value | None:
        """Constant arguments and an immutable result (a NumPy scalar): fold it now, unless it
        warns (then it runs in the graph, which warns at the user's line on every call)."""
        c_args = [a.constant() for a in args]
        c_kwargs = {k: v.constant() for k, v in kwargs.items()}
        try:
            with quiet.strict():
                result = fn(*c_args, **c_kwargs)
        except (Warning, FloatingPointError):
            return None
        except Exception as error:
            raise UserErrorInTrace(error) from error
        if isinstance(result, (np.generic, int, float, bool, complex, np.dtype)):
            return Const(result)
        return None

    def _numpy_break(self, kind: str | None, what: str):
        state = self.state
        written = self.written()  # the call as the user wrote it, which names the function
        if written:
            what = f"`{written}`"
        if kind == table.DATA_SHAPE:
            raise state.graph_break(
                "data_dependent_shape", f"{what}: its output shape depends on array values"
            )
        if kind == table.PY_VALUE:
            raise state.graph_break(
                "data_dependent_value", f"{what} turns array data into a Python value"
            )
        if kind == table.IMPURE:
            raise state.graph_break("impure_numpy", f"{what} has side effects or hidden state")
        raise state.graph_break("unsupported_numpy", f"{what} is not in tcompile's NumPy table")


def _quietly(fn):
    """Run ``fn`` at trace time only for its output's meta: what it prints is not shown."""

    def run(*args, **kwargs):
        with contextlib.redirect_stdout(io.StringIO()):
            return fn(*args, **kwargs)

    return run


def _marker(fn, name: str):
    """A tcompile marker of ``fn`` (its wrappers are functions: nothing else is asked, whose
    attribute protocol could be the user's code)."""
    return getattr(fn, name, None) if type(fn) is types.FunctionType else None


def _hashable(obj) -> bool:
    """Whether ``obj`` can be looked up in tcompile's tables: hashable, by Python's own hash
    (a metaclass's __hash__ or __eq__ is the user's code, not run to look)."""
    if protocol_hook(type(obj), "__hash__") or protocol_hook(type(obj), "__eq__"):
        return False
    try:
        hash(obj)
        return True
    except TypeError:
        return False


def _name(fn) -> str:
    name = name_of(fn)
    if name is None:
        return repr(fn)  # an object made callable, e.g. operator.methodcaller('__pow__', 2)
    module = table.module_of(fn)
    return f"{module}.{name}" if module and module != "builtins" else f"{name}()"


def bind_arguments(  # noqa: C901 - Python's argument binding rules, in order
    tx, fn: UserFunction, args: list[Value], kwargs: dict[str, Value]
) -> dict[str, Value]:
    """CPython's argument binding on symbolic values; a TypeError is the user's own error."""
    code = fn.code
    nargs, nposonly, nkwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    names = code.co_varnames
    positional, kwonly = names[:nargs], names[nargs : nargs + nkwonly]
    has_varargs = bool(code.co_flags & inspect.CO_VARARGS)
    has_varkw = bool(code.co_flags & inspect.CO_VARKEYWORDS)
    bound: dict[str, Value] = {}
    qualname = code.co_qualname

    def error(text: str):
        raise UserErrorInTrace(TypeError(f"{qualname}() {text}"))

    for name, value in zip(positional, args):
        bound[name] = value
    extra = args[nargs:]
    if extra and not has_varargs:
        error(f"takes {nargs} positional arguments but {len(args)} were given")
    varkw: dict[str, Value] = {}
    for key, value in kwargs.items():
        if key in positional[nposonly:] or key in kwonly:
            if key in bound:
                error(f"got multiple values for argument {key!r}")
            bound[key] = value
        elif has_varkw:
            varkw[key] = value
        else:
            error(f"got an unexpected keyword argument {key!r}")
    defaults = fn.defaults
    first_default = nargs - len(defaults)
    for i, name in enumerate(positional):
        if name not in bound:
            if i < first_default:
                error(f"missing required positional argument: {name!r}")
            bound[name] = _default(tx, fn, defaults, i - first_default)
    for name in kwonly:
        if name not in bound:
            if name not in fn.kwdefaults:
                error(f"missing required keyword-only argument: {name!r}")
            bound[name] = _kwdefault(tx, fn, name)
    position = nargs + nkwonly
    if has_varargs:
        bound[names[position]] = TupleValue(list(extra))
        position += 1
    if has_varkw:
        bound[names[position]] = DictValue(varkw)
    return bound


def _default(tx, fn: UserFunction, defaults: tuple, index: int) -> Value:
    value = defaults[index]
    if isinstance(value, Value):
        return value
    if fn.source is None:
        return folding.wrap_unguarded(tx.state, value)
    source = AttrSource(fn.source, "__defaults__")
    tx.state.guards.add(source, "len", len(defaults))  # which parameter index i belongs to
    return tx.state.wrap(value, ItemSource(source, index))


def _kwdefault(tx, fn: UserFunction, name: str) -> Value:
    value = fn.kwdefaults[name]
    if isinstance(value, Value):
        return value
    if fn.source is None:
        return folding.wrap_unguarded(tx.state, value)
    return tx.state.wrap(value, ItemSource(AttrSource(fn.source, "__kwdefaults__"), name))


# NumPy classes called as functions whose calls the tracer models itself: method name, by id
_NUMPY_SPECIAL = {id(np.ndarray): "_ndarray_constructor", id(np.ndindex): "_ndindex",
                  id(np.ndenumerate): "_ndenumerate"}  # fmt: skip
