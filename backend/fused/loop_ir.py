"""The loop-level IR between a graph and kernel source: what one kernel loads, computes and stores.

A kernel runs over an *iteration space*: ``xvars`` (spread over Triton's programs or the CPU's
threads) and, for reductions, ``rvars`` (the reduced dims, looped over or held in one block).
Values are expression trees (`Expr`) of loads, constants, ufuncs, casts, selects and reductions;
memory is reached through affine indices (`Affine`): an offset plus a coefficient per iteration
variable. Every size, stride, offset and coefficient is a `Param`, a kernel argument whose value
is known when the plan is made: kernel sources never contain a size, so a new shape reuses them.

    Kernel(xvars=(x0,), rvars=(r0,), stores=[Store(out, Affine(...), Op(np.divide, ...))])

`Kernel.verify` checks the invariants; the tests run it after every pass.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

_ids = itertools.count()


@dataclass(frozen=True, eq=False)
class Param:
    """An integer kernel argument: a size, stride, offset or index coefficient."""

    value: int
    role: str = "p"  # a prefix for its name in the source: "n" size, "s" stride, "o" offset
    id: int = field(default_factory=lambda: next(_ids))

    def __repr__(self) -> str:
        return f"{self.role}{self.id}={self.value}"


@dataclass(frozen=True, eq=False)
class IterVar:
    """One dim of a kernel's iteration space, of ``size`` elements."""

    size: Param
    reduction: bool = False
    id: int = field(default_factory=lambda: next(_ids))

    def __repr__(self) -> str:
        return f"{'r' if self.reduction else 'x'}{self.id}"


@dataclass(frozen=True)
class Affine:
    """``offset + sum(coefficient * var)``: an element's position in a buffer, in elements."""

    offset: Param | None
    terms: tuple[tuple[IterVar, Param], ...] = ()

    @property
    def vars(self) -> tuple[IterVar, ...]:
        return tuple(v for v, _ in self.terms)


@dataclass(frozen=True, eq=False)
class Buffer:
    """Device memory a plan allocates, receives or returns: ``shape`` and ``strides`` (in
    elements) of the whole array; ``name`` for the source and the Kernels tab."""

    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    strides: tuple[int, ...]

    @property
    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


# -- expressions ------------------------------------------------------------------------------


class Expr:
    """A value computed per element in a kernel: every expression has a NumPy ``dtype``."""

    dtype: np.dtype

    def children(self) -> tuple[Expr, ...]:
        return ()


@dataclass(frozen=True, eq=False)
class Load(Expr):
    buffer: Buffer
    index: Affine | Gather
    dtype: np.dtype = None

    def __post_init__(self):
        object.__setattr__(self, "dtype", self.buffer.dtype)

    def children(self):
        return self.index.children() if isinstance(self.index, Gather) else ()


@dataclass(frozen=True, eq=False)
class Gather:
    """An index read from data: ``base + coefficient * wrap(value)`` plus affine terms, where a
    negative value counts from the end (``size``), as NumPy's integer-array indexing does. A
    value outside ``[-size, size)`` sets the plan's error flag (the call then raises). An index
    the lowering computed itself, in range by construction, is not ``checked``."""

    base: Affine
    value: Expr
    size: Param
    coefficient: Param
    checked: bool = True

    def children(self):
        return (self.value,)

    @property
    def vars(self) -> tuple[IterVar, ...]:
        return (*self.base.vars, *free_vars(self.value))


@dataclass(frozen=True, eq=False)
class Compacted:
    """The index of a compaction's store (``x[m]``, ``np.sqrt(x[m])``): where ``selected``
    holds, how many points before this one (in C order of the kernel's x space) it held at;
    elsewhere nothing is stored. Its buffer's size is known only once the kernel has counted
    the selected points (`plan.Compaction`): a backend runs such a kernel twice, counting
    each share of the space, then writing each share from the count of the shares before it.
    """

    selected: Expr
    vars = ()  # C order of the whole space, not an affine position

    def children(self):
        return (self.selected,)


@dataclass(frozen=True, eq=False)
class Constant(Expr):
    value: object
    dtype: np.dtype


@dataclass(frozen=True, eq=False)
class Op(Expr):
    """A ufunc on operands already cast to its loop dtypes; ``output`` picks one of several."""

    ufunc: np.ufunc
    args: tuple[Expr, ...]
    in_dtypes: tuple[np.dtype, ...]
    out_dtypes: tuple[np.dtype, ...]
    output: int = 0
    dtype: np.dtype = None

    def __post_init__(self):
        object.__setattr__(self, "dtype", self.out_dtypes[self.output])

    def children(self):
        return self.args


