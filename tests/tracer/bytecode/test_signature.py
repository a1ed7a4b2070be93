"""`signature`: calls are bound to the code object that runs, like CPython, never through
``inspect.signature`` (which follows ``functools.wraps``)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import tcompile as tc
from tcompile.tracer.bytecode.signature import bind, forwarding_text, identifier, parameter_text


def inner(x, k=1):
    return x + k


@functools.wraps(inner)
def wrapper(*args, **kwargs):
    return inner(*args, **kwargs) * 2


def every_kind(a, /, b, *rest, c, d=4, **extra):
    return a, b, rest, c, d, extra


def test_binding_follows_the_code_not_wrapped():
    assert bind(wrapper, (np.ones(2),), {"k": 3})["kwargs"] == {"k": 3}
    bound = bind(every_kind, (1, 2, 3), {"c": 5, "z": 6})
    assert bound == {"a": 1, "b": 2, "c": 5, "d": 4, "rest": (3,), "extra": {"z": 6}}


def test_wrong_calls_raise_cpythons_typeerror():
    with pytest.raises(TypeError) as bound_error:
        bind(every_kind, (), {})
    with pytest.raises(TypeError) as eager_error:
        every_kind()
    assert str(bound_error.value) == str(eager_error.value)


def test_parameter_and_forwarding_text_round_trip():
    code = every_kind.__code__
    assert parameter_text(code) == "a, /, b, *rest, c, d, **extra"
    assert forwarding_text(code) == "a, b, *rest, c=c, d=d, **extra"
    assert identifier("@py_assert1").isidentifier() and identifier("x") == "x"


def test_a_compiled_wraps_wrapper_binds_its_own_parameters(capsys):
    def deco(fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            print("calling")
            return fn(*args, **kwargs)

        return wrapped

    f = deco(inner)
    compiled = tc.compile(f)
    for _ in range(2):
        assert np.array_equal(compiled(np.ones(2), k=2), f(np.ones(2), k=2))
    assert capsys.readouterr().out == "calling\n" * 4


def test_wrong_calls_of_compiled_functions_raise_the_functions_own_error():
    compiled = tc.compile(inner)
    compiled(np.ones(2))
    with pytest.raises(TypeError) as compiled_error:
        compiled(np.ones(2), 1, 2)
    with pytest.raises(TypeError) as eager_error:
        inner(np.ones(2), 1, 2)
    assert str(compiled_error.value) == str(eager_error.value)
