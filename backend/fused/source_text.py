"""What every kernel code generator writes alike: lines with indentation (`CodeWriter`), the
names of a kernel's arguments and temporaries and the structural keys of its expressions
(`KernelNames`: a value is computed once per scope), and keys of loop-IR indices."""

from __future__ import annotations

import numpy as np

from . import loop_ir as ir


class CodeWriter:
    """Lines with indentation: ``with w.indent(): ...``."""

    def __init__(self, level: int = 0):
        self.lines: list[str] = []
        self.level = level

    def line(self, text: str = "") -> None:
        self.lines.append("    " * self.level + text if text else "")

    def indent(self):
        writer = self

        class _Indent:
            def __enter__(self):
                writer.level += 1

            def __exit__(self, *exc):
                writer.level -= 1

        return _Indent()

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


class KernelNames:
    """A code generator's names: each argument named by its role and order, never by its value
    (``in0``, ``out1``, ``n2``), so one source serves every shape; temporaries ``v1``, ``v2``.
    The generator sets ``writes`` (the kernel's written buffers); ``buffer_suffix`` and
    ``error_name`` say how its language names buffers and the error flag."""

    buffer_suffix = ""
    error_name = "err"

    def __init__(self):
        self.args: list = []  # Buffer | Param | "error" | a compaction's role, in order
        self.arg_names: dict[int, str] = {}
        self.counts: dict[str, int] = {}
        self.keys: dict[int, tuple] = {}  # id(expression) -> its structural key
        self.tmp = 0

    def arg(self, obj) -> str:
        key = id(obj)
        if key not in self.arg_names:
            if isinstance(obj, ir.Buffer):
                role = "out" if obj in self.writes else "in"
                name = self._count(role + self.buffer_suffix)
            elif obj == "error":
                name = self.error_name
            elif isinstance(obj, str):  # a compaction's "counts", "mask" and "fill"
                name = obj
            else:
                name = self._count(obj.role)
            self.arg_names[key] = name
            self.args.append(obj)
        return self.arg_names[key]

    def _count(self, role: str) -> str:
        n = self.counts.get(role, 0)
        self.counts[role] = n + 1
        return f"{role}{n}"

    def fresh(self, prefix: str = "v") -> str:
        self.tmp += 1
        return f"{prefix}{self.tmp}"

    # -- structural keys: an expression computed once per scope -----------------------------------
    distinct_reductions = False  # whether equal reductions still get one value each

    def _scope(self, expr: ir.Expr) -> str:
        return "r" if ir.free_vars(expr) & set(self.kernel.rvars) else "x"

    def _key(self, expr: ir.Expr) -> tuple:
        """A structural key: two expressions with equal keys compute the same values."""
        key = self.keys.get(id(expr))
        if key is not None:
            return key
        if isinstance(expr, ir.Load):
            index = expr.index
            if isinstance(index, ir.Gather):
                ikey = ("gather", affine_key(index.base), self._key(index.value),
                        index.size.value, index.coefficient.value, index.checked)  # fmt: skip
            else:
                ikey = affine_key(index)
            body = ("load", id(expr.buffer), ikey)
        elif isinstance(expr, ir.Constant):
            body = ("const", np.asarray(expr.value, dtype=expr.dtype).tobytes(), str(expr.dtype))
        elif isinstance(expr, ir.IndexValue):
            body = ("index", affine_key(expr.index))
        elif isinstance(expr, ir.Op):
            body = ("op", expr.ufunc.__name__, expr.output, tuple(map(str, expr.in_dtypes)),
                    tuple(self._key(a) for a in expr.args))  # fmt: skip
        elif isinstance(expr, ir.Cast):
            body = ("cast", str(expr.dtype), expr.checked, self._key(expr.value))
        elif isinstance(expr, ir.Where):
            body = ("where", *(self._key(c) for c in expr.children()))
        elif isinstance(expr, ir.Reduce):
            own = (id(expr),) if self.distinct_reductions else ()
            body = ("reduce", expr.kind, str(expr.dtype), *own, self._key(expr.body))
        else:
            raise AssertionError(expr)
        key = (self._scope(expr), body)
        self.keys[id(expr)] = key
        return key


def affine_key(index: ir.Affine) -> tuple:
    """A structural key of an affine index (equal keys: the same element)."""
    return (index.offset.value if index.offset is not None else 0,
            tuple((id(v), c.value) for v, c in index.terms))  # fmt: skip


def numel(vars_) -> int:
    """The number of points of iteration variables ``vars_``."""
    return int(np.prod([v.size.value for v in vars_], dtype=np.int64))