@dataclass(frozen=True, eq=False)
class Cast(Expr):
    """``value`` converted as ``astype`` converts it; ``checked``: as item assignment converts
    a NumPy scalar into a signed integer array (through a Python int), where a value NumPy
    raises for (NaN, infinity, out of range) sets the plan's error flag."""

    value: Expr
    dtype: np.dtype
    checked: bool = False

    def children(self):
        return (self.value,)


@dataclass(frozen=True, eq=False)
class Where(Expr):
    condition: Expr
    then: Expr
    otherwise: Expr
    dtype: np.dtype = None

    def __post_init__(self):
        object.__setattr__(self, "dtype", self.then.dtype)

    def children(self):
        return (self.condition, self.then, self.otherwise)


@dataclass(frozen=True, eq=False)
class IndexValue(Expr):
    """The value of an affine index (int64): for conditions on positions, as in concatenate."""

    index: Affine
    dtype: np.dtype = np.dtype(np.int64)


REDUCTIONS = ("sum", "prod", "max", "min", "any", "all", "argmax", "argmin")


@dataclass(frozen=True, eq=False)
class Reduce(Expr):
    """``kind`` of ``body`` over ``rvars`` (the body's own reduction variables), per element of
    the remaining ones. ``body`` has the accumulation dtype; argmax/argmin give int64 positions
    in the flattened ``rvars``. ``pairwise``: NumPy's inner loop runs along the rows (the
    reduced axes are the operand's trailing ones), so it sums a float row pairwise; a backend
    may follow that order exactly. ``compact``: the body is ``Where(selected, value, 0)`` and
    the sum is NumPy's of the selected values alone (``x[m].sum()``: the pairwise order of
    the compacted row), which a backend may follow too."""

    kind: str
    body: Expr
    rvars: tuple[IterVar, ...]
    dtype: np.dtype
    pairwise: bool = False
    compact: bool = False

    def children(self):
        return (self.body,)


def walk(expr: Expr):
    """``expr`` and every expression below it, each once, children first."""
    seen: set[int] = set()
    stack = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in seen:
            continue
        if expanded:
            seen.add(id(node))
            yield node
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(node.children()))


def free_vars(expr: Expr) -> set[IterVar]:
    """The iteration variables ``expr`` depends on, outside its reductions' own variables.

    A reduction's variables are bound inside its body only: ``x[r] - mean_r(x[r])`` (the
    second reduction of a variance, fused with the first) depends on ``r`` through its
    left operand."""
    free: dict[int, frozenset[IterVar]] = {}
    for node in walk(expr):  # children first
        found = set().union(*(free[id(child)] for child in node.children()))
        if isinstance(node, Reduce):
            found -= set(node.rvars)
        elif isinstance(node, Load):
            index = node.index.base if isinstance(node.index, Gather) else node.index
            found.update(index.vars)
        elif isinstance(node, IndexValue):
            found.update(node.index.vars)
        free[id(node)] = frozenset(found)
    return set(free[id(expr)])


# -- kernels ----------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Store:
    """``buffer[index] = value`` for every point of the kernel's space the index depends on;
    with ``accumulate``, ``buffer[index] += value`` atomically (a scatter-add: a `Gather`
    index may repeat; a `Compacted` index: the selected points, in order)."""

    buffer: Buffer
    index: Affine | Gather | Compacted
    value: Expr
    accumulate: bool = False


@dataclass(eq=False)
class Kernel:
    """One generated kernel: its iteration space and its stores, in order."""

    name: str
    xvars: tuple[IterVar, ...]
    rvars: tuple[IterVar, ...]
    stores: list[Store]
    lines: tuple[str, ...] = ()  # the user's source lines it computes, for comments
    fused: tuple[str, ...] = ()  # what was fused into it, for the Kernels tab

    @property
    def is_reduction(self) -> bool:
        return bool(self.rvars)

    @property
    def compacts(self) -> bool:
        """Whether it is a compaction (its one store's index `Compacted`)."""
        return any(isinstance(store.index, Compacted) for store in self.stores)

    def reads(self) -> list[Buffer]:
        """The buffers its stores load from: in their values, and in the indices a scatter
        reads from data (``a[idx[i]] += v``: ``idx``)."""
        out: list[Buffer] = []
        for store in self.stores:
            index = store.index.children() if isinstance(store.index, Gather | Compacted) else ()
            for node in (n for expr in (store.value, *index) for n in walk(expr)):
                if isinstance(node, Load) and node.buffer not in out:
                    out.append(node.buffer)
        return out

    def writes(self) -> list[Buffer]:
        out: list[Buffer] = []
        for store in self.stores:
            if store.buffer not in out:
                out.append(store.buffer)
        return out

    def verify(self, formed: bool = True) -> None:
        """Raise AssertionError naming the first broken invariant. A kernel fresh from
        lowering (not ``formed``) may hold reductions whose rows fusion has yet to decide."""
        assert self.stores, f"{self.name} stores nothing"
        assert all(not v.reduction for v in self.xvars), f"{self.name}: a reduction var in x"
        assert all(v.reduction for v in self.rvars), f"{self.name}: a plain var in r"
        space = set(self.xvars) | set(self.rvars)
        for store in self.stores:
            assert set(store.index.vars) <= space, f"{self.name}: store index outside the space"
            assert store.value.dtype == store.buffer.dtype, (
                f"{self.name}: storing {store.value.dtype} into {store.buffer.name} "
                f"({store.buffer.dtype})"
            )
            assert not formed or free_vars(store.value) <= space, f"{self.name}: unknown vars"
            for node in walk(store.value):
                _verify_expr(self, node, space, formed)

    def __repr__(self) -> str:
        return f"Kernel({self.name}, x={self.xvars}, r={self.rvars}, stores={len(self.stores)})"


