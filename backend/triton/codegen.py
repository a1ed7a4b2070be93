"""Loop IR to Triton source: one kernel per file, assembled from index, load, compute and store
sections by one code writer; each op's text comes from `pointwise` (NumPy's exact rules).

A kernel's arguments are its buffers (pointers), then its `Param`s (ints), then the block sizes;
the source names every argument by its role and order, never by its value, so one source serves
every shape. A reduction kernel handles ``XBLOCK`` rows per program and either holds a whole row
in one block (``persistent``, when it fits) or loops over it ``RBLOCK`` at a time, one pass per
reduction.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from ..fused import loop_ir as ir
from ..fused.source_text import CodeWriter, KernelNames, numel
from . import let_bindings, pointwise, ufuncs

PERSISTENT_LIMIT = 4096  # a row up to this many elements is held in one block


@dataclass
class KernelSource:
    """A kernel's module text and how to call it: ``args`` in order, each a `loop_ir.Buffer`,
    a `loop_ir.Param`, or "error" (the error-flag buffer); ``persistent`` and the block
    sizes the launcher passes."""

    name: str
    text: str
    args: list = field(default_factory=list)
    persistent: bool = False
    reduction: bool = False
    checks: bool = False

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:12]


_HEADER = """import triton
import triton.language as tl
from triton.language.extra import libdevice
"""

# Combine functions for `tl.reduce`, with NumPy's NaN rules (max/min propagate NaN; argmax and
# argmin give the first NaN, else the first extreme).
_EXTREME = """
@triton.jit
def _{name}(a, b):
    return tl.where((a {op} b) | (a != a), a, b)
"""
_POSITION_OF_EXTREME = """
@triton.jit
def _{name}(a, i, b, j):
    a_nan = a != a
    b_nan = b != b
    first = (i < j)
    take_a = (a_nan & ~b_nan) | (a_nan & b_nan & first) | (~a_nan & ~b_nan & ((a {op} b) | ((a == b) & first)))
    return tl.where(take_a, a, b), tl.where(take_a, i, j)
