"""Loop IR to numba source: one ``@njit(nogil=True)`` function per kernel, its x space cut
into ``parts`` (one per thread) with each reduction an inner loop into a scalar accumulator,
each op's text from `scalar_ops` (NumPy's exact rules).

A kernel's arguments are its buffers (1-D views of the memory they span, addressed by element
offsets), then its `Param`s (ints), then the error flag where it checks, then ``part, parts``;
the source names each by role and order, never by value, so one source (and one compiled
function, cached on disk by numba) serves every shape and every number of threads. The x
space's outer loop runs over all its dims but the last, flattened (its ``part``-th share), a
plain loop over the last (a contiguous row vectorizes); a kernel whose stores may hit one
element twice (a scatter-add, a gathered store) runs as one part, in NumPy's order.

    for xo in range(xnumel0 * part // parts, xnumel0 * (part + 1) // parts):  # this thread's rows
        x0 = xo
        acc1 = np.float64(-np.inf)
        for r0 in range(n1):            # a row's max
            acc1 = nan_maximum(acc1, in0[np.uint64(o2 + s3 * x0 + s4 * r0)])
        ...

Threads are Python's (`kernels.run_parts`), not numba's ``parallel=True``: a parallel kernel
took twice as long to compile (0.7 s against 0.3 s for haversine's), and every call pays it
on a first run or a new process reads it from the disk cache.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from ..fused import loop_ir as ir
from ..fused.source_text import CodeWriter, KernelNames, numel
from . import scalar_ops as ops
from .outer_reductions import OuterReductions

SMALL = 1 << 15  # elements of work under which a kernel runs on one thread
LANES = 4  # independent chains of a reduction whose order changes nothing
CHUNK = 64  # x points per thread's task where kernels need a row buffer

_PAIRWISE = "from tcompile.backend.cpu.pairwise import pairwise_sum"
HEADER = "import numpy as np\nfrom numba import njit\n"
DECORATOR = '@njit(nogil=True, cache=True, error_model="numpy", fastmath=False)'


@dataclass
class KernelSource:
    """A kernel's module text and its arguments in order: each a `loop_ir.Buffer`, a
    `loop_ir.Param` or "error" (the error flag)."""

    name: str
    text: str
    args: list = field(default_factory=list)
    checks: bool = False
    parallel: bool = True

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:12]


def generate(kernel: ir.Kernel) -> KernelSource:
    """The numba source of ``kernel``."""
    return _Generator(kernel).run()


class _Generator(KernelNames, OuterReductions):
    distinct_reductions = True  # each reduction has a row buffer of its own

    def __init__(self, kernel: ir.Kernel):
        super().__init__()
        self.kernel = kernel
        self.w = CodeWriter(level=1)
        self.var_names: dict[ir.IterVar, str] = {}
        self.memo: dict = {}  # structural key -> name, per scope
        self.hoist: list[tuple[int, int]] = []  # (line index, level) for x-scope values
        self.rvars = set(kernel.rvars)
        self.checks = False
        self.helpers: dict[str, str] = {}  # name -> source, from `scalar_ops.op`
        self.scratch: dict[int, str] = {}  # id(Reduce) -> its row buffer (`_pairwise_sum`)
        self.rows: dict[tuple, tuple] = {}  # a summed body's key -> (row buffer, its var)
        self.open_rvars: list = []
        writes = kernel.writes()
        self.serial = any(s.accumulate or isinstance(s.index, ir.Gather) for s in kernel.stores)
        self.writes = writes

    # -- the kernel -----------------------------------------------------------------------------
    def run(self) -> KernelSource:
        k = self.kernel
        if k.compacts:  # this share's first position: its count run starts from 0
            self.w.line(f"at = {self.arg('counts')}[part]")
        if self._turns_around():
            self._turned_around()
        else:
            self._x_loops()
            self._point()
        if k.compacts:  # the count run's result (the write run's end, unread)
            self.w.level = 1
            self.w.line(f"{self.arg('counts')}[part] = at")
        w = CodeWriter()
        w.lines.extend(HEADER.splitlines())
        for name in sorted(self.helpers):
            w.line()
            w.lines.extend(self.helpers[name].splitlines())
        w.line()
        w.line()
        parallel = not self.serial and bool(k.xvars)
        # the error flag after the others (its name is fixed, theirs numbered in order of use)
        ordered = [a for a in self.args if a != "error"] + [a for a in self.args if a == "error"]
        self.args = ordered
        names = ", ".join([self.arg_names[id(a)] for a in ordered] + ["part", "parts"])
        w.line(DECORATOR)
        w.line(f"def {k.name}({names}):")
        for text in k.lines:
            w.line(f"    # {text}")
        w.lines.extend(self.w.lines)
        return KernelSource(k.name, w.text(), list(ordered), self.checks, parallel)

    def _x_loops(self) -> None:
        """Open the loops over the x space: this part's share of all dims but the last
        (flattened), a plain loop over the last; where pairwise sums need row buffers, this
        part's share of chunks of the flattened space, each allocating its buffers once."""
        xvars, w = self.kernel.xvars, self.w
        sums = self._pairwise_sums()
        if sums:
            if xvars:
                count = self.arg(ir.Param(numel(xvars), "xnumel"))
                w.line(f"for xc in {self._share(f'(({count} + {CHUNK - 1}) // {CHUNK})')}:")
                w.level += 1
            for reduce in sums:
                row = self.scratch[id(reduce)] = self.fresh("row")
                size = self.arg(ir.Param(numel(reduce.rvars), "rnumel"))
                w.line(f"{row} = np.empty({size}, {ops.type_name(reduce.body.dtype)})")
            if xvars:
                w.line(f"for xf in range(xc * {CHUNK}, min({count}, xc * {CHUNK} + {CHUNK})):")
                w.level += 1
                self._decompose(xvars, "xf")
            return
        if not xvars:
            return
        outer, last = xvars[:-1], xvars[-1]
        if outer:
            rows = ir.Param(numel(outer), "xnumel")
            w.line(f"for xo in {self._share(self.arg(rows))}:")
            w.level += 1
            divisor = 1
            for position in range(len(outer) - 1, -1, -1):
                var = outer[position]
                name = f"x{position}"
                self.var_names[var] = name
                if len(outer) == 1:
                    w.line(f"{name} = xo")
                    continue
                text = "xo" if divisor == 1 else f"(xo // {self.arg(ir.Param(divisor, 'd'))})"
                if position:
                    text = f"{text} % {self.arg(var.size)}"
                w.line(f"{name} = {text}")
                divisor *= var.size.value
        name = f"x{len(xvars) - 1}"
        self.var_names[last] = name
        size = self.arg(last.size)
        w.line(f"for {name} in {f'range({size})' if outer else self._share(size)}:")
        w.level += 1

    def _share(self, count: str) -> str:
        """The range of this part's share of ``count`` outer iterations (all of them where the
        kernel's stores must run in order)."""
        if self.serial:
            return f"range({count})"
        return f"range({count} * part // parts, {count} * (part + 1) // parts)"

    def _pairwise_sums(self) -> list:
        found = []
        for store in self.kernel.stores:
            for node in ir.walk(store.value):
                if (isinstance(node, ir.Reduce) and node.kind == "sum" and node.pairwise
                        and node.body.dtype.kind == "f" and node not in found
                        and _contiguous_load(node) is None):  # fmt: skip
                    found.append(node)
        return found

    def _decompose(self, vars_, flat: str) -> None:
        """Each variable's value from the flat index (C order: the last varies fastest)."""
        divisor = 1
        for position in range(len(vars_) - 1, -1, -1):
            var, name = vars_[position], f"x{position}"
            self.var_names[var] = name
            text = flat if divisor == 1 else f"({flat} // {self.arg(ir.Param(divisor, 'd'))})"
            if position:
                text = f"{text} % {self.arg(var.size)}"
            self.w.line(f"{name} = {text}")
            divisor *= var.size.value

    def _point(self) -> None:
        """One point of the x space: its reductions, then its stores (those along the row in
        a loop over it)."""
        k = self.kernel
        if k.compacts:
            self._compacted(k.stores)
            return
        for store in k.stores:
            for node in ir.walk(store.value):
                if isinstance(node, ir.Reduce) and self._key(node) not in self.memo:
                    self._reduction(node)
        outer = [s for s in k.stores if not (set(s.index.vars) & self.rvars)]
        inner = [s for s in k.stores if set(s.index.vars) & self.rvars]
        for store in outer:
            self._store(store)
        if inner:
            self._r_loops(k.rvars)
            for store in inner:
                self._store(store)
            self._close_r_loops(k.rvars)

    # -- reductions ---------------------------------------------------------------------------------
    def _r_loops(self, rvars) -> None:
        self.hoist.append((len(self.w.lines), self.w.level))
        for var in rvars:
            name = self.var_names.get(var) or f"r{len(self.var_names) - len(self.kernel.xvars)}"
            self.var_names[var] = name
            self.open_rvars.append(var)
            self.w.line(f"for {name} in range({self.arg(var.size)}):")
            self.w.level += 1

    def _close_r_loops(self, rvars) -> None:
        self.w.level -= len(rvars)
        del self.open_rvars[-len(rvars) :]
        self.hoist.pop()
        self.memo = {key: v for key, v in self.memo.items() if key[0] == "x"}

    def _reduction(self, reduce: ir.Reduce) -> None:
        """``acc`` over the reduction's rows, then its value (cast to its dtype)."""
        w, kind = self.w, reduce.kind
        body = reduce.body.dtype
        if id(reduce) in self.scratch:
            self._pairwise_sum(reduce)
            return
        if kind == "sum" and reduce.pairwise and body.kind == "f":
            start = _contiguous_load(reduce)
            if start is not None:  # the row lies in memory as NumPy sums it: summed there
                self.helpers["pairwise_sum"] = _PAIRWISE
                n = self.arg(ir.Param(numel(reduce.rvars), "rnumel"))
                buffer = self.arg(reduce.body.buffer)
                name = self.fresh("red")
                zero = ops.constant(-0.0, body)
                pairwise = f"pairwise_sum({buffer}, {self._affine(start)}, {n}, {zero})"
                total = f"{ops.reduction_start('sum', body)} + {pairwise}"  # NumPy's start, +0.0
                w.line(f"{name} = {ops.cast(total, body, reduce.dtype)}")
                self.memo[self._key(reduce)] = name
                return
        if kind in ("max", "min") and body.kind == "f":
            self._float_extremum(reduce)
            return
        if len(reduce.rvars) == 1 and (kind in ("max", "min") or (
                kind in ("sum", "prod") and body.kind in "iu")):  # fmt: skip
            self._lanes(reduce)
            return
        acc = self.fresh("acc")
        if kind in ("any", "all"):
            w.line(f"{acc} = {'False' if kind == 'any' else 'True'}")
        else:
            w.line(f"{acc} = {ops.reduction_start(kind, body)}")
        if kind in ("argmax", "argmin"):
            w.line(f"{acc}_i = -1")
            w.line(f"{acc}_at = -1")
        self._r_loops(reduce.rvars)
        value = self._value(reduce.body)
        if kind in ("argmax", "argmin"):
            better = ">" if kind == "argmax" else "<"
            w.line(f"{acc}_at += 1")
            w.line(f"if {acc}_i < 0 or ({value} != {value} and {acc} == {acc}) "
                   f"or {value} {better} {acc}:")  # fmt: skip
            w.line(f"    {acc} = {value}")
            w.line(f"    {acc}_i = {acc}_at")
        elif kind == "any":
            w.line(f"{acc} = {acc} or ({value} != 0)")
        elif kind == "all":
            w.line(f"{acc} = {acc} and ({value} != 0)")
        else:
            ufunc = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}[kind]
            w.line(f"{acc} = {ops.type_name(body)}(np.{ufunc}({acc}, {value}))")
        self._close_r_loops(reduce.rvars)
        if kind in ("argmax", "argmin"):
            text = f"np.int64({acc}_i)"
        elif kind in ("any", "all"):
            text = acc
        else:
            text = ops.cast(acc, body, reduce.dtype)
        name = self.fresh("red")
        w.line(f"{name} = {text}")
        self.memo[self._key(reduce)] = name

    def _pairwise_sum(self, reduce: ir.Reduce) -> None:
        """A float sum in NumPy's order: its start, +0.0, plus rows of fewer than 8 in a chain,
        longer ones written to this chunk's row buffer and summed by NumPy's pairwise algorithm
        (8 partial sums per block of 128, blocks added as a balanced tree): bit for bit NumPy's
        sum along the operand's trailing axes (a chain from +0.0 is NumPy's +0.0 plus its
        pairwise chain from -0.0: they part on the sign of a zero only)."""
        w, body = self.w, reduce.body.dtype
        t = ops.type_name(body)
        n = self.arg(ir.Param(numel(reduce.rvars), "rnumel"))
        acc = self.fresh("acc")
        self.helpers["pairwise_sum"] = _PAIRWISE
        w.line(f"{acc} = {ops.reduction_start('sum', body)}")
        self.hoist.append((len(w.lines), w.level))  # x values go before both branches
        row, at = self.scratch[id(reduce)], self.fresh("at")
        w.line(f"{at} = 0")
        if reduce.compact:  # the selected values alone, in order: NumPy's sum of x[m]
            self._r_loops(reduce.rvars)
            w.line(f"if {self._value(reduce.body.condition)}:")
            w.level += 1  # the value is computed where selected only
            w.line(f"{row}[{_element(at)}] = {self._value(reduce.body.then)}")
            w.line(f"{at} += 1")
            w.level -= 1
            self._close_r_loops(reduce.rvars)
            w.line(f"{acc} = {t}(np.add({acc}, pairwise_sum({row}, 0, {at}, {t}(-0.0))))")
            self.hoist.pop()
            name = self.fresh("red")
            w.line(f"{name} = {ops.cast(acc, body, reduce.dtype)}")
            self.memo[self._key(reduce)] = name
            return
        w.line(f"if {n} < 8:")
        w.level += 1
        self._r_loops(reduce.rvars)
        value = self._value(reduce.body)
        w.line(f"{row}[{_element(at)}] = {value}")
        w.line(f"{at} += 1")
        w.line(f"{acc} = {t}(np.add({acc}, {value}))")
        self._close_r_loops(reduce.rvars)
        w.level -= 1
        w.line("else:")
        w.level += 1
        self._r_loops(reduce.rvars)
        w.line(f"{row}[{_element(at)}] = {self._value(reduce.body)}")
        w.line(f"{at} += 1")
        self._close_r_loops(reduce.rvars)
        w.line(f"{acc} = {t}(np.add({acc}, pairwise_sum({row}, 0, {n}, {t}(-0.0))))")
        w.level -= 1
        self.hoist.pop()
        if len(reduce.rvars) == 1:  # later loops over the row read the values kept there
            self.rows[self._key(reduce.body)] = (row, reduce.rvars[0])
        name = self.fresh("red")
        w.line(f"{name} = {ops.cast(acc, body, reduce.dtype)}")
        self.memo[self._key(reduce)] = name

    def _float_extremum(self, reduce: ir.Reduce) -> None:
        """A float max or min in one chain of LLVM's NaN-propagating maximum (minimum), which
        LLVM vectorizes. NumPy's reductions are SIMD too: a row of -0.0 and +0.0 may give
        either zero there, +0.0 (max) or -0.0 (min) here; NaN when any element is NaN."""
        w, t = self.w, ops.type_name(reduce.body.dtype)
        step = "nan_maximum" if reduce.kind == "max" else "nan_minimum"
        self.helpers[step] = ops.INTRINSIC.format(name=step)
        acc = self.fresh("acc")
        w.line(f"{acc} = {ops.reduction_start(reduce.kind, reduce.body.dtype)}")
        self._r_loops(reduce.rvars)
        w.line(f"{acc} = {step}({acc}, {t}({self._value(reduce.body)}))")
        self._close_r_loops(reduce.rvars)
        name = self.fresh("red")
        w.line(f"{name} = {ops.cast(acc, reduce.body.dtype, reduce.dtype)}")
        self.memo[self._key(reduce)] = name

    def _lanes(self, reduce: ir.Reduce) -> None:
        """A reduction whose order changes nothing (max and min, integer sums and products:
        wrap-around arithmetic is associative) in ``LANES`` independent chains, so that one
        step need not wait for the last."""
        w, (var,) = self.w, reduce.rvars
        t, body = ops.type_name(reduce.body.dtype), reduce.body.dtype
        ufunc = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}[reduce.kind]
        n = self.arg(var.size)
        name = self.var_names.get(var) or f"r{len(self.var_names) - len(self.kernel.xvars)}"
        self.var_names[var] = name
        lanes = [self.fresh("lane") for _ in range(LANES)]
        w.line(" = ".join(lanes) + f" = {ops.reduction_start(reduce.kind, body)}")
        block = self.fresh("rb")
        self.hoist.append((len(w.lines), w.level))
        w.line(f"for {block} in range(0, {n} - {n} % {LANES}, {LANES}):")
        w.level += 1
        self.open_rvars.append(var)
        for k, lane in enumerate(lanes):
            w.line(f"{name} = {block} + {k}" if k else f"{name} = {block}")
            w.line(f"{lane} = {t}(np.{ufunc}({lane}, {self._value(reduce.body)}))")
            self.memo = {key: v for key, v in self.memo.items() if key[0] == "x"}
        w.level -= 1
        w.line(f"for {name} in range({n} - {n} % {LANES}, {n}):")
        w.level += 1
        w.line(f"{lanes[0]} = {t}(np.{ufunc}({lanes[0]}, {self._value(reduce.body)}))")
        w.level -= 1
        self.open_rvars.pop()
        self.hoist.pop()
        self.memo = {key: v for key, v in self.memo.items() if key[0] == "x"}
        while len(lanes) > 1:
            lanes = [f"{t}(np.{ufunc}({a}, {b}))" for a, b in zip(lanes[::2], lanes[1::2])]
        result = self.fresh("red")
        w.line(f"{result} = {ops.cast(lanes[0], body, reduce.dtype)}")
        self.memo[self._key(reduce)] = result

    # -- values ------------------------------------------------------------------------------------
    def _store(self, store: ir.Store) -> None:
        value = self._value(store.value)
        buffer = self.arg(store.buffer)
        if isinstance(store.index, ir.Gather):
            address = self._gathered(store.index)
        else:
            address = self._affine(store.index)
        if store.accumulate:  # serial: repeated indices add up in NumPy's order
            dtype = ops.type_name(store.buffer.dtype)
            at = _element(address)
            self.w.line(f"{buffer}[{at}] = {dtype}(np.add({buffer}[{at}], {value}))")
        else:
            self.w.line(f"{buffer}[{_element(address)}] = {value}")

    def _emit(self, expr: ir.Expr, text: str) -> str:
        """``name = text``: before the current row loops where it varies only with x."""
        name = self.fresh()
        self._line(expr, f"{name} = {text}")
        self.memo[self._key(expr)] = name
        return name

    def _line(self, expr: ir.Expr, text: str) -> None:
        if self.hoist and self._scope(expr) == "x":
            at, level = self.hoist[0]
            self.w.lines.insert(at, "    " * level + text)
            self.hoist = [(i + 1, lv) for i, lv in self.hoist]
        else:
            self.w.line(text)

    def _compacted(self, stores: list[ir.Store]) -> None:
        """A compaction's point. The count run computes the selection, keeps it in a byte per
        point (``mask``) and counts it (no branch on the data); the write run reads it back
        and computes the values (one per store: the positions of ``np.nonzero``'s dims)
        where selected only, storing them at the next position. A selection that costs more
        than a byte's load (``np.exp(x) > 2``) is computed once."""
        w, xvars = self.w, self.kernel.xvars
        last = self.var_names[xvars[-1]]
        flat = f"xo * {self.arg(xvars[-1].size)} + {last}" if len(xvars) > 1 else last
        mask = f"{self.arg('mask')}[{_element(flat)}]"
        before = dict(self.memo)
        w.line(f"if {self.arg('fill')}:")
        w.level += 1
        w.line(f"if {mask}:")
        w.level += 1
        for store in stores:
            w.line(f"{self.arg(store.buffer)}[{_element('at')}] = {self._value(store.value)}")
        w.line("at += 1")
        w.level -= 2
        self.memo = before  # the values above were computed in the other branch
        w.line("else:")
        w.level += 1
        selected = self._value(stores[0].index.selected)
        w.line(f"{mask} = {selected}")
        w.line(f"at += np.int64({selected})")
        w.level -= 1

    def _value(self, expr: ir.Expr) -> str:  # noqa: C901 - one branch per expression kind
        """The name holding ``expr``, emitting what it needs first (once per scope)."""
        key = self._key(expr)
        if key in self.memo:
            return self.memo[key]
        if isinstance(expr, ir.Reduce):
            self._reduction(expr)  # a reduction nested in another's body
            return self.memo[key]
        kept = self.rows.get(key)
        if kept is not None and kept[1] in self.open_rvars:  # summed already: in the row buffer
            return self._emit(expr, f"{kept[0]}[{_element(self.var_names[kept[1]])}]")
        if isinstance(expr, ir.Load):
            index = expr.index
            address = self._gathered(index) if isinstance(index, ir.Gather) else self._affine(index)
            text = f"{self.arg(expr.buffer)}[{_element(address)}]"
        elif isinstance(expr, ir.Constant):
            text = ops.constant(expr.value, expr.dtype, self.helpers)
        elif isinstance(expr, ir.IndexValue):
            text = f"np.int64({self._affine(expr.index)})"
        elif isinstance(expr, ir.Cast):
            value = self._value(expr.value)
            if expr.checked:  # NumPy raises ValueError or OverflowError
                bad = ops.unassignable(value, expr.value.dtype, expr.dtype)
                self._check(expr, bad)
            elif expr.value.dtype.kind == "f" and expr.dtype.kind in "iu":
                # NaN, infinities, 1e30: NumPy gives the machine's value (and warns): its own
                bounds = ops.cast_bounds(expr.dtype)
                self._check(expr, ops.outside(value, expr.value.dtype, bounds))
            text = ops.cast(value, expr.value.dtype, expr.dtype)
        elif isinstance(expr, ir.Where):
            c, a, b = (self._value(x) for x in expr.children())
            text = f"{a} if {c} else {b}"
        elif isinstance(expr, ir.Op):
            args = [self._value(a) for a in expr.args]
            if expr.ufunc is np.power and expr.in_dtypes[1].kind == "i":
                self._check(expr, f"{args[1]} < 0")  # NumPy raises ValueError
            text = ops.op(expr.ufunc, expr.in_dtypes, expr.dtype, args, self.helpers)
        else:
            raise AssertionError(expr)
        return self._emit(expr, text)

    def _check(self, expr: ir.Expr, condition: str) -> None:
        """Raise the plan's error flag where ``condition`` holds (the call then fails and the
        frame runs eagerly, raising NumPy's own error)."""
        self.checks = True
        self._line(expr, f"if {condition}:")
        self._line(expr, f"    {self.arg('error')}[0] = 1")

    def _gathered(self, index: ir.Gather) -> str:
        """The position of a `Gather` index: a negative value counts from the end; a checked
        value out of range raises the error flag (and reads or writes element 0)."""
        value = self._value(index.value)
        size, stride = self.arg(index.size), self.arg(index.coefficient)
        name = self.fresh("g")
        self._line(index.value, f"{name} = np.int64({value})")
        if index.checked:
            self.checks = True
            error = self.arg("error")
            for text in (f"if {name} < -{size} or {name} >= {size}:", f"    {error}[0] = 1",
                         f"    {name} = 0", f"elif {name} < 0:", f"    {name} += {size}"):  # fmt: skip
                self._line(index.value, text)
        base = self._affine(index.base)
        return f"{base} + {stride} * {name}" if base != "0" else f"{stride} * {name}"

    def _affine(self, index: ir.Affine) -> str:
        parts = [self.arg(index.offset)] if index.offset is not None else []
        for var, coefficient in index.terms:
            parts.append(f"{self.arg(coefficient)} * {self.var_names[var]}")
        return " + ".join(parts) or "0"


def _element(address: str) -> str:
    """An element position as an index: unsigned, so numba adds no wrap-around for negative
    indices (a select per access that keeps LLVM from vectorizing the loop: 10x on a row of
    float32 exp). Every position a kernel computes is within its buffer, so never negative."""
    return f"np.uint64({address})"


def _contiguous_load(reduce: ir.Reduce) -> ir.Affine | None:
    """Where a reduction's row starts, when its body is a load of consecutive elements (in
    the rows' C order): the index without the row's terms; else None."""
    load = reduce.body
    if not isinstance(load, ir.Load) or not isinstance(load.index, ir.Affine):
        return None
    coefficients = {v: c.value for v, c in load.index.terms if v in reduce.rvars}
    step = 1
    for var in reversed(reduce.rvars):
        if var.size.value != 1 and coefficients.get(var) != step:
            return None
        step *= var.size.value
    terms = tuple((v, c) for v, c in load.index.terms if v not in reduce.rvars)
    return ir.Affine(load.index.offset, terms)
