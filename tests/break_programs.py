"""Source-text corpus for the "break everywhere" tests, and the machinery that inserts graph breaks.

Each `Program` is the source of one small NumPy function (5-10 statements mixing arrays, Python
scalars, lists, dicts, user objects, closures, keyword calls, method calls, in-place updates of
inputs and calls to the helpers of `HELPERS_SRC`) and a factory for its arguments. `variants()`
re-creates the function with one breaking line inserted before every statement (and at the end of
every nested block), at the statement's indentation:

    print("B", <the last variable assigned before that point that prints deterministically>)
    tc.graph_break()
    if <first argument>.sum() > 1e9: pass          # data-dependent branch, never taken

Every variant is compiled from text with `compile()` under its own pseudo file name (registered in
`linecache`, so tracebacks and break reports can show the source) and `exec`-ed in a fresh
namespace that first gets the helpers. Conventions of the corpus: the first parameter is a float
array that is never rebound to anything else, and nothing is random.
"""

from __future__ import annotations

import ast
import contextlib
import io
import linecache
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

HELPERS_FILE = "<tc-break-helpers>"

HELPERS_SRC = textwrap.dedent(
    """
    import contextlib
    import numpy as np
    import tcompile as tc

    OFFSET = 0.5


    class Acc:
        def __init__(self, w):
            self.w = w
            self.n = 0
            self.log = []

        def scale(self, v, k=1.0):
            return v * self.w * k

        def push(self, v):
            self.log.append(v)
            self.n += 1
            return self.n

        def mix(self, v, marker, k=1):
            return v * self.w + k if marker is None else v


    def take3(a, marker, b):
        return a * 2.0 + b if marker is None else a


    def affine(v, a=1.0, b=0.0):
        return v * a + b


    def norm2(v):
        return np.sqrt((v * v).sum())


    def combine(u, v, *, w=0.5):
        return u * w + v * (1.0 - w)


    def stats(v):
        return {"mean": v.mean(), "max": v.max()}


    def inner_most(v):
        return v * 3.0 - 1.0


    def helper_chain(v):
        return inner_most(v + 1.0) / 2.0


    def noisy(v):
        w = v + 1.0
        print("noisy", w.shape)
        return w * 0.5


    def check_positive(v):
        if v.min() <= 0:
            raise ValueError(f"non-positive minimum {v.min():.3f}")
        return v
    """
)


def _register_source(filename: str, source: str) -> None:
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)


def fresh_namespace() -> dict[str, Any]:
    """A new module-like namespace holding the helpers (fresh code objects every time)."""
    ns: dict[str, Any] = {"__name__": "tc_break_programs", "__builtins__": __builtins__}
    _register_source(HELPERS_FILE, HELPERS_SRC)
    exec(compile(HELPERS_SRC, HELPERS_FILE, "exec"), ns)  # noqa: S102
    return ns


def build(source: str, name: str, filename: str) -> tuple[Callable[..., Any], dict[str, Any]]:
    """Define the function `name` from `source` (under `filename`) in a fresh namespace."""
    ns = fresh_namespace()
    _register_source(filename, source)
    exec(compile(source, filename, "exec"), ns)  # noqa: S102
    return ns[name], ns


# ---------------------------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------------------------

_rng = np.random.default_rng(1234)
V4 = np.array([0.5, -1.25, 2.0, 0.75])
W4 = np.array([1.5, 0.25, -0.5, 3.0])
M34 = np.arange(12, dtype=np.float64).reshape(3, 4) / 5.0 - 0.7
R34 = _rng.standard_normal((3, 4))
V12 = np.linspace(-1.0, 2.0, 12)
I4 = np.array([3, -2, 7, 0], dtype=np.int64)


@dataclass(frozen=True)
class Program:
    name: str
    source: str
    make_args: Callable[[dict[str, Any]], tuple]  # gets the namespace (for its classes)
    raises: bool = False  # eager raises: also compare the traceback's last frame
    # array data flows into a Python value (here: an exception message) that frames after a
    # break may specialize on, so new array values may legitimately recompile
    value_specialized: bool = False

    def args(self, ns: dict[str, Any]) -> tuple:
        return self.make_args(ns)


def _p(name: str, body: str, make_args, raises=False, value_specialized=False) -> Program:
    source = textwrap.dedent(body).strip("\n") + "\n"
    return Program(name, source, make_args, raises, value_specialized)