def _verify_expr(kernel: Kernel, node: Expr, space: set, formed: bool) -> None:
    assert isinstance(node.dtype, np.dtype), f"{kernel.name}: {node} has no dtype"
    if isinstance(node, Op):
        assert len(node.args) == node.ufunc.nin, f"{kernel.name}: {node.ufunc.__name__} arity"
        for arg, want in zip(node.args, node.in_dtypes):
            assert arg.dtype == want, (
                f"{kernel.name}: {node.ufunc.__name__} operand is {arg.dtype}, its loop takes {want}"
            )
    elif isinstance(node, Where):
        assert node.condition.dtype == np.bool_, f"{kernel.name}: where condition not bool"
        assert node.then.dtype == node.otherwise.dtype, f"{kernel.name}: where branches differ"
    elif isinstance(node, Reduce):
        assert node.kind in REDUCTIONS, f"{kernel.name}: unknown reduction {node.kind}"
        assert not formed or set(node.rvars) <= set(kernel.rvars), (
            f"{kernel.name}: a reduction over variables the kernel does not loop over"
        )
        assert all(v.reduction for v in node.rvars), f"{kernel.name}: reducing a plain var"


def substitute(expr: Expr, exprs: dict[int, Expr] | None = None,
               vars_: dict[IterVar, IterVar] | None = None) -> Expr:  # fmt: skip
    """``expr`` with sub-expressions replaced (``exprs``: id of an expression -> its
    replacement) and iteration variables renamed (``vars_``); shared sub-trees stay shared."""
    exprs, vars_ = exprs or {}, vars_ or {}
    done: dict[int, Expr] = {}

    def go(node: Expr) -> Expr:
        key = id(node)
        if key in exprs:
            return exprs[key]
        if key in done:
            return done[key]
        if isinstance(node, Load):
            new = Load(node.buffer, _substitute_index(node.index, vars_, go))
        elif isinstance(node, IndexValue):
            new = IndexValue(substitute_affine(node.index, vars_))
        elif isinstance(node, Op):
            new = Op(node.ufunc, tuple(go(a) for a in node.args), node.in_dtypes, node.out_dtypes,
                     node.output)  # fmt: skip
        elif isinstance(node, Cast):
            new = Cast(go(node.value), node.dtype, node.checked)
        elif isinstance(node, Where):
            new = Where(go(node.condition), go(node.then), go(node.otherwise))
        elif isinstance(node, Reduce):
            new = Reduce(node.kind, go(node.body), tuple(vars_.get(v, v) for v in node.rvars),
                         node.dtype, node.pairwise, node.compact)  # fmt: skip
        else:
            new = node
        done[key] = new
        return new

    return go(expr)


def substitute_affine(index: Affine, vars_: dict[IterVar, IterVar]) -> Affine:
    return Affine(index.offset, tuple((vars_.get(v, v), c) for v, c in index.terms))


def substitute_store(store: Store, value: Expr, vars_: dict[IterVar, IterVar]) -> Store:
    """``store`` of ``value`` (already renamed) with its index's iteration variables renamed."""
    index = _substitute_index(store.index, vars_, lambda e: substitute(e, vars_=vars_))
    return Store(store.buffer, index, value, store.accumulate)


def _substitute_index(index: Affine | Gather, vars_: dict, go) -> Affine | Gather:
    if isinstance(index, Gather):
        return Gather(substitute_affine(index.base, vars_), go(index.value), index.size,
                      index.coefficient, index.checked)  # fmt: skip
    return substitute_affine(index, vars_)
