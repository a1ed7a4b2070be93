"""Known objects and the user's objects: constants and NumPy objects read at trace time,
modules and classes through guarded sources, objects the trace does not look into, instances
of user classes, functions, bound methods and ``super()``."""

from __future__ import annotations

import inspect
import operator
import types

import numpy as np

from ..errors import UserErrorInTrace
from ..ir import numpy_table as table
from ..ir.printer import INDEX_TRICKS
from ..ir.static_lookup import protocol_hook, static_lookup
from ..state.graph_calls import tensor_meta, value_of
from ..state.trace_state import TraceState
from ..state.wrapping import function_value
from ..user_code import is_user_function, user_method
from ..values.arrays import ArrayMethod
from ..values.containers import ConstMethod
from ..values.core import Const, NotConstant, Obj, Value, plain_repr
from ..values.functions import ContextExit, UserFunction
from ..values.objects import BoundMethod, Opaque, SuperValue, UserObject
from ..values.source import AttrSource, TypeSource
from .folding import const_to_value, fold, run_example, wrap_unguarded
from .protocol import Semantics, register


@register(Const)
class ConstSemantics(Semantics):
    def truth(self, state, v):
        return bool(v.value)

    def get_attr(self, state, v, name, tx):
        return _known_attr(state, v, name)

    def iterate(self, state, v, taker, loop):
        if isinstance(v.value, (range, str, bytes, tuple, frozenset)):
            return [const_to_value(i) for i in v.value]
        return super().iterate(state, v, taker, loop)


@register(Obj)
class ObjSemantics(Semantics):
    def truth(self, state, v):  # modules, functions, classes, NumPy objects: a pure question
        return fold(state, bool, v.value).value  # but bool(NotImplemented) warns

    def get_attr(self, state, v, name, tx):
        if _is_pure_object(v.value):
            return _known_attr(state, v, name)
        return _object_attr(state, v, name)

    def get_item(self, state, obj, index, tx):
        if id(obj.value) in INDEX_TRICKS:  # np.mgrid[...]: new arrays on every call
            return _index_trick(state, obj.value, index)
        return super().get_item(state, obj, index, tx)

    def call(self, tx, fn, args, kwargs):  # tcompile's own markers first, then the object
        hatch = tx.call_hatch(fn, args, kwargs)
        return hatch if hatch is not None else tx.call_object(fn.value, args, kwargs)


def _index_trick(state, trick, index: Value) -> Value:
    """``np.mgrid[...]`` (``ogrid``, ``r_``, ``c_``) on constant bounds: a node of the graph
    making the arrays on every call, as eager code does, never a constant folded at trace
    time (a folded array was the same object on every call: a caller writing into a returned
    grid changed the next call's). Its value is an array value like any other, so the grid
    unpacks (``Xi, Yi = np.mgrid[...]``), is indexed and is written into in the graph."""
    try:
        key = index.constant()
    except NotConstant:
        raise state.graph_break("unsupported_object", f"indexing {plain_repr(trick)} with "
                                f"{index.describe()}") from None  # fmt: skip
    try:
        example, _ = run_example(operator.getitem, trick, key)
    except Exception as error:
        raise UserErrorInTrace(error) from error
    name = INDEX_TRICKS[id(trick)].removeprefix("np.")
    node = state.graph.add("getitem", None, (trick, key), name=name, stack=state.user_stack(),
                           risk="silent")  # fmt: skip
    node.tensor = tensor_meta(state, example)
    node.meta = node.tensor.text()
    return value_of(state, node, example)


@register(Opaque)
class OpaqueSemantics(Semantics):
    def get_attr(self, state, v, name, tx):
        return _opaque_attr(state, v, name)


@register(UserObject)
class UserObjectSemantics(Semantics):
    rank = 10  # below containers: ``(1,) + obj`` is the tuple's

    def call(self, tx, fn, args, kwargs):
        return tx.call(tx.special_method(fn, "__call__"), args, kwargs)

    def binary(self, state, fn, a, b, name, reflected):
        raise state.graph_break(
            "unsupported_object", f"operator {name!r} on {a.describe()} and {b.describe()}"
        )

    def truth(self, state, v):
        cls = v.cls
        if static_lookup(cls, "__bool__") is not None or static_lookup(cls, "__len__") is not None:
            raise state.graph_break(
                "unsupported_object", f"truth value of {v.describe()} (custom __bool__/__len__)"
            )
        return True

    def get_item(self, state, obj, index, tx):
        return tx.call(tx.special_method(obj, "__getitem__"), [index], {})