"""
_HELPERS = {
    "prod": "\n@triton.jit\ndef _prod(a, b):\n    return a * b\n",
    "max": _EXTREME.format(name="max", op=">"),
    "min": _EXTREME.format(name="min", op="<"),
    "argmax": _POSITION_OF_EXTREME.format(name="argmax", op=">"),
    "argmin": _POSITION_OF_EXTREME.format(name="argmin", op="<"),
}


def generate(kernel: ir.Kernel, *, persistent: bool) -> KernelSource:
    """The Triton source of ``kernel``."""
    return _Generator(kernel, persistent).run()


class _Generator(KernelNames):
    buffer_suffix, error_name = "_ptr", "err_ptr"

    def __init__(self, kernel: ir.Kernel, persistent: bool):
        super().__init__()
        self.kernel = kernel
        self.writes = kernel.writes()
        self.persistent = persistent and kernel.is_reduction
        self.w = CodeWriter()
        self.helpers: set[str] = set()
        self.checks: list[str] = []
        self.var_names: dict[ir.IterVar, str] = {}
        self.memo: dict = {}  # (scope, structural key) -> name
        self.hoist_at: int | None = None

    # -- the kernel ------------------------------------------------------------------------------
    def run(self) -> KernelSource:
        k = self.kernel
        body = CodeWriter()
        self.w = body
        body.level = 1
        self._index_section()
        outer = [s for s in k.stores if not (set(s.index.vars) & set(k.rvars))]
        inner = [s for s in k.stores if set(s.index.vars) & set(k.rvars)]
        if k.compacts:
            self._compacted(k.stores)
        elif not k.rvars:
            for store in k.stores:
                self._store(store)
        elif self.persistent:
            self._rows_section("")
            for store in outer + inner:
                self._store(store)
        else:
            self._looped_reductions()
            for store in outer:
                self._store(store)
            if inner:
                self._loop_open()
                for store in inner:
                    self._store(store)
                self._loop_close()
        w = CodeWriter()
        for line in _HEADER.splitlines():
            w.line(line)
        for helper in sorted(self.helpers):
            w.lines.extend(_HELPERS[helper].splitlines())
        w.line()
        w.line()
        w.line("@triton.jit")
        names = [self.arg_names[id(a)] for a in self.args]
        blocks = ["XBLOCK: tl.constexpr"] + (["RBLOCK: tl.constexpr"] if k.rvars else [])
        blocks += ["FILL: tl.constexpr"] if k.compacts else []
        w.line(f"def {k.name}({', '.join(names + blocks)}):")
        if k.lines:
            for text in k.lines:
                w.line(f"    # {text}")
        w.lines.extend(body.lines)
        return KernelSource(k.name, w.text(), list(self.args), self.persistent, bool(k.rvars),
                            bool(self.checks))  # fmt: skip

    def _index_section(self) -> None:
        k, w = self.kernel, self.w
        xnumel = self.arg(ir.Param(numel(k.xvars), "xnumel"))
        w.line("pid = tl.program_id(0).to(tl.int64)")
        if k.rvars:
            w.line("xindex = pid * XBLOCK + tl.arange(0, XBLOCK)[:, None]")
        else:
            w.line("xindex = pid * XBLOCK + tl.arange(0, XBLOCK)")
        w.line(f"xmask = xindex < {xnumel}")
        self._decompose(k.xvars, "xindex", "x")

    def _decompose(self, vars_: tuple[ir.IterVar, ...], flat: str, prefix: str) -> None:
        """Each variable's value from the flat index (C order: the last varies fastest)."""
        w = self.w
        divisor = 1
        for position in range(len(vars_) - 1, -1, -1):
            var = vars_[position]
            name = f"{prefix}{position}"
            self.var_names[var] = name
            if len(vars_) == 1:
                w.line(f"{name} = {flat}")
            elif position == len(vars_) - 1:
                w.line(f"{name} = {flat} % {self.arg(var.size)}")
            else:
                d = self.arg(ir.Param(divisor, "d"))
                w.line(
                    f"{name} = ({flat} // {d})" + (f" % {self.arg(var.size)}" if position else "")
                )
            divisor *= var.size.value

    def _rows_section(self, offset: str) -> None:
        k, w = self.kernel, self.w
        rnumel = self.arg(ir.Param(numel(k.rvars), "rnumel"))
        start = f"{offset} + " if offset else ""
        w.line(f"rindex = {start}tl.arange(0, RBLOCK)[None, :]")
        w.line(f"rmask = rindex < {rnumel}")
        self._decompose(k.rvars, "rindex", "r")

    def _loop_open(self) -> None:
        rnumel = self.arg(ir.Param(numel(self.kernel.rvars), "rnumel"))
        self.hoist_at = len(self.w.lines)  # values of the rows' scope go before the loop
        self.w.line(f"for roffset in range(0, {rnumel}, RBLOCK):")
        self.w.level += 1
        self._rows_section("roffset")

    def _loop_close(self) -> None:
        self.w.level -= 1
        self.hoist_at = None
        self.memo = {key: v for key, v in self.memo.items() if key[0] == "x"}

    def _emit(self, expr: ir.Expr, text: str) -> str:
        """``name = text`` for ``expr``: before the current loop when it varies only by row."""
        name = self.fresh()
        for line in let_bindings.assignments(name, text):
            if self.hoist_at is not None and self._scope(expr) == "x":
                self.w.lines.insert(self.hoist_at, "    " * (self.w.level - 1) + line)
                self.hoist_at += 1
            else:
                self.w.line(line)
        self.memo[self._key(expr)] = name
        return name

    def _check(self, condition: str) -> None:
        """Raise the plan's error flag where ``condition`` holds (the call then fails and the
        frame runs eagerly, raising NumPy's own error)."""
        error = self.arg("error")
        self.checks.append(condition)
        self.w.line(
            f"tl.store({error} + tl.zeros_like({condition}).to(tl.int32), 1, mask={condition})"
        )

    def _mask(self, expr: ir.Expr) -> str:
        return "xmask & rmask" if self._scope(expr) == "r" else "xmask"

    # -- reductions ----------------------------------------------------------------------------
    def _looped_reductions(self) -> None:
        """One loop over the row per reduction, innermost first; each result is a row value."""
        order = []
        for store in self.kernel.stores:
            for node in ir.walk(store.value):
                if isinstance(node, ir.Reduce) and node not in order:
                    order.append(node)
        for reduce in order:
            if self._key(reduce) in self.memo:
                continue
            acc_dtype = (
                reduce.body.dtype if reduce.kind not in ("any", "all") else np.dtype(np.int8)
            )
            acc = self.fresh("acc")
            identity = _identity(reduce.kind, acc_dtype)
            tt = pointwise.triton_type(acc_dtype)
            self.w.line(f"{acc} = tl.full([XBLOCK, RBLOCK], {identity}, {tt})")
            if reduce.kind in ("argmax", "argmin"):
                self.w.line(f"{acc}_i = tl.full([XBLOCK, RBLOCK], 9223372036854775807, tl.int64)")
            self._loop_open()
            value = self._value(reduce.body)
            masked = f"tl.where(xmask & rmask, {self._as(value, reduce)}, {identity})"
            if reduce.kind in ("argmax", "argmin"):
                self.helpers.add(reduce.kind)
                fn = f"_{reduce.kind}"
                self.w.line(
                    f"{acc}, {acc}_i = {fn}({acc}, {acc}_i, {masked}, tl.where(xmask & rmask, rindex.to(tl.int64), 9223372036854775807))"
                )
            else:
                self.w.line(f"{acc} = {_combine(reduce.kind, acc, masked, self.helpers)}")
            self._loop_close()
            result = self.fresh("red")
            if reduce.kind in ("argmax", "argmin"):
                self.w.line(f"_, {result} = tl.reduce(({acc}, {acc}_i), 1, _{reduce.kind})")
            else:
                self.w.line(f"{result} = {_reduce(reduce.kind, acc, self.helpers)}")
            self._finish_reduce(reduce, result)

    def _finish_reduce(self, reduce: ir.Reduce, result: str) -> None:
        name = self.fresh("red")
        text = f"{result}[:, None]"
        if reduce.kind in ("any", "all"):
            text = f"({text} != 0)"
        elif reduce.dtype != reduce.body.dtype and reduce.kind not in ("argmax", "argmin"):
            text = pointwise.cast(text, reduce.body.dtype, reduce.dtype)
        self.w.line(f"{name} = {text}")
        self.memo[self._key(reduce)] = name

    def _persistent_reduce(self, reduce: ir.Reduce) -> str:
        value = self._value(reduce.body)
        acc_dtype = reduce.body.dtype if reduce.kind not in ("any", "all") else np.dtype(np.int8)
        identity = _identity(reduce.kind, acc_dtype)
        masked = self.fresh("m")
        self.w.line(f"{masked} = tl.where(xmask & rmask, {self._as(value, reduce)}, {identity})")
        result = self.fresh("red")
        if reduce.kind in ("argmax", "argmin"):
            self.helpers.add(reduce.kind)
            index = "tl.where(xmask & rmask, rindex.to(tl.int64), 9223372036854775807)"
            self.w.line(
                f"_, {result} = tl.reduce(({masked}, {index} + tl.zeros_like({masked}).to(tl.int64)), 1, _{reduce.kind})"
            )
        else:
            self.w.line(f"{result} = {_reduce(reduce.kind, masked, self.helpers)}")
        self._finish_reduce(reduce, result)
        return self.memo[self._key(reduce)]

    def _as(self, value: str, reduce: ir.Reduce) -> str:
        if reduce.kind in ("any", "all"):
            return f"({value} != 0).to(tl.int8)"
        return value

    # -- values ----------------------------------------------------------------------------------
    def _store(self, store: ir.Store) -> None:
        value = self._value(store.value)
        pointer = self.arg(store.buffer)
        inner = set(store.index.vars) & set(self.kernel.rvars)
        mask = "xmask & rmask" if inner else "xmask"
        if isinstance(store.index, ir.Gather):
            address = self._gathered(store.index, mask)
        else:
            address = self._affine(store.index)
        if not set(store.index.vars) & set(self.kernel.xvars):
            address += (
                " + 0 * xindex"  # a block of pointers (all one element) for a block of values
            )
        # repeated indices of a scatter-add add up (in any order: floats round differently)
        write = "tl.atomic_add" if store.accumulate else "tl.store"
        self.w.line(f"{write}({pointer} + {address}, {value}, mask={mask})")

    def _compacted(self, stores: list[ir.Store]) -> None:
        """A compaction's block: the count launch stores how many of its points are selected;
        the write launch (``FILL``) stores each selected value (one per store) at the block's
        first position plus the count of the selected points before it in the block (a
        prefix sum)."""
        w, counts = self.w, self.arg("counts")
        keep = self.fresh("keep")
        w.line(f"{keep} = (xmask & {self._value(stores[0].index.selected)}).to(tl.int64)")
        w.line("if FILL:")
        w.level += 1
        w.line(f"at = tl.load({counts} + pid) + tl.cumsum({keep}, 0) - 1")
        for store in stores:
            value = self._value(store.value)
            w.line(f"tl.store({self.arg(store.buffer)} + at, {value}, mask={keep} != 0)")
        w.level -= 1
        w.line("else:")
        w.line(f"    tl.store({counts} + pid, tl.sum({keep}, 0))")

    def _value(self, expr: ir.Expr) -> str:
        """The name holding ``expr``, emitting what it needs first (once per scope)."""
        key = self._key(expr)
        if key in self.memo:
            return self.memo[key]
        if isinstance(expr, ir.Reduce):
            return self._persistent_reduce(expr)
        if isinstance(expr, ir.Load):
            text = self._load(expr)
        elif isinstance(expr, ir.Constant):
            text = pointwise.constant(expr.value, expr.dtype)
        elif isinstance(expr, ir.IndexValue):
            text = f"({self._affine(expr.index)}).to(tl.int64)"
        elif isinstance(expr, ir.Cast):
            value = self._value(expr.value)
            if expr.checked:  # NumPy raises ValueError or OverflowError
                bad = pointwise.unassignable(value, expr.value.dtype, expr.dtype)
                self._check(f"({self._mask(expr)}) & ({bad})")
            text = pointwise.cast(value, expr.value.dtype, expr.dtype)
        elif isinstance(expr, ir.Where):
            c, a, b = (self._value(x) for x in expr.children())
            text = f"tl.where({c}, {a}, {b})"
        elif isinstance(expr, ir.Op):
            args = [self._value(a) for a in expr.args]
            if expr.ufunc is np.power and expr.in_dtypes[1].kind == "i":
                self._check(f"({self._mask(expr)}) & ({args[1]} < 0)")  # NumPy raises ValueError
            text = ufuncs.ufunc_expr(expr.ufunc, expr.in_dtypes, expr.out_dtypes, args)[expr.output]
        else:
            raise AssertionError(expr)
        return self._emit(expr, text)

    def _load(self, expr: ir.Load) -> str:
        pointer = self.arg(expr.buffer)
        index = expr.index
        mask = self._mask(expr)
        if isinstance(index, ir.Gather):
            address = self._gathered(index, mask)
        else:
            address = self._affine(index)
            if not index.terms:
                # One element, always there; of shape [1], as constants (`pointwise.constant`).
                return f"tl.load({pointer} + {address} + tl.zeros([1], tl.int32))"
        return f"tl.load({pointer} + {address}, mask={mask}, other=0)"

    def _gathered(self, index: ir.Gather, mask: str) -> str:
        """The address of a `Gather` index: a negative value counts from the end; a checked
        value out of range raises the error flag (and reads or writes element 0)."""
        value = self._value(index.value)
        size = self.arg(index.size)
        stride = self.arg(index.coefficient)
        if index.checked:
            bad = f"(({mask}) & (({value} < -{size}) | ({value} >= {size})))"
            self._check(bad)
            wrapped = f"tl.where({bad}, 0, tl.where({value} < 0, {value} + {size}, {value}))"
        else:
            wrapped = value  # in range by construction
        return f"{self._affine(index.base)} + {stride} * {wrapped}"

    def _affine(self, index: ir.Affine) -> str:
        parts = [self.arg(index.offset)] if index.offset is not None else []
        for var, coefficient in index.terms:
            parts.append(f"{self.arg(coefficient)} * {self.var_names[var]}")
        return " + ".join(parts) or "0"


