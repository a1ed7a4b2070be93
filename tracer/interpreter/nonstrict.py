"""``tc.nonstrict_trace``: trace a call by running the function on proxy arrays.

A `Proxy` stands for an array of the graph. NumPy hands every ufunc and array function on it
back to the proxy (``__array_ufunc__``, ``__array_function__``), operators come through
`NDArrayOperatorsMixin`, and each becomes a graph node; Python itself runs everything else
(so graph breaks inside do not matter). Asking a proxy for a Python value is an error that
names the user's line.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from ..errors import TCompileError
from ..ir import numpy_table as table
from ..ir.node import FrameLoc
from ..semantics import folding
from ..state.examples import as_example
from ..state.trace_state import TraceState
from ..user_code import OWN_DIR
from ..values.arrays import ArrayValue, ScalarValue
from ..values.containers import ListValue, TupleValue
from ..values.core import Const, Value


class NonstrictTraceError(TCompileError):
    """A function under ``tc.nonstrict_trace`` turned a traced array into a Python value.

    Example::

        @tc.nonstrict_trace
        def g(x):
            if x.sum() > 0:      # NonstrictTraceError: bool() of a traced array, line 3
                ...

    Fix: keep values as arrays (``np.where``), or let the code graph-break instead.
    """


def _user_location() -> str:
    frame = sys._getframe(1)
    while frame is not None and (os.path.abspath(frame.f_code.co_filename).startswith(OWN_DIR)
                                 or "numpy" in frame.f_code.co_filename.split(os.sep)[-3:-1]):  # fmt: skip
        frame = frame.f_back
    if frame is None:
        return ""
    return "\n" + FrameLoc(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name).render()


def _from_example(name: str) -> property:
    """A proxy attribute that its example array answers (``x.shape``, ``x.dtype``, ...)."""
    return property(lambda proxy: getattr(proxy._value.example, name), doc=f"The array's {name}.")


class Proxy(np.lib.mixins.NDArrayOperatorsMixin):
    """A traced array inside a nonstrict-traced function."""

    __array_priority__ = 1000

    def __init__(self, runner: NonstrictRunner, value: Value):
        self._runner = runner
        self._value = value

    # -- NumPy protocols -------------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        target = ufunc if method == "__call__" else getattr(ufunc, method)
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        return self._runner.op("call", target, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        kind, _ = table.classify_callable(func)
        if kind in (table.PURE, table.INPLACE):
            return self._runner.op("call", func, args, kwargs)
        if kind == table.SHAPE_QUERY:
            return getattr(self, func.__name__)
        raise NonstrictTraceError(
            f"tc.nonstrict_trace: np.{func.__name__}() cannot be traced on arrays ({kind or 'not in the table'})"
            + _user_location()
        )

    # -- attributes answered from the example ----------------------------------------------------
    shape = _from_example("shape")
    dtype = _from_example("dtype")
    ndim = _from_example("ndim")
    size = _from_example("size")

    def __len__(self):
        return len(self._value.example)

    @property
    def T(self):  # noqa: N802 - NumPy's name
        return self._runner.op("attr", "T", (self,), {})

    def __getitem__(self, index):
        return self._runner.op("getitem", None, (self, index), {})

    def __setitem__(self, index, value):
        self._runner.op("setitem", None, (self, index, value), {})

    def __getattr__(self, name):
        if name.startswith("_") or table.classify_method(name) not in (table.PURE, table.INPLACE):
            if name in ("item", "tolist", "tobytes"):
                return lambda *a, **k: self._concretize(f".{name}()")
            raise AttributeError(name)
        return lambda *a, **k: self._runner.op("method", name, (self, *a), k)

    # -- leaving the array world is an error ----------------------------------------------------
    def _concretize(self, what: str):
        raise NonstrictTraceError(
            f"tc.nonstrict_trace: {what} of a traced array turns array data into a Python value, "
            "which nonstrict tracing cannot do"
            + _user_location()
            + "\nTry: keep the value as an array "
            "(e.g. np.where instead of if), or call the function without nonstrict_trace (a graph break)."
        )

    def __bool__(self):
        self._concretize("bool()")

    def __float__(self):
        self._concretize("float()")

    def __int__(self):
        self._concretize("int()")

    def __index__(self):
        self._concretize("using it as an index/int")

    def __array__(self, *args, **kwargs):
        self._concretize("np.asarray()")

    def __iter__(self):
        return iter([self[i] for i in range(len(self))])

    def __repr__(self) -> str:
        return f"Proxy({self._value.describe()})"


class NonstrictRunner:
    """Runs one nonstrict-traced call, turning proxies into graph values and back."""

    def __init__(self, state: TraceState):
        self.state = state

    def to_value(self, obj) -> Value:
        if isinstance(obj, Proxy):
            return obj._value
        if isinstance(obj, np.ndarray):  # made inside the function: a fresh copy per run
            return self.state.graph_call(
                "call", np.array, (Const(obj.copy()),), {}, name="constant"
            )
        if isinstance(obj, (tuple, list)):
            items = [self.to_value(o) for o in obj]
            return TupleValue(items) if isinstance(obj, tuple) else ListValue(items)
        if isinstance(obj, dict):
            return {k: self.to_value(v) for k, v in obj.items()}
        return folding.const_to_value(obj)

    def to_proxy(self, value: Value):
        if isinstance(value, (ArrayValue, ScalarValue)):
            return Proxy(self, value)
        if isinstance(value, TupleValue):
            return tuple(self.to_proxy(v) for v in value.items)
        if isinstance(value, ListValue):
            return [self.to_proxy(v) for v in value.items]
        return as_example(value)

    def op(self, kind: str, target, args, kwargs):
        values = tuple(self.to_value(a) for a in args)
        kw = {k: self.to_value(v) for k, v in kwargs.items()}
        name = getattr(target, "__name__", None) or (target if isinstance(target, str) else kind)
        result = self.state.graph_call(kind, target, values, kw, name=name)
        return self.to_proxy(result)

    def run(self, fn, args: list[Value], kwargs: dict) -> Value:
        proxies = [self.to_proxy(a) for a in args]
        kw = {k: self.to_proxy(v) for k, v in kwargs.items()}
        return self.to_value(fn(*proxies, **kw))
