"""Kernels out of one-store realizations: each reduction takes its rows, then kernels over one
iteration space merge. Pointwise chains and reduction prologues are already one expression
(see `tensors`); this pass adds:

- **row fusion**: a store that uses row reductions and their broadcast (softmax, layer norm)
  becomes one kernel whose rows are the reductions' rows (``x - max(x)`` per row, in registers);
- **epilogues**: pointwise work on reduction results is computed where they are;
- **horizontal fusion**: consecutive kernels over the same space (two outputs reading ``x``)
  become one kernel that loads ``x`` once.

`can_fuse` is the legality check; every refusal has a reason, kept in a `FusionDecision` for the
Kernels tab. A reduction whose rows do not match its kernel's is split into its own kernel.
"""

from __future__ import annotations

from tcompile.tracer.ir.compiled_graph import FusionDecision

from . import loop_ir as ir
from .tensors import contiguous_strides


def schedule(steps: list, make_buffer) -> tuple[list, list[FusionDecision]]:
    """``steps`` with each `Launch` formed into kernels and neighbours fused.
    ``make_buffer(hint, dtype, shape)`` gives temporaries for split reductions."""
    from .plan import Launch

    formed: list = []
    decisions: list[FusionDecision] = []
    for step in steps:
        if isinstance(step, Launch):
            kernels = form(step.kernel, make_buffer, decisions)
            formed.extend(Launch(k) for k in kernels)
        else:
            formed.append(step)
    fused: list = []
    for step in formed:
        if not isinstance(step, Launch):
            fused.append(step)
            continue
        partner = _last_launch(fused)
        if partner is not None:
            ok, reason = can_fuse(partner.kernel, step.kernel)
            decisions.append(FusionDecision(partner.kernel.name, step.kernel.name, ok, reason))
            if ok:
                fused.remove(partner)
                step = Launch(merge(partner.kernel, step.kernel))
        fused.append(step)
    for step in fused:
        if isinstance(step, Launch):
            step.kernel.verify()
    return fused, decisions


def _last_launch(steps: list):
    """The latest launch that only host steps (which touch no kernel's memory) follow."""
    for step in reversed(steps):
        if step.host_only:
            continue
        return step if type(step).__name__ == "Launch" else None
    return None


# -- forming one kernel ---------------------------------------------------------------------------


def form(kernel: ir.Kernel, make_buffer, decisions: list[FusionDecision]) -> list[ir.Kernel]:
    """A one-store kernel as kernels with their reduction dims decided: reductions over the
    same rows share them; a store over (outer dims, rows) runs inside the row loop."""
    (store,) = kernel.stores
    reduces = [n for n in ir.walk(store.value) if isinstance(n, ir.Reduce)]
    if not reduces:
        return [kernel]
    rows = _sizes(reduces[-1].rvars)  # the outermost reduction's rows
    before: list[ir.Kernel] = []
    split, done = {}, []
    for reduce in _outer_first(store.value):
        if _sizes(reduce.rvars) != rows and not _within(reduce, done):
            temp_kernel, load = _split(kernel, reduce, make_buffer, decisions,
                                       f"reduces over {_sizes(reduce.rvars)}, not {rows}")  # fmt: skip
            before.extend(form(temp_kernel, make_buffer, decisions))
            split[id(reduce)] = load
            done.append(reduce)
    value = ir.substitute(store.value, split) if split else store.value
    reduces = [n for n in ir.walk(value) if isinstance(n, ir.Reduce)]
    rvars = tuple(ir.IterVar(ir.Param(s, "n"), reduction=True) for s in rows)
    renamed = {v: rvars[i] for r in reduces for i, v in enumerate(r.rvars)}
    value = ir.substitute(value, vars_=renamed)
    outer = set()
    for r in (n for n in ir.walk(value) if isinstance(n, ir.Reduce)):
        outer |= ir.free_vars(r)
    inner = [v for v in kernel.xvars if v not in outer and v in _used_vars(store, value)]
    if not inner:
        xvars = kernel.xvars
        stores = [ir.substitute_store(store, value, {})]
        note = "reduction with its prologue and epilogue"
    elif _sizes(inner) == rows:
        to_rows = dict(zip(inner, rvars))
        xvars = tuple(v for v in kernel.xvars if v not in to_rows)
        stores = [ir.substitute_store(store, ir.substitute(value, vars_=to_rows), to_rows)]
        note = f"row reduction over {rows} and its broadcast use, one row per program"
    else:
        # the store's own dims are not the rows: each reduction is computed first, alone
        loads, done = {}, []
        for r in _outer_first(value):
            if _within(r, done):
                continue
            temp_kernel, load = _split(kernel, r, make_buffer, decisions,
                                       f"its rows {rows} are not the store's dims {_sizes(inner)}")  # fmt: skip
            before.extend(form(temp_kernel, make_buffer, decisions))
            loads[id(r)] = load
            done.append(r)
        value = ir.substitute(value, loads)
        return [
            *before,
            ir.Kernel(
                kernel.name,
                kernel.xvars,
                (),
                [ir.substitute_store(store, value, {})],
                kernel.lines,
            ),
        ]
    formed = ir.Kernel(kernel.name, xvars, rvars, stores, kernel.lines, fused=(note,))
    formed.verify()
    return [*before, formed]


