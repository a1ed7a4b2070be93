"""What of NumPy the tracer puts in a graph: the explicit, documented table.

Every NumPy callable the tracer meets is classified here, and only here:

  PURE          deterministic, no side effects: becomes a graph node (all ufuncs and their
                reduce/accumulate/reduceat/outer methods are PURE unless given ``out=``)
  INPLACE       writes into an argument (``np.copyto(dst, src)``, ``ufunc.at``, ``x.sort()``):
                becomes a statement node that mutates the argument, in program order
  SHAPE_QUERY   answers from shape/dtype alone (``np.shape``, ``np.ndim``): no node
  CONST_ONLY    dtype/type introspection (``np.finfo``, ``np.result_type``): folded when
                every argument is a constant, else a break
  DATA_SHAPE    output shape depends on array values (``np.nonzero``, ``np.unique``): break
  PY_VALUE      returns a Python value computed from array data (``np.allclose``, ``.item()``,
                ``.tolist()``): break, the value leaves the graph
  IMPURE        hidden state or I/O (``np.random.*``, ``np.save``, ``np.seterr``): break

Anything not listed is a break of kind ``unsupported_numpy`` (NumPy) or ``unsupported_call``.
"""

from __future__ import annotations

import functools
import inspect
import types

import numpy as np

from .static_lookup import protocol_hook, subclass_of, type_attribute

PURE = "pure"
INPLACE = "inplace"
SHAPE_QUERY = "shape_query"
CONST_ONLY = "const_only"
DATA_SHAPE = "data_shape"
PY_VALUE = "py_value"
IMPURE = "impure"

_PURE_FUNCTIONS = """
    abs absolute all amax amin angle any append arange argmax argmin argpartition argsort around
    array asarray asanyarray ascontiguousarray asfortranarray atleast_1d atleast_2d atleast_3d
    average bartlett blackman broadcast_arrays broadcast_to cbrt choose clip column_stack
    concatenate conj conjugate convolve copy corrcoef correlate cov cross cumprod cumsum
    deg2rad diag diagflat diagonal diff digitize dot dsplit dstack ediff1d einsum empty
    empty_like expand_dims eye fix flip fliplr flipud full full_like geomspace gradient
    hamming hanning histogram hsplit hstack hypot identity imag inner interp isclose
    isreal iscomplex kron linspace logspace matmul max maximum mean median meshgrid min
    minimum moveaxis nan_to_num nanargmax nanargmin nancumprod nancumsum nanmax nanmean
    nanmedian nanmin nanpercentile nanprod nanquantile nanstd nansum nanvar ones ones_like
    outer pad partition percentile permute_dims polyval prod ptp quantile rad2deg ravel
    real repeat reshape resize roll rollaxis rot90 round searchsorted select sinc sort split
    array_split squeeze stack std sum swapaxes take take_along_axis tensordot tile trace
    transpose trapezoid trapz tri tril triu unwrap vander var vdot vsplit vstack where
    zeros zeros_like astype matrix_transpose vecdot cumulative_sum cumulative_prod
    concat unstack count_nonzero tril_indices triu_indices tril_indices_from triu_indices_from
    diag_indices diag_indices_from indices
"""
_PURE_LINALG = """
    norm inv solve det slogdet eig eigh eigvals eigvalsh svd qr cholesky pinv matrix_power
    multi_dot tensorinv tensorsolve cond matrix_norm vector_norm outer cross matmul trace
    diagonal svdvals
"""
_PURE_FFT = """
    fft ifft rfft irfft fft2 ifft2 rfft2 irfft2 fftn ifftn rfftn irfftn hfft ihfft fftshift
    ifftshift fftfreq rfftfreq
"""
_CONST_ONLY = """
    finfo iinfo dtype result_type promote_types can_cast issubdtype isdtype min_scalar_type
    obj2sctype mintypecode
"""
_DATA_SHAPE = """
    nonzero argwhere flatnonzero unique unique_all unique_counts unique_inverse unique_values
    extract compress bincount trim_zeros setdiff1d union1d intersect1d setxor1d in1d isin
    delete insert
"""
_PY_VALUE = """
    allclose array_equal array_equiv array_str array_repr array2string isscalar
    shares_memory may_share_memory iterable
"""
_IMPURE = """
    save savez savez_compressed savetxt load loadtxt genfromtxt fromfile fromregex frombuffer
    seterr geterr seterrcall geterrcall errstate set_printoptions get_printoptions
    printoptions setbufsize getbufsize info source lookfor show_config
"""
_INPLACE_FUNCTIONS = {"copyto": (0,), "put": (0,), "putmask": (0,), "place": (0,),
                      "fill_diagonal": (0,), "put_along_axis": (0,)}  # fmt: skip