PROGRAMS: list[Program] = [
    _p(
        "arith_scalars",
        """
        def arith_scalars(x, k):
            y = x * k
            s = k + 1.0
            z = y + s
            z = np.maximum(z, 0.5)
            t = z.sum() * 2
            u = float(k) ** 2 - t
            return z, t, s, u
        """,
        lambda ns: (V4.copy(), 1.5),
    ),
    _p(
        "list_ops",
        """
        def list_ops(x, log):
            log.append(x.shape[0])
            y = x - 1.0
            log.append(y)
            items = [y, x * 2.0]
            items.append(y.mean())
            total = items[0] + items[1]
            log.extend([1, 2])
            n = len(log)
            return total, items, n
        """,
        lambda ns: (W4.copy(), ["start"]),
    ),
    _p(
        "dict_ops",
        """
        def dict_ops(x, d):
            d["a"] = x * 2.0
            st = stats(x)
            d["mean"] = st["mean"]
            y = d["a"] + d.get("b", 0.0)
            d.pop("old", None)
            keys = list(d)
            return y, keys, st
        """,
        lambda ns: (V4.copy(), {"old": 1, "b": 0.25}),
    ),
    _p(
        "user_object",
        """
        def user_object(x, acc):
            acc.w = acc.w + 1.0
            y = acc.scale(x, k=2.0)
            n = acc.push(y.sum())
            acc.last = y
            z = y + n
            m = acc.n * 10
            return z, m
        """,
        lambda ns: (M34.copy(), ns["Acc"](0.5)),
    ),
    _p(
        "closure_nonlocal",
        """
        def closure_nonlocal(x):
            count = 0
            scale = 2.0
            def bump(v):
                nonlocal count
                count += 1
                return v * scale
            y = bump(x)
            y = bump(y) + count
            scale = 3.0
            z = bump(y)
            return z, count, scale
        """,
        lambda ns: (V4.copy(),),
    ),
    _p(
        "keyword_calls",
        """
        def keyword_calls(x, y):
            a = affine(x, a=2.0, b=-1.0)
            b = combine(a, y, w=0.25)
            c = np.clip(b, a_min=-1.0, a_max=1.0)
            d = np.sum(c, axis=0, keepdims=True)
            e = np.linspace(0.0, 1.0, num=4)
            f = np.round(c * e, decimals=3)
            return f, d
        """,
        lambda ns: (R34.copy(), W4.copy()),
    ),
    _p(
        "inplace_inputs",
        """
        def inplace_inputs(x, y):
            x += 1.0
            y[0] = x[1, 0]
            x[:, 1] *= 2.0
            v = x.T
            y -= v.sum(axis=1).mean()
            np.add(x, y, out=x)
            return x, y, v
        """,
        lambda ns: (M34.copy(), V4.copy()),
    ),
    _p(
        "method_chains",
        """
        def method_chains(x):
            y = x.reshape(3, 4)
            z = y.T.copy()
            m = z.mean(axis=1)
            s = np.sort(m)[::-1]
            r = y.astype(np.float32).sum()
            shape = z.shape
            return s, r, shape, y
        """,
        lambda ns: (V12.copy(),),
    ),
    _p(
        "helper_calls",
        """
        def helper_calls(x, k):
            a = norm2(x)
            b = affine(x, k)
            c = combine(b, x)
            d = helper_chain(c)
            e = d * a
            return a, e
        """,
        lambda ns: (W4.copy(), 3.0),
    ),
    _p(
        "python_scalars",
        """
        def python_scalars(x, n):
            total = 0
            total += n
            flag = n > 2
            half = n / 2
            name = "v" + str(n)
            y = x * half if flag else x
            pair = (total, half)
            return y, pair, flag, name
        """,
        lambda ns: (V4.copy(), 5),
    ),
    _p(
        "tuple_unpack",
        """
        def tuple_unpack(x):
            a, b = x[:2], x[2:]
            (c, d), e = (a * 2.0, b * 3.0), a.sum()
            first, *rest = [c, d, e]
            w = np.concatenate([first, rest[0]])
            v = w[::2]
            return w, rest[1], e, v
        """,
        lambda ns: (W4.copy(),),
    ),
    _p(
        "known_if",
        """
        def known_if(x, mode):
            y = x * 2.0
            if mode == "fast":
                z = y + 1.0
                w = z * 2.0
            else:
                z = y - 1.0
                w = z / 2.0
            out = w + z
            return out, mode
        """,
        lambda ns: (V4.copy(), "fast"),
    ),
    _p(
        "known_if_else",
        """
        def known_if_else(x, n):
            y = x + n
            if n > 3:
                y = y * 2.0
            else:
                y = y - 2.0
                n = n + 1
            z = y.sum() + n
            return y, z
        """,
        lambda ns: (W4.copy(), 2),
    ),
    _p(
        "const_loop",
        """
        def const_loop(x):
            acc = np.zeros_like(x)
            for i in range(3):
                acc = acc + x * i
                acc[0] = i
            steps = [acc.sum()]
            return acc, steps
        """,
        lambda ns: (V4.copy(),),
    ),
    _p(
        "errstate_block",
        """
        def errstate_block(x):
            with np.errstate(divide="ignore", invalid="ignore"):
                y = 1.0 / (x - x)
                z = np.log(x - 10.0)
            w = np.nan_to_num(y) + np.nan_to_num(z)
            return w, y, z
        """,
        lambda ns: (W4.copy(),),
    ),
    _p(
        "nested_structures",
        """
        def nested_structures(x, cfg):
            s = cfg["scale"]
            out = {}
            for i, name in enumerate(cfg["names"]):
                out[name] = x * (s + i)
            pair = (out["a"], out["b"])
            stacked = np.stack(pair)
            cfg["used"] = True
            return stacked, out, cfg["names"]
        """,
        lambda ns: (V4.copy(), {"scale": 2.0, "names": ["a", "b"]}),
    ),
    _p(
        "globals_rw",
        """
        def globals_rw(x):
            global LAST
            y = x + OFFSET
            LAST = y
            z = LAST * 2.0
            w = z - OFFSET
            return w, LAST
        """,
        lambda ns: (M34.copy(),),
    ),
    _p(
        "dtypes_mix",
        """
        def dtypes_mix(x, i):
            a = i * 2
            b = a + x
            c = a // 3
            d = (c % 2).astype(bool)
            e = np.where(d, b, -b)
            f = e.astype(np.float32) + np.float32(0.5)
            return e, c, d, f
        """,
        lambda ns: (V4.copy(), I4.copy()),
    ),
    _p(
        "raise_keyerror",
        """
        def raise_keyerror(x, d):
            y = x * 2.0
            d["seen"] = y.sum()
            key = "k" + str(len(d))
            z = y + d["a"]
            return z + d[key]
        """,
        lambda ns: (V4.copy(), {"a": 1.0}),
        raises=True,
    ),
    _p(
        "raise_in_helper",
        """
        def raise_in_helper(x):
            y = x + 1.0
            z = y * 2.0
            w = check_positive(z - 10.0)
            return w
        """,
        lambda ns: (W4.copy(),),
        raises=True,
        value_specialized=True,
    ),
    _p(
        "raise_reshape",
        """
        def raise_reshape(x, log):
            log.append("before")
            y = x * 3.0
            log.append(y.shape)
            z = y.reshape(5, 5)
            return z
        """,
        lambda ns: (M34.copy(), []),
        raises=True,
    ),
]