class CallableSemantics(Semantics):
    def truth(self, state, v):
        return True


@register(BoundMethod)
class BoundMethodSemantics(CallableSemantics):
    def call(self, tx, fn, args, kwargs):
        return tx.call(fn.func, [fn.self_value, *args], kwargs)


@register(ArrayMethod)
class ArrayMethodSemantics(CallableSemantics):
    def call(self, tx, fn, args, kwargs):
        return tx.call_array_method(fn, args, kwargs)


@register(ConstMethod)
class ConstMethodSemantics(CallableSemantics):
    def call(self, tx, fn, args, kwargs):
        return tx.call_const_method(fn, args, kwargs)


@register(ContextExit)
class ContextExitSemantics(Semantics):
    def call(self, tx, fn, args, kwargs):
        """A with-block's exit: tcompile's own context managers leave the trace's contexts;
        the user's runs their ``__exit__``."""
        if fn.owner is None:
            tx.state.contexts.exit(fn)
            return Const(None)
        fn.owner.user_with_depth -= 1
        return tx.call(tx.special_method(fn.manager, "__exit__"), args, kwargs)


@register(UserFunction)
class FunctionSemantics(CallableSemantics):
    def call(self, tx, fn, args, kwargs):
        return tx.inline(fn, args, kwargs)

    def get_attr(self, state, v, name, tx):
        if name not in ("__name__", "__qualname__", "__doc__", "__module__"):
            return super().get_attr(state, v, name, tx)
        if v.source is not None:  # guarded: functions of one code can have other names
            return state.wrap(getattr(v.fn, name), AttrSource(v.source, name))
        if v.fn is not None:
            return Const(getattr(v.fn, name))
        made = {"__name__": v.name, "__qualname__": v.code.co_qualname,
                "__module__": v.globals.get("__name__")}  # fmt: skip
        if name in made:  # a function made in the trace: as MAKE_FUNCTION sets them
            return Const(made[name])
        return super().get_attr(state, v, name, tx)


@register(SuperValue)
class SuperSemantics(Semantics):
    def get_attr(self, state, v, name, tx):
        return super_attr(state, v, name)


def _is_pure_object(obj) -> bool:
    return table.is_numpy_object(obj) or table.is_numpy_module(obj) or isinstance(obj, (np.dtype, np.finfo, np.iinfo)) \
        or type(obj) is type(np.zeros(0).flags)  # fmt: skip


def _known_attr(state: TraceState, v: Value, name: str) -> Value:
    """An attribute of a constant or a NumPy object: read it now (these never change)."""
    try:
        attr = getattr(v.value, name)
    except AttributeError as error:
        raise UserErrorInTrace(error) from error
    if isinstance(
        attr, (types.BuiltinMethodType, types.MethodWrapperType)
    ) and not table.is_numpy_object(attr):
        return ConstMethod(v, name)
    return const_to_value(attr)


def _object_attr(state: TraceState, v: Obj, name: str) -> Value:
    """An attribute of a module or class: guarded by identity through its source."""
    user_code_runs = _attribute_runs_user_code(v.value, name)
    if user_code_runs:  # run by the break, as eagerly: never when tracing nor in a guard
        raise state.graph_break("unsupported_object", f"attribute {name!r} of {v.describe()} "
                                f"runs the user's code ({user_code_runs})")  # fmt: skip
    try:
        attr = getattr(v.value, name)
    except AttributeError as error:
        raise UserErrorInTrace(error) from error
    if isinstance(v.value, types.ModuleType) and table.is_numpy_module(v.value) or v.source is None:
        return wrap_unguarded(state, attr)
    if not isinstance(v.value, (type, types.ModuleType)):
        method = bound_method(state, v, name, attr)
        if method is not None:
            return method
    return state.wrap(attr, AttrSource(v.source, name))