_SHAPE_QUERIES = {"shape", "ndim", "size"}


def _lookup(module, names: str) -> dict[int, str]:
    found = {}
    for name in names.split():
        obj = getattr(module, name, None)
        if obj is not None:
            found[id(obj)] = name
    return found


_BY_ID: dict[int, tuple[str, object]] = {}


def _register(kind: str, ids: dict[int, str]) -> None:
    for key in ids:
        _BY_ID.setdefault(key, (kind, None))


_register(PURE, _lookup(np, _PURE_FUNCTIONS))
_register(PURE, _lookup(np.linalg, _PURE_LINALG))
_register(PURE, _lookup(np.fft, _PURE_FFT))
_register(CONST_ONLY, _lookup(np, _CONST_ONLY))
_register(DATA_SHAPE, _lookup(np, _DATA_SHAPE))
_register(PY_VALUE, _lookup(np, _PY_VALUE))
_register(IMPURE, _lookup(np, _IMPURE))
_register(SHAPE_QUERY, _lookup(np, " ".join(_SHAPE_QUERIES)))
for _name, _positions in _INPLACE_FUNCTIONS.items():
    if hasattr(np, _name):
        _BY_ID[id(getattr(np, _name))] = (INPLACE, _positions)

_UFUNC_METHODS = {"reduce": PURE, "accumulate": PURE, "reduceat": PURE, "outer": PURE}

# ndarray / NumPy-scalar methods.
_PURE_METHODS = set(
    [
        "all",
        "any",
        "argmax",
        "argmin",
        "argpartition",
        "argsort",
        "astype",
        "choose",
        "clip",
        "compress",
        "conj",
        "conjugate",
        "copy",
        "cumprod",
        "cumsum",
        "diagonal",
        "dot",
        "flatten",
        "max",
        "mean",
        "min",
        "prod",
        "ptp",
        "ravel",
        "repeat",
        "reshape",
        "round",
        "searchsorted",
        "squeeze",
        "std",
        "sum",
        "swapaxes",
        "take",
        "trace",
        "transpose",
        "var",
        "view",
        "__array__",
        "__abs__",
        "__neg__",
        "__pos__",
        "__invert__",
        "__add__",
        "__sub__",
        "__mul__",
        "__truediv__",
        "__floordiv__",
        "__mod__",
        "__pow__",
        "__matmul__",
        "__radd__",
        "__rsub__",
        "__rmul__",
        "__rtruediv__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__eq__",
        "__ne__",
        "__getitem__",
    ]
)
_INPLACE_METHODS = {"fill", "sort", "put", "partition", "itemset", "setflags"}
_PY_VALUE_METHODS = {"item", "tolist", "tobytes", "tostring", "__bool__", "__int__",
                     "__float__", "__index__", "__len__", "__iter__", "__contains__"}  # fmt: skip
_DATA_SHAPE_METHODS = {"nonzero"}
_IMPURE_METHODS = {"tofile", "dump", "dumps", "resize", "byteswap", "setfield", "getfield"}

# Array attributes answered from shape/dtype, attributes that are graph nodes, and ones
# that expose memory layout (a break: tcompile does not promise layouts of intermediates).
META_ATTRS = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes"}
NODE_ATTRS = {"T", "mT", "real", "imag"}
LAYOUT_ATTRS = {"flags", "strides", "base", "data", "ctypes", "flat", "__array_interface__"}


def classify_callable(fn: object) -> tuple[str | None, object]:
    """(kind, extra) for a NumPy callable, or (None, None) if it is not NumPy's."""
    entry = _BY_ID.get(id(fn))
    if entry is not None:
        return entry
    if isinstance(fn, np.ufunc):
        return PURE, None
    if isinstance(fn, types.BuiltinMethodType) and isinstance(fn.__self__, np.ufunc):
        if fn.__name__ == "at":
            return INPLACE, (0,)
        kind = _UFUNC_METHODS.get(fn.__name__)
        return (kind, None) if kind else (None, None)
    if isinstance(fn, type) and issubclass(fn, np.generic):
        return PURE, None  # np.float32(x): a scalar conversion
    if is_numpy_object(fn):
        module = getattr(fn, "__module__", "") or ""
        if module.startswith("numpy.random"):
            return IMPURE, None
    return None, None