# ---------------------------------------------------------------------------------------------
# Where to insert, and what
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """Insert a line before 0-based line `line` at indentation `col`; `live` are the names assigned
    (in textual order) before that point in the enclosing blocks."""

    line: int
    col: int
    live: tuple[str, ...]


def _targets(node: ast.AST) -> list[str]:
    names: list[str] = []
    if isinstance(node, (ast.Assign,)):
        tgts = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        tgts = [node.target]
    elif isinstance(node, (ast.For,)):
        tgts = [node.target]
    elif isinstance(node, ast.With):
        tgts = [item.optional_vars for item in node.items if item.optional_vars is not None]
    else:
        tgts = []
    for t in tgts:
        for n in ast.walk(t):
            if isinstance(n, ast.Name):
                names.append(n.id)
    return names


def _assigned_in(stmts: list[ast.stmt]) -> list[str]:
    out: list[str] = []
    for s in stmts:
        out += _targets(s)
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            out += _assigned_in(getattr(s, field, []) or [])
        for h in getattr(s, "handlers", []) or []:
            out += _assigned_in(h.body)
    return out


def insertion_points(source: str) -> list[Point]:
    """Before every statement of the (single) function in `source`, at any depth except inside
    nested functions, and after the last statement of every nested block (unless it returns)."""
    fn = ast.parse(source).body[0]
    assert isinstance(fn, ast.FunctionDef)
    params = tuple(a.arg for a in fn.args.args)
    points: list[Point] = []

    def walk(block: list[ast.stmt], before: tuple[str, ...], nested: bool) -> None:
        live = before
        for s in block:
            points.append(Point(s.lineno - 1, s.col_offset, live))
            if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = live + tuple(_targets(s)) if isinstance(s, (ast.For, ast.With)) else live
                for field in ("body", "orelse", "finalbody"):
                    sub = getattr(s, field, []) or []
                    if sub:
                        walk(sub, inner, True)
                for h in getattr(s, "handlers", []) or []:
                    walk(h.body, inner, True)
            live = (
                live
                + tuple(_targets(s))
                + tuple(
                    n
                    for f in ("body", "orelse", "finalbody")
                    for n in _assigned_in(getattr(s, f, []) or [])
                )
            )
        last = block[-1]
        if nested and not isinstance(last, (ast.Return, ast.Raise)):
            points.append(Point(last.end_lineno, last.col_offset, live))

    walk(fn.body, params, False)
    points.sort(key=lambda p: (p.line, -p.col))
    return points