def _outer_first(value: ir.Expr) -> list[ir.Reduce]:
    """The reductions in ``value``, each before those inside it."""
    return [n for n in reversed(list(ir.walk(value))) if isinstance(n, ir.Reduce)]


def _within(reduce: ir.Reduce, computed: list[ir.Reduce]) -> bool:
    """Whether ``reduce`` is one of the reductions ``computed`` first, or inside one (their
    kernels compute it)."""
    return any(n is reduce for outer in computed for n in ir.walk(outer))


def _split(kernel: ir.Kernel, reduce: ir.Reduce, make_buffer, decisions, why: str):
    """A kernel computing ``reduce`` into a temporary over its free dims, and the load that
    replaces it."""
    # its dims: the kernel's, and those of a reduction around it (``m.sum(axis=1).max()``)
    around = [v for store in kernel.stores for r in ir.walk(store.value)
              if isinstance(r, ir.Reduce) and r is not reduce for v in r.rvars]  # fmt: skip
    free = [v for v in dict.fromkeys((*kernel.xvars, *around)) if v in ir.free_vars(reduce)]
    shape = tuple(v.size.value for v in free)
    buffer = make_buffer(f"{kernel.name}_part", reduce.dtype, shape)
    strides = contiguous_strides(shape)
    index = ir.Affine(ir.Param(0, "o"), tuple((v, ir.Param(s, "s")) for v, s in zip(free, strides)
                                              if v.size.value != 1))  # fmt: skip
    fresh = {v: ir.IterVar(ir.Param(v.size.value, "n")) for v in free}
    temp = ir.Kernel(f"{kernel.name}_part", tuple(fresh.values()), (),
                     [ir.Store(buffer, ir.substitute_affine(index, fresh),
                               ir.substitute(reduce, vars_=fresh))])  # fmt: skip
    decisions.append(FusionDecision(kernel.name, temp.name, False, f"a reduction {why}"))
    return temp, ir.Load(buffer, index)


def _sizes(vars_) -> tuple[int, ...]:
    return tuple(v.size.value for v in vars_)


def _used_vars(store: ir.Store, value: ir.Expr) -> set:
    return set(store.index.vars) | ir.free_vars(value)


# -- fusing two kernels ---------------------------------------------------------------------------


def can_fuse(a: ir.Kernel, b: ir.Kernel) -> tuple[bool, str]:
    """Whether ``b`` can run inside ``a`` (``a`` first), with the reason either way."""
    if _sizes(a.xvars) != _sizes(b.xvars):
        return False, f"different spaces: {_sizes(a.xvars)} and {_sizes(b.xvars)}"
    if a.rvars and b.rvars and _sizes(a.rvars) != _sizes(b.rvars):
        return False, f"different reduction rows: {_sizes(a.rvars)} and {_sizes(b.rvars)}"
    written_by_a = set(a.writes())
    for buffer in b.reads():
        if buffer in written_by_a:
            return False, f"{b.name} reads {buffer.name}, which {a.name} writes"
    for buffer in b.writes():
        if buffer in set(a.reads()) or buffer in written_by_a:
            return False, f"{b.name} writes {buffer.name}, which {a.name} uses"
    return True, "same space, independent: one pass over the shared inputs"


def merge(a: ir.Kernel, b: ir.Kernel) -> ir.Kernel:
    """One kernel running ``a``'s stores, then ``b``'s (``can_fuse`` said yes)."""
    renamed = dict(zip(b.xvars, a.xvars)) | dict(zip(b.rvars, a.rvars))
    stores = [
        ir.substitute_store(s, ir.substitute(s.value, vars_=renamed), renamed) for s in b.stores
    ]
    lines = a.lines + tuple(line for line in b.lines if line not in a.lines)
    return ir.Kernel(a.name, a.xvars, a.rvars or b.rvars, a.stores + stores, lines,
                     fused=a.fused + b.fused + (f"{b.name} (same space)",))  # fmt: skip