def classify_method(name: str) -> str | None:
    if name in _PURE_METHODS:
        return PURE
    if name in _INPLACE_METHODS:
        return INPLACE
    if name in _PY_VALUE_METHODS:
        return PY_VALUE
    if name in _DATA_SHAPE_METHODS:
        return DATA_SHAPE
    if name in _IMPURE_METHODS:
        return IMPURE
    return None


def elementwise_ufunc(target) -> np.ufunc | None:
    """``target`` if it is a ufunc computing one value element by element (no gufunc)."""
    is_elementwise = isinstance(target, np.ufunc) and target.nout == 1 and target.signature is None
    return target if is_elementwise else None


# NumPy's reductions and scans: a new array (or scalar) of fewer or as many elements.
REDUCTIONS = (np.sum, np.mean, np.prod, np.max, np.min, np.argmax, np.argmin, np.any, np.all,
              np.var, np.std)  # fmt: skip
SCANS = (np.cumsum, np.cumprod)

# Operations whose result never shares memory with an argument: a claim the memory plan
# relies on, proven over argument variants by tests/differential/test_memory_claims.py.
# Not ``np.einsum``: with one operand and nothing to sum, it returns a view of it
# (``"ij->ji"``, ``"ii->i"``, ``"i->i"``); not ``np.diff``: with ``n=0`` it returns its argument.
_NEW_MEMORY = frozenset(
    id(fn)
    for fn in (*REDUCTIONS, *SCANS, np.matmul, np.dot, np.tensordot, np.inner, np.vdot,
               np.outer, np.where, np.clip, np.concatenate, np.stack, np.copy, np.ndarray.copy,
               np.ndarray.flatten, np.zeros_like, np.ones_like, np.empty_like, np.full_like,
               np.sort, np.argsort, np.tile, np.repeat, np.roll, np.pad)
)  # fmt: skip


def returns_new_memory(op: str, target) -> bool:
    """Whether the operation's result is a new array (never a view of an argument's memory)."""
    if op != "call":
        return False
    return elementwise_ufunc(target) is not None or id(target) in _NEW_MEMORY


def written_positions(fn: object) -> tuple[int, ...]:
    """Positions of the arguments an INPLACE NumPy function writes into (``np.copyto``: 0)."""
    kind, extra = classify_callable(fn)
    return extra if kind == INPLACE else ()


def method_writes_self(name: str) -> bool:
    """Whether ``ndarray.<name>()`` writes into the array itself (``x.sort()``, ``x.fill(v)``)."""
    return name in _INPLACE_METHODS


@functools.cache
def _out_position(fn) -> int | None:
    params = list(inspect.signature(fn).parameters.values())
    for i, param in enumerate(params):
        if param.name == "out" and param.kind in (
            param.POSITIONAL_ONLY,
            param.POSITIONAL_OR_KEYWORD,
        ):
            return i
    return None


def out_position(fn: object) -> int | None:
    """Where ``fn`` takes ``out`` positionally (``np.sum(x, 0, None, out)``: 3), None if it does
    not; `LookupError` when NumPy does not say (no signature)."""
    try:
        return _out_position(fn)
    except (TypeError, ValueError):
        raise LookupError(fn) from None


def method_function(name: str):
    """The ``np.<name>`` function an ndarray method mirrors (``x.sum`` -> ``np.sum``), if any:
    their positional parameters after the array agree, ``out`` included."""
    fn = getattr(np, name, None)
    return fn if callable(fn) and not isinstance(fn, type) else None


def is_numpy_object(obj: object) -> bool:
    t = type(obj)  # asked of the type: the object's own protocol may be the user's code
    if subclass_of(t, (np.ufunc, np.dtype)):
        return True
    if t is types.BuiltinMethodType and subclass_of(type(obj.__self__), (np.ufunc,)):
        return True
    module = module_of(obj)
    return module == "numpy" or module.startswith("numpy.")


def module_of(obj) -> str:
    """``obj.__module__`` where reading it runs none of the user's code ("" elsewhere): a
    class's own; a module has none (its __getattr__ would answer)."""
    t = type(obj)
    if subclass_of(t, (type,)):
        module = type_attribute(obj, "__module__")
    elif subclass_of(t, (types.ModuleType,)) or protocol_hook(t, "__getattribute__") \
            or protocol_hook(t, "__getattr__"):  # fmt: skip
        module = None
    else:
        module = getattr(obj, "__module__", None)
    return module if isinstance(module, str) else ""


def is_numpy_module(obj: object) -> bool:
    return isinstance(obj, types.ModuleType) and (
        obj.__name__ == "numpy" or obj.__name__.startswith("numpy.")
    )