def is_printable(v: Any, depth: int = 0) -> bool:
    """Values whose `print` output is deterministic (no addresses) across copies."""
    if depth > 3:
        return False
    if v is None or type(v) in (bool, int, float, complex, str):
        return True
    if isinstance(v, np.ndarray):
        return v.dtype != object
    if isinstance(v, np.generic):
        return True
    if type(v) in (list, tuple):
        return all(is_printable(e, depth + 1) for e in v)
    if type(v) is dict:
        return all(type(k) is str and is_printable(e, depth + 1) for k, e in v.items())
    return False


def observe_printable(fn: Callable[..., Any], args: tuple) -> dict[str, bool]:
    """Run `fn` eagerly under `sys.settrace`; for each local ever bound, whether every value it held
    at a line or return event was printable."""
    seen: dict[str, bool] = {}
    code = fn.__code__

    def local(frame, event, arg):
        if event in ("line", "return"):
            for k, v in frame.f_locals.items():
                seen[k] = seen.get(k, True) and is_printable(v)
        return local

    def glob(frame, event, arg):
        return local if frame.f_code is code else None

    old = sys.gettrace()
    sys.settrace(glob)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(Exception):
            fn(*args)
    finally:
        sys.settrace(old)
    return seen


BREAK_KINDS = ("print", "graph_break", "branch")


def break_line(kind: str, point: Point, printable: dict[str, bool], first: str) -> str:
    if kind == "print":
        names = [n for n in point.live if printable.get(n, False)]
        return f'print("B", {names[-1] if names else first})'
    if kind == "graph_break":
        return "tc.graph_break()"
    if kind == "branch":
        return f"if {first}.sum() > 1e9: pass"
    raise ValueError(kind)


def insert_line(source: str, point: Point, text: str) -> str:
    lines = source.splitlines(keepends=True)
    lines.insert(point.line, " " * point.col + text + "\n")
    return "".join(lines)


@dataclass(frozen=True)
class Variant:
    program: Program
    kind: str
    index: int  # which insertion point
    source: str

    @property
    def id(self) -> str:
        return f"{self.program.name}-{self.kind}-{self.index}"

    @property
    def filename(self) -> str:
        return f"<tc-break {self.id}>"

    def build(self) -> tuple[Callable[..., Any], dict[str, Any]]:
        return build(self.source, self.program.name, self.filename)


def variants(program: Program) -> list[Variant]:
    fn, ns = build(program.source, program.name, f"<tc-break {program.name}>")
    printable = observe_printable(fn, program.args(ns))
    first = fn.__code__.co_varnames[0]
    out = []
    for i, point in enumerate(insertion_points(program.source)):
        for kind in BREAK_KINDS:
            text = break_line(kind, point, printable, first)
            out.append(Variant(program, kind, i, insert_line(program.source, point, text)))
    return out


def all_variants() -> list[Variant]:
    return [v for p in PROGRAMS for v in variants(p)]
