"""Reductions over leading axes with their loops turned around (`OuterReductions`, a part of
`codegen`'s generator). ``np.sum(f(x), axis=0)`` of a C-ordered ``x`` keeps the axis along
memory: a loop over each kept element's reduced ones steps across memory (a row's length per
step, a page per element), 1.4x NumPy's time on 1024 x 8192. Turned around, each reduced
point's row is read along memory into a row of accumulators, one per kept element:

    acc1 = np.full(n0, np.float64(0.0))       # this part's share of the kept elements
    for r0 in range(n1):                       # the reduced points, in C order
        for x0 in range(lo, hi):               # along memory: vectorized
            acc1[x0 - lo] = np.float64(np.add(acc1[x0 - lo], <body at r0, x0>))
    for x0 in range(lo, hi):
        out0[...] = <the store's value, acc1[x0 - lo] for the sum>

Each kept element's accumulator still takes its reduced points one by one in C order, as the
loop it replaces did (NumPy's order for a reduction over leading axes): the same bits. A
reduction that reads another (a variance's mean) takes a pass of its own after it.
"""

from __future__ import annotations

from ..fused import loop_ir as ir
from ..fused.source_text import numel
from . import scalar_ops as ops

_STEPS = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}


class OuterReductions:
    """The turned-around loops of a kernel whose reductions all run across memory."""

    def _turns_around(self) -> bool:
        """Whether every store is of kept elements, every reduction a sum, product, max or min
        over all of the kernel's reduced dims, and memory runs along the last kept dim (every
        load that moves with it steps by one element), not along the last reduced one. NumPy
        then iterates along the kept dim too, and sums each element's reduced points one by
        one: a sum the lowering marked pairwise (its axes trailing, ``x.T.sum(axis=1)``) is
        not, where one dim is reduced (over several, NumPy's order follows their strides)."""
        k = self.kernel
        if not (k.xvars and k.rvars) or any(set(s.index.vars) & self.rvars for s in k.stores):
            return False
        reduces = self._reduces()
        if not all(
            r.kind in _STEPS and not r.compact and r.rvars == k.rvars
            and (not r.pairwise or len(r.rvars) == 1)
            for r in reduces
        ):  # fmt: skip
            return False
        steps = {}  # each var's coefficients in the reductions' loads
        for reduce in reduces:
            for load in (n for n in ir.walk(reduce.body) if isinstance(n, ir.Load)):
                index = load.index.base if isinstance(load.index, ir.Gather) else load.index
                for var, coefficient in index.terms:
                    steps.setdefault(var, set()).add(coefficient.value)
        return steps.get(k.xvars[-1]) == {1} and 1 not in steps.get(k.rvars[-1], ())

    def _reduces(self) -> list[ir.Reduce]:
        """The reductions the stores' values hold, those inside another's body first."""
        found = []
        for store in self.kernel.stores:
            found += [n for n in ir.walk(store.value)
                      if isinstance(n, ir.Reduce) and n not in found]  # fmt: skip
        return found

    def _turned_around(self) -> None:
        """The kernel's loops, reduced dims outside the last kept one (`_turns_around`): one
        pass over the reduced points per level of reductions (a variance's sum of squares
        reads its mean: the pass after the mean's)."""
        k, w = self.kernel, self.w
        outer, last = k.xvars[:-1], k.xvars[-1]
        size = self.arg(last.size)
        if outer:  # this part's share of the outer kept points, each a whole row of the last
            w.line(f"for xo in {self._share(self.arg(ir.Param(numel(outer), 'xnumel')))}:")
            w.level += 1
            self._decompose(outer, "xo")
            w.line(f"lo, hi = 0, {size}")
        else:  # this part's share of the last kept dim
            w.line(f"lo, hi = {size} * part // parts, {size} * (part + 1) // parts")
        x = self.var_names[last] = f"x{len(k.xvars) - 1}"
        totals: dict[int, str] = {}  # id(reduce) -> its value at x, from its accumulators
        reduces = self._reduces()
        pending = list(reduces)
        while pending:
            level = [r for r in pending if all(id(n) in totals for n in ir.walk(r.body)
                                               if isinstance(n, ir.Reduce))]  # fmt: skip
            pending = [r for r in pending if r not in level]
            totals.update(self._pass(level, reduces, totals, x))
        w.line(f"for {x} in range(lo, hi):")
        w.level += 1
        for reduce in reduces:
            self.memo[self._key(reduce)] = name = self.fresh("red")
            w.line(f"{name} = {totals[id(reduce)]}")
        for store in k.stores:
            self._store(store)

    def _pass(self, level: list, reduces: list, totals: dict, x: str) -> dict:
        """One pass over the reduced points computing ``level``'s reductions, whose bodies
        read the ``totals`` of those of ``reduces`` before; gives their values at ``x``."""
        k, w = self.kernel, self.w
        accs = {}
        for reduce in level:
            accs[id(reduce)] = acc = self.fresh("acc")
            w.line(
                f"{acc} = np.full(hi - lo, {ops.reduction_start(reduce.kind, reduce.body.dtype)})"
            )
        before = dict(self.memo)
        for var in k.rvars:
            self.var_names[var] = name = f"r{k.rvars.index(var)}"
            w.line(f"for {name} in range({self.arg(var.size)}):")
            w.level += 1
        w.line(f"for {x} in range(lo, hi):")
        w.level += 1
        for reduce in reduces:  # a reduction's value read in a later one's body
            if id(reduce) in totals:
                self.memo[self._key(reduce)] = totals[id(reduce)]
        for reduce in level:
            acc, t = f"{accs[id(reduce)]}[{x} - lo]", ops.type_name(reduce.body.dtype)
            w.line(f"{acc} = {t}({self._step(reduce)}({acc}, {self._value(reduce.body)}))")
        w.level -= 1 + len(k.rvars)
        self.memo = before  # the values above were computed per reduced point
        return {id(r): ops.cast(f"{accs[id(r)]}[{x} - lo]", r.body.dtype, r.dtype) for r in level}

    def _step(self, reduce: ir.Reduce) -> str:
        """One step's function: NumPy's ufunc, NaN-propagating for a float max or min."""
        if reduce.kind in ("max", "min") and reduce.body.dtype.kind == "f":
            name = "nan_maximum" if reduce.kind == "max" else "nan_minimum"
            self.helpers[name] = ops.INTRINSIC.format(name=name)
            return name
        return f"np.{_STEPS[reduce.kind]}"
