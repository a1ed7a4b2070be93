"""User functions inlined into the caller's graph: positional/keyword/default/keyword-only/
positional-only parameters, *args and **kwargs, `f(*t)` / `f(**d)` calls, bounded recursion."""

import numpy as np

from . import case, raises
from .inputs import A8, M45, R8, R45


def _axpy(a, x, y):
    return a * x + y


def _scaled(x, *, scale=1.0, shift=0.0):
    return x * scale + shift


def _with_defaults(x, p=2, q=None):
    out = x**p
    if q is not None:
        out = out + q
    return out


def _sum_all(*xs):
    total = xs[0]
    for v in xs[1:]:
        total = total + v
    return total


def _with_options(x, **opts):
    return x * opts.get("scale", 1.0) + opts["shift"], sorted(opts)


def _anything(*args, **kwargs):
    return len(args), tuple(sorted(kwargs)), args[0] * kwargs.get("k", 1)


def _pos_only(a, b, /, c=0.0):
    return a - b + c


def _double_until(x, n):
    return x if n == 0 else _double_until(x * 2, n - 1)


def _factorial(n):
    return 1 if n <= 1 else n * _factorial(n - 1)


def _norm_rows(m):
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _stats(x):
    return x.mean(), x.std(), x.shape


def _level3(x):
    return x + 3


def _level2(x):
    return _level3(x) * 2


def _level1(x):
    return _level2(x) - 1


@case(A8, R8)
def positional_call(x, y):
    return _axpy(2.0, x, y)


@case(A8, R8)
def keyword_call_in_any_order(x, y):
    return _axpy(y=y, x=x, a=0.5), _axpy(3, x, y=y)


@case(A8)
def keyword_only_parameters(x):
    return _scaled(x), _scaled(x, scale=2.0), _scaled(x, shift=-1.0, scale=0.5)


@case(A8)
def default_parameters_used_and_overridden(x):
    return (
        _with_defaults(x),
        _with_defaults(x, 3),
        _with_defaults(x, q=1.0),
        _with_defaults(x, 1, 2.0),
    )


@case(A8, R8)
def varargs_function(x, y):
    return _sum_all(x), _sum_all(x, y), _sum_all(x, y, x * y, 1.0)


@case(A8)
def varkwargs_function(x):
    return _with_options(x, shift=1.0), _with_options(x, scale=2.0, shift=0.5, unused="u")


@case(A8)
def star_call_with_tuple_and_list(x):
    t = (2.0, x, x + 1)
    lst = [x, x]
    return _axpy(*t), _axpy(0.5, *lst), _sum_all(*lst, x * 3)


@case(A8, R8)
def double_star_call_with_dict(x, y):
    d = {"x": x, "y": y}
    kw = {"scale": 3.0}
    return _axpy(1.5, **d), _scaled(x, **kw), _axpy(a=2.0, **d), _scaled(x, **kw, shift=1.0)


@case(A8)
def star_and_double_star_together(x):
    args = (x, 1, 2)
    kwargs = {"k": 2, "z": None}
    return _anything(*args, **kwargs), _anything(x, *args[1:], k=3), _anything(x)


@case(A8, R8)
def positional_only_parameters(x, y):
    return _pos_only(x, y), _pos_only(x, y, 1.0), _pos_only(x, y, c=2.0)


@case(A8)
def bounded_recursion_on_constants(x):
    return _double_until(x, 3), _factorial(5) * x


@case(R45)
def helper_called_twice(x):
    a = _norm_rows(x)
    b = _norm_rows(x.T)
    return a, b, _stats(a), _stats(b)


@case(A8)
def chain_of_three_helpers(x):
    return _level1(x), _level1(_level1(x))


@case(M45)
def helper_returns_tuple_unpacked(x):
    mean, std, (rows, cols) = _stats(x)
    return (x - mean) / std, rows * cols


@case(A8)
def passing_builtin_and_numpy_functions_as_values(x):
    def apply(f, v):
        return f(v)

    return apply(np.sqrt, x), apply(np.cumsum, x), apply(len, x), apply(abs, -x)


@case(A8)
def calling_bound_methods_of_arrays_stored_in_locals(x):
    s = x.sum
    r = x.reshape
    return s(), r(2, 4), s(keepdims=True)


@raises(A8)
def missing_required_argument(x):
    return _axpy(1.0, x)


@raises(A8)
def unexpected_keyword_argument(x):
    return _scaled(x, factor=2.0)