def _identity(kind: str, dtype: np.dtype) -> str:
    if kind in ("sum", "any"):
        return "0"
    if kind in ("prod", "all"):
        return "1"
    if dtype.kind == "f":
        return "float('-inf')" if kind in ("max", "argmax") else "float('inf')"
    if dtype.kind == "b":
        return "0" if kind in ("max", "argmax") else "1"
    info = np.iinfo(dtype)
    return str(info.min if kind in ("max", "argmax") else info.max)


# Per reduction: the helper it needs (None: Triton's own), how a loop step folds a tile into
# the accumulator, and how a tile reduces along its rows.
_REDUCERS = {
    "sum": (None, "{acc} + {value}", "tl.sum({tile}, 1)"),
    "prod": ("prod", "{acc} * {value}", "tl.reduce({tile}, 1, _prod)"),
    "max": ("max", "_max({acc}, {value})", "tl.reduce({tile}, 1, _max)"),
    "min": ("min", "_min({acc}, {value})", "tl.reduce({tile}, 1, _min)"),
}
_REDUCERS["any"], _REDUCERS["all"] = _REDUCERS["max"], _REDUCERS["min"]  # on 0/1 values


def _combine(kind: str, acc: str, value: str, helpers: set) -> str:
    helper, step, _ = _REDUCERS[kind]
    helpers.update({helper} - {None})
    return step.format(acc=acc, value=value)


def _reduce(kind: str, tile: str, helpers: set) -> str:
    helper, _, whole = _REDUCERS[kind]
    helpers.update({helper} - {None})
    return whole.format(tile=tile)