def _attribute_runs_user_code(obj, name: str) -> str | None:
    """What of the user's code reading ``obj.name`` (a module or a class) would run, if any:
    its metaclass's __getattribute__ or __getattr__, a descriptor's __get__, a module's
    __getattr__ (PEP 562)."""
    meta = type(obj)
    if protocol_hook(meta, "__getattribute__") or protocol_hook(meta, "__getattr__"):
        return "its metaclass defines __getattribute__ or __getattr__"
    if isinstance(obj, type) and user_method(
        static_lookup(type(static_lookup(obj, name)), "__get__")
    ):
        return "a descriptor's __get__"
    namespace = obj.__dict__ if isinstance(obj, types.ModuleType) else {}
    if name not in namespace and user_method(namespace.get("__getattr__")):
        return "the module's __getattr__"
    return None


def bound_method(state: TraceState, v: Value, name: str, attr) -> Value | None:
    """A method bound to the object read from it (``x.mean`` of a foreign object): a new bound
    object on every read, so its identity says nothing. What stays the same is the class's
    function, and that the object does not shadow it: those are guarded."""
    if getattr(attr, "__self__", None) is not v.value or v.source is None:
        return None
    class_attr = inspect.getattr_static(type(v.value), name, None)
    if class_attr is None:
        return None
    state.guards.add(v.source, "no_shadow", name)
    state.wrap(class_attr, AttrSource(TypeSource(v.source), name))
    return Obj(attr, AttrSource(v.source, name))


def _opaque_attr(state: TraceState, v: Opaque, name: str) -> Value:
    """A method of an object the trace does not look into: a new bound object on every read,
    called eagerly (a break); any other attribute is read eagerly (a break)."""
    class_attr = inspect.getattr_static(v.cls, name, None)
    if class_attr is None or not callable(class_attr) or isinstance(class_attr, type):
        raise state.graph_break("unsupported_object", f"attribute {name!r} of {v.describe()}")
    state.guards.add(v.source, "no_shadow", name)
    state.wrap(class_attr, AttrSource(TypeSource(v.source), name))
    return Opaque(types.MethodType, AttrSource(v.source, name))


def super_attr(state: TraceState, sup: SuperValue, name: str) -> Value:
    """``super().name``: the first class after ``sup.cls`` in the MRO that defines it."""
    mro = sup.self_value.python_type().__mro__
    for klass in mro[mro.index(sup.cls) + 1 :]:
        if name in klass.__dict__:
            attr = klass.__dict__[name]
            if isinstance(attr, types.FunctionType):
                return BoundMethod(wrap_unguarded(state, attr), sup.self_value)
            if isinstance(attr, classmethod):
                return BoundMethod(
                    wrap_unguarded(state, attr.__func__), Obj(sup.self_value.python_type())
                )
            if isinstance(attr, staticmethod):
                return wrap_unguarded(state, attr.__func__)
            if klass is object and name == "__init__":
                return Obj(lambda *a, **k: None)
            if isinstance(attr, (types.WrapperDescriptorType, types.MethodDescriptorType)):
                return BoundMethod(Obj(attr), sup.self_value)  # super().__getattribute__(name)
            return wrap_unguarded(state, attr)
    raise UserErrorInTrace(AttributeError(f"'super' object has no attribute {name!r}"))


def construct(state: TraceState, cls: type, args, kwargs, tx) -> Value:
    """``cls(*args)`` for a plain user class: a new object, ``__init__`` inlined."""
    if type(cls) is not type or cls.__new__ is not object.__new__ or "__slots__" in vars(cls):
        raise state.graph_break("unsupported_call", f"constructing a {cls.__qualname__} object "
                                "(custom __new__, metaclass or __slots__)")  # fmt: skip
    obj = UserObject(None, new_cls=cls)
    init = getattr(cls, "__init__", object.__init__)
    if init is object.__init__:
        if args or kwargs:
            raise UserErrorInTrace(TypeError(f"{cls.__qualname__}() takes no arguments"))
        return obj
    if not isinstance(init, types.FunctionType) or not is_user_function(init):
        raise state.graph_break(
            "unsupported_call", f"constructing a {cls.__qualname__} object (its __init__)"
        )
    result = tx.call(BoundMethod(function_value(init, None), obj), list(args), kwargs)
    if not (isinstance(result, Const) and result.value is None):
        raise UserErrorInTrace(TypeError("__init__() should return None"))
    return obj
