"""Graph breaks anywhere must be invisible: compiled (fullgraph=False) behaves exactly like eager.

Part 1 takes every function of `break_programs.PROGRAMS` and inserts a break (a `print` of a live
variable, `tc.graph_break()`, or a never-taken branch on an array value) before every statement and
at the end of every nested block. Each variant must match eager bitwise (results, stdout, mutated
arguments, aliasing, exceptions), also when called again with new array values of the same shapes
(served from the cache), and must emit the same warnings and, when it raises, a traceback whose
last frame is the same file and line as eager's.

Part 2 covers the places a break can sit that straight-line insertion does not reach: values live
on the stack, nested callees, supported and user context managers, loops, try/except, both
branches of known and data-dependent ifs, several breaks in a row, returns that hand back inputs,
side effects on pre-existing objects, nonlocal/global writes, exceptions raised after a break.

Templates use `BREAK(expr)` on a line of its own (a statement break: `print("B", expr)`,
`tc.graph_break()` or `if x.sum() > 1e9: pass`) and `BRK` inside an expression (an expression
that evaluates to None: `print("S", x)`, `tc.graph_break()`, `(0 if x.sum() > 1e9 else None)`).
"""

from __future__ import annotations

import re
import textwrap
import traceback
import warnings
from collections.abc import Callable
from typing import Any

import break_programs as bp
import numpy as np
import pytest
from harness import (
    assert_same,
    assert_same_outcome,
    check_same,
    check_same_calls,
    fresh_args,
    perturbed,
    run_captured,
)

import tcompile as tc

# Several programs divide by zero on purpose; the checks below record and compare warnings
# themselves (`run_with_warnings`), so pytest's own summary need not list them.
# Branches on array values break the graph here, as torch.compile's do (cond nodes off): they
# drive the breaks these tests are about.
pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              pytest.mark.usefixtures("branches_break")]  # fmt: skip

# ---------------------------------------------------------------------------------------------
# Shared checks
# ---------------------------------------------------------------------------------------------


def run_with_warnings(fn: Callable[..., Any], args: tuple, kwargs: dict | None = None):
    """`run_captured` on fresh copies, also recording every warning (category, message)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = run_captured(fn, *fresh_args(args, kwargs or {}))
    return outcome, [(w.category.__name__, str(w.message)) for w in caught]


def last_frame(exc: BaseException) -> tuple[str, int | None]:
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    return frame.filename, frame.lineno


def check_warnings_and_traceback(fn: Callable[..., Any], args: tuple, kwargs: dict | None = None):
    """One more eager and compiled run: same outcome, same warnings, same last traceback frame."""
    eager, e_warn = run_with_warnings(fn, args, kwargs)
    compiled, c_warn = run_with_warnings(
        tc.compile(fn, fullgraph=False, backend="eager"), args, kwargs
    )
    assert_same_outcome(eager, compiled)
    assert c_warn == e_warn, f"warnings differ\n  eager:    {e_warn}\n  compiled: {c_warn}"
    if eager.exc is not None:
        e_tb, c_tb = last_frame(eager.exc), last_frame(compiled.exc)
        full = "".join(traceback.format_exception(compiled.exc))
        assert c_tb == e_tb, (
            f"last traceback frame differs\n  eager:    {e_tb}\n  compiled: {c_tb}\n{full}"
        )
    return eager, compiled


def check_calls(fn: Callable[..., Any], *args: Any, value_specialized: bool = False) -> None:
    """Eager == compiled on `args`; a second call with equal arguments is served from the cache;
    a call with new array values of the same shapes matches too, and is served from the cache
    unless `value_specialized` (array data flows into a Python value, e.g. an exception message
    built with `f"{v.min()}"`, that a later frame may legitimately specialize on)."""
    first = (args, {})
    check_same_calls(fn, [first, first], fullgraph=False, later_calls_hit_cache=True)
    check_same_calls(
        fn, [first, perturbed(*first)], fullgraph=False, later_calls_hit_cache=not value_specialized
    )


# ---------------------------------------------------------------------------------------------
# Part 1: a break before every statement of every corpus program
# ---------------------------------------------------------------------------------------------

VARIANTS = bp.all_variants()


def test_corpus_size():
    assert len(bp.PROGRAMS) >= 15
    assert len(VARIANTS) >= 300


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.id)
def test_break_at_every_statement(variant: bp.Variant):
    fn, ns = variant.build()
    args = variant.program.args(ns)
    try:
        check_calls(fn, *args, value_specialized=variant.program.value_specialized)
        check_warnings_and_traceback(fn, args)
    except AssertionError as e:
        raise AssertionError(f"{e}\n--- variant source ---\n{variant.source}") from None


@pytest.mark.parametrize("program", bp.PROGRAMS, ids=lambda p: p.name)
def test_corpus_program_without_break_matches_eager(program: bp.Program):
    """The unmodified programs as a baseline (their own breaks, if any, included)."""
    fn, ns = bp.build(program.source, program.name, f"<tc-break {program.name}-plain>")
    args = program.args(ns)
    check_calls(fn, *args, value_specialized=program.value_specialized)
    check_warnings_and_traceback(fn, args)


# ---------------------------------------------------------------------------------------------
# Templates
# ---------------------------------------------------------------------------------------------

KINDS = ("print", "graph_break", "branch")
_STMT = re.compile(r"^(?P<indent>\s*)BREAK\((?P<expr>.*)\)\s*$")


def expand(template: str, kind: str, first: str = "x") -> str:
    """Replace `BREAK(expr)` / `BREAK(expr | arr)` lines and `BRK` expressions by breaks of `kind`.

    The branch kind tests `arr.sum()`: `arr` defaults to `expr` when that is a plain name (it must
    then hold an array or NumPy scalar), else to `first`."""
    lines = []
    for line in textwrap.dedent(template).strip("\n").splitlines():
        m = _STMT.match(line)
        if m:
            expr, _, arr = m["expr"].partition(" | ")
            arr = arr or (expr if expr.isidentifier() else first)
            stmt = {
                "print": f'print("B", {expr})',
                "graph_break": "tc.graph_break()",
                "branch": f"if {arr}.sum() > 1e9: pass",
            }[kind]
            line = m["indent"] + stmt
        lines.append(line)
    expr = {
        "print": f'print("S", {first})',
        "graph_break": "tc.graph_break()",
        "branch": f"(0 if {first}.sum() > 1e9 else None)",
    }[kind]
    return "\n".join(lines).replace("BRK", expr) + "\n"


def make(template: str, kind: str, name: str = "f", tag: str = "", first: str = "x"):
    """Build `name` from the expanded template in a fresh namespace (helpers of break_programs)."""
    source = expand(template, kind, first)
    fn, ns = bp.build(source, name, f"<tc-break-test {tag or name} {kind}>")
    fn.__source__ = source
    return fn, ns


def with_source(fn, check: Callable[[], Any]) -> Any:
    try:
        return check()
    except AssertionError as e:
        raise AssertionError(f"{e}\n--- source ---\n{getattr(fn, '__source__', '')}") from None


V4 = np.array([0.5, -1.25, 2.0, 0.75])
W4 = np.array([1.5, 0.25, -0.5, 3.0])
M34 = np.arange(12, dtype=np.float64).reshape(3, 4) / 5.0 - 0.7


def standard_check(template: str, kind: str, *args: Any, tag: str = "") -> None:
    fn, _ = make(template, kind, tag=tag)

    def check():
        check_calls(fn, *args)
        check_warnings_and_traceback(fn, args)

    with_source(fn, check)


# ---------------------------------------------------------------------------------------------
# Breaks with values live on the stack
# ---------------------------------------------------------------------------------------------

STACK = {
    "helper_call_args": """
        def f(x, y):
            a = x * 2.0
            out = take3(a, BRK, y)
            return out
    """,
    "method_call_with_keyword": """
        def f(x, y):
            obj = Acc(2.0)
            z = obj.mix(x, BRK, k=2)
            return z, obj.w
    """,
    "list_display": """
        def f(x, y):
            lst = [x, BRK, y]
            return lst
    """,
    "binary_op_operand": """
        def f(x, y):
            z = x + (BRK or 0)
            return z
    """,
    "dict_display": """
        def f(x, y):
            d = {"a": x, "b": BRK, "c": y * 2.0}
            return d
    """,
    "tuple_display": """
        def f(x, y):
            t = (x, BRK, y.sum())
            return t
    """,
    "nested_binary_ops": """
        def f(x, y):
            z = x * (y + (BRK or 1.5)) - x
            return z
    """,
    "numpy_call_with_keyword": """
        def f(x, y):
            z = np.clip(x * 2.0, (BRK or -1.0), a_max=y.max())
            return z
    """,
    "helper_keyword_call": """
        def f(x, y):
            z = combine(x, y + (BRK or 0.0), w=0.25)
            return z
    """,
    "percent_format": """
        def f(x, y):
            s = "%s|%s" % (x.shape, BRK)
            return s, x
    """,
    "conditional_expression_operand": """
        def f(x, y):
            z = (x if BRK is None else y) * 2.0
            return z
    """,
    "slice_bound": """
        def f(x, y):
            z = x[(BRK or 0) + 1:]
            return z, y
    """,
    "star_call": """
        def f(x, y):
            z = take3(*[x, BRK], b=y)
            return z
    """,
    "method_chain_argument": """
        def f(x, y):
            z = (x * 2.0).reshape((BRK or -1),).sum()
            return z
    """,
    "return_tuple": """
        def f(x, y):
            return x, BRK, y
    """,
    "comprehension_condition": """
        def f(x, y):
            vals = [v * 2.0 for v in (x, y) if BRK is None]
            return vals
    """,
    "lambda_body": """
        def f(x, y):
            g = lambda v: v * 2.0 + (BRK or 0)
            return g(x), g(y)
    """,
    "augmented_assignment_operand": """
        def f(x, y):
            z = x.copy()
            z += y * (BRK or 2.0)
            return z
    """,
    "subscript_store_value": """
        def f(x, y):
            z = x.copy()
            z[1:3] = y[:2] + (BRK or 0.0)
            return z
    """,
    "comparison_chain": """
        def f(x, y):
            ok = 0 < len(x) <= (BRK or 10)
            return ok, x
    """,
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(STACK))
def test_break_with_values_live_on_the_stack(name: str, kind: str):
    standard_check(STACK[name], kind, V4.copy(), W4.copy(), tag=name)


# ---------------------------------------------------------------------------------------------
# Breaks inside nested helpers, 1, 2 and 3 levels deep
# ---------------------------------------------------------------------------------------------

NESTED = """
    def lvl3(v, log):
        w = v * 3.0
        log.append("l3-pre")
        BREAK(w)
        log.append("l3-post")
        return w + 1.0

    def lvl2(v, log):
        u = v - 1.0
        r = lvl3(u, log) * 2.0
        log.append("l2")
        return r + u

    def lvl1(v, log):
        s = v.sum()
        out = lvl2(v, log) / 2.0 + s
        log.append("l1")
        return out

    def f(x, log):
        y = x * 2.0
        log.append("f")
        z = HELPER(y, log)
        return z + y, y, len(log)
"""


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_break_in_nested_helper(depth: int, kind: str):
    helper = {1: "lvl3", 2: "lvl2", 3: "lvl1"}[depth]
    standard_check(
        NESTED.replace("HELPER", helper), kind, M34.copy(), ["start"], tag=f"depth{depth}"
    )


@pytest.mark.parametrize("kind", KINDS)
def test_break_in_helper_called_twice(kind: str):
    template = """
        def helper(v, k):
            a = v + k
            BREAK(a)
            return a * k
        def f(x, y):
            p = helper(x, 2.0)
            q = helper(y, 3.0)
            return p - q, p
    """
    standard_check(template, kind, V4.copy(), W4.copy(), tag="helper-twice")


# ---------------------------------------------------------------------------------------------
# Context managers
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_break_inside_nullcontext(kind: str):
    template = """
        def f(x, log):
            y = x + 1.0
            with contextlib.nullcontext(y) as v:
                log.append("in")
                z = v * 2.0
                BREAK(z)
                z = z + v
                log.append("still in")
            log.append("out")
            return z, v
    """
    standard_check(template, kind, V4.copy(), [], tag="nullcontext")


@pytest.mark.parametrize("kind", KINDS)
def test_break_inside_errstate_keeps_it_silent(kind: str):
    template = """
        def f(x):
            y = x * 2.0
            with np.errstate(all="ignore"):
                a = y / (x - x)
                BREAK(a)
                b = y / (x - x)
                c = np.log(x - 100.0)
                inside = np.geterr()
            after = np.geterr()
            return a, b, c, inside, after
    """
    fn, _ = make(template, kind, tag="errstate")
    eager, compiled = with_source(fn, lambda: check_warnings_and_traceback(fn, (V4.copy(),)))
    _, warned = run_with_warnings(tc.compile(fn, fullgraph=False, backend="eager"), (V4.copy(),))
    assert warned == [], f"ops under np.errstate(all='ignore') warned after a break: {warned}"
    with_source(fn, lambda: check_calls(fn, V4.copy()))


@pytest.mark.parametrize("kind", KINDS)
def test_errstate_is_restored_after_a_block_with_a_break(kind: str):
    """A division by zero after the block warns again, exactly as eager."""
    template = """
        def f(x):
            with np.errstate(divide="ignore"):
                BREAK(x)
                a = 1.0 / (x - x)
            b = 1.0 / (x - x)
            return a, b, np.geterr()["divide"]
    """
    fn, _ = make(template, kind, tag="errstate-restored")
    _, e_warn = run_with_warnings(fn, (V4.copy(),))
    assert e_warn, "eager emits a divide warning after the block"
    with_source(fn, lambda: check_warnings_and_traceback(fn, (V4.copy(),)))


@pytest.mark.parametrize("kind", KINDS)
def test_errstate_raise_after_a_break_raises_the_same(kind: str):
    template = """
        def f(x):
            y = x + 1.0
            with np.errstate(divide="raise"):
                BREAK(y)
                z = y / (x - x)
            return z
    """
    standard_check(template, kind, V4.copy(), tag="errstate-raise")


@pytest.mark.parametrize("kind", KINDS)
def test_break_inside_error_on_graph_break_false_block(kind: str):
    template = """
        def f(x, log):
            y = x * 3.0
            with tc.error_on_graph_break(False):
                log.append(y.sum())
                BREAK(y)
                y = y - 1.0
            return y, log
    """
    standard_check(template, kind, V4.copy(), [], tag="eogb")


SUPPORTED_CMS = {
    "nullcontext": "contextlib.nullcontext()",
    "errstate": 'np.errstate(all="ignore")',
    "error_on_graph_break_false": "tc.error_on_graph_break(False)",
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("cm", list(SUPPORTED_CMS))
def test_two_breaks_inside_one_supported_context_manager(cm: str, kind: str):
    template = f"""
        def f(x, log):
            y = x + 1.0
            with {SUPPORTED_CMS[cm]}:
                log.append("in")
                BREAK(y)
                y = y / (x - x)
                BREAK(y)
                log.append("still in")
                y = np.nan_to_num(y) - 1.0
            log.append("out")
            return y
    """
    standard_check(template, kind, V4.copy(), [], tag=f"two-in-{cm}")


@pytest.mark.parametrize("kind", KINDS)
def test_break_in_nested_supported_context_managers(kind: str):
    template = """
        def f(x, log):
            with contextlib.nullcontext():
                y = x * 2.0
                with np.errstate(divide="ignore"):
                    BREAK(y)
                    z = y / (x - x)
                    log.append("inner")
                BREAK(z)
                w = z + 1.0
            return w, np.geterr()["divide"]
    """
    standard_check(template, kind, V4.copy(), [], tag="nested-cms")


USER_CM = """
    class Recorder:
        def __init__(self, log, swallow=False):
            self.log = log
            self.swallow = swallow

        def __enter__(self):
            self.log.append("enter")
            return self

        def __exit__(self, et, ev, tb):
            self.log.append(("exit", None if et is None else et.__name__))
            return self.swallow
"""


@pytest.mark.parametrize("kind", KINDS)
def test_break_inside_user_context_manager(kind: str):
    template = (
        USER_CM
        + """
    def f(x, log):
        y = x + 1.0
        with Recorder(log) as r:
            r.log.append("body")
            BREAK(y)
            y = y * 2.0
        log.append("after")
        return y, len(log)
    """
    )
    standard_check(template, kind, V4.copy(), [], tag="user-cm")


def test_break_inside_user_context_manager_skips_the_frame():
    fn, _ = make(
        USER_CM
        + """
    def f(x, log):
        with Recorder(log):
            print("B", x)
        return x * 2.0
    """,
        "print",
        tag="user-cm-skip",
    )
    check_same(fn, V4.copy(), [], fullgraph=False)
    assert tc.counters()["frames_skipped"] >= 1, tc.counters()


@pytest.mark.parametrize("kind", KINDS)
def test_exception_swallowed_by_user_context_manager_after_a_break(kind: str):
    template = (
        USER_CM
        + """
    def f(x, log):
        y = x * 2.0
        with Recorder(log, swallow=True):
            BREAK(y)
            y = y + 1.0
            raise KeyError("swallowed")
        log.append("after")
        return y, log
    """
    )
    standard_check(template, kind, V4.copy(), [], tag="user-cm-swallow")


# ---------------------------------------------------------------------------------------------
# Loops, try/except
# ---------------------------------------------------------------------------------------------

LOOPS_AND_TRY = {
    "for_loop": """
        def f(x, log):
            acc = x * 0.0
            for i in range(3):
                acc = acc + x * i
                BREAK(acc)
                log.append(i)
            return acc, log
    """,
    "for_loop_over_list_argument": """
        def f(x, log):
            acc = x.copy()
            for v in [1.0, 2.5]:
                acc *= v
                BREAK(v | acc)
            log.append(acc.sum())
            return acc
    """,
    "while_loop": """
        def f(x, log):
            n = 0
            y = x.copy()
            while n < 3:
                y = y * 1.5 + n
                BREAK(y)
                n += 1
            log.append(n)
            return y, n
    """,
    "break_after_loop": """
        def f(x, log):
            acc = x * 1.0
            for i in range(2):
                acc = acc - i
            BREAK(acc)
            log.append(acc.max())
            return acc
    """,
    "try_body": """
        def f(x, log):
            y = x * 2.0
            try:
                log.append("try")
                BREAK(y)
                y = y + 1.0
            except ValueError:
                log.append("except")
            return y, log
    """,
    "try_body_raises_after_break": """
        def f(x, log):
            y = x * 2.0
            try:
                BREAK(y)
                raise ValueError("inner " + str(y.shape))
            except ValueError as e:
                log.append(str(e))
                y = y - 1.0
            return y
    """,
    "except_body": """
        def f(x, log):
            y = x + 1.0
            try:
                log.append("try")
                z = {}["k"]
            except KeyError as e:
                log.append(repr(e))
                BREAK(y)
                y = y * 3.0
            return y, log
    """,
    "finally_body": """
        def f(x, log):
            y = x + 1.0
            try:
                y = y * 2.0
            finally:
                BREAK(y)
                log.append("finally")
            return y
    """,
    "break_after_try": """
        def f(x, log):
            try:
                y = x / 2.0
            except ZeroDivisionError:
                y = x
            BREAK(y)
            log.append("after")
            return y * 2.0
    """,
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(LOOPS_AND_TRY))
def test_break_in_loops_and_try(name: str, kind: str):
    standard_check(LOOPS_AND_TRY[name], kind, V4.copy(), ["start"], tag=name)


def test_loop_break_splits_the_loop_and_callees_still_compile():
    fn, _ = make(
        """
        def helper(v):
            return v * 2.0 + 1.0
        def f(x, log):
            for i in range(2):
                print("B", i)
                x = helper(x)
            return x
        """,
        "print",
        tag="loop-skip",
    )
    check_same(fn, V4.copy(), [], fullgraph=False)
    counters = tc.counters()
    assert counters["frames_skipped"] == 0, counters  # f and its loop's body (helper inlined)
    assert counters["frames_compiled"] >= 3, counters


# ---------------------------------------------------------------------------------------------
# Branches
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("kind", KINDS)
def test_breaks_in_both_branches_of_a_known_if(kind: str, flag: bool):
    template = """
        def f(x, flag, log):
            y = x * 2.0
            if flag:
                log.append("then")
                BREAK(y)
                y = y + 1.0
            else:
                log.append("else")
                BREAK(y)
                y = y - 1.0
            return y * 2.0, log
    """
    standard_check(template, kind, V4.copy(), flag, [], tag=f"known-if-{flag}")


@pytest.mark.parametrize("kind", KINDS)
def test_data_dependent_if_takes_both_branches_on_different_calls(kind: str):
    template = """
        def f(x, log):
            y = x * 2.0
            log.append("pre")
            BREAK(y)
            if y.sum() > 0:
                log.append("pos")
                z = y + 1.0
                BREAK(z)
            else:
                log.append("neg")
                z = y - 1.0
            return z * 3.0, len(log)
    """
    fn, _ = make(template, kind, tag="dd-if")
    pos = ((V4.copy(), []), {})
    neg = perturbed(*pos)
    assert (V4 * 2).sum() > 0 and (neg[0][0] * 2).sum() < 0
    compiled = tc.compile(fn, fullgraph=False, backend="eager")

    def check():
        for n, (args, kwargs) in enumerate([pos, neg, pos, neg, neg]):
            before = dict(tc.counters())
            eager = run_captured(fn, *fresh_args(args, kwargs))
            comp = run_captured(compiled, *fresh_args(args, kwargs))
            assert_same_outcome(eager, comp)
            if n >= 2:
                after = tc.counters()
                delta = {k: after[k] - before[k] for k in ("cache_misses", "recompiles")}
                assert delta == {"cache_misses": 0, "recompiles": 0}, f"call {n + 1}: {delta}"
                assert after["cache_hits"] > before["cache_hits"], f"call {n + 1}: no cache hit"

    with_source(fn, check)


# ---------------------------------------------------------------------------------------------
# Several breaks in a row
# ---------------------------------------------------------------------------------------------

SEQUENCES = [(a, b) for a in KINDS for b in KINDS] + [
    ("print", "graph_break", "branch"),
    ("graph_break", "graph_break", "graph_break"),
    ("branch", "print", "print"),
    ("print", "print", "print"),
]


@pytest.mark.parametrize("separated", [False, True], ids=["adjacent", "separated"])
@pytest.mark.parametrize("seq", SEQUENCES, ids="-".join)
def test_breaks_in_a_row(seq: tuple[str, ...], separated: bool):
    lines = []
    for i, kind in enumerate(seq):
        lines.append(expand("BREAK(y)", kind).rstrip("\n"))
        if separated:
            lines.append(f"y = y + {i + 1}.0")
    body = textwrap.indent("\n".join(lines), "    ")
    source = (
        "def f(x, log):\n"
        "    y = x + 1.0\n"
        "    log.append(y.sum())\n"
        f"{body}\n"
        "    z = y * 2.0\n"
        "    log.append(z.sum())\n"
        "    return z, log\n"
    )
    fn, _ = bp.build(source, "f", f"<tc-break-test row {'-'.join(seq)} {separated}>")
    fn.__source__ = source
    with_source(fn, lambda: check_calls(fn, V4.copy(), []))


# ---------------------------------------------------------------------------------------------
# Returning inputs, side effects on pre-existing objects
# ---------------------------------------------------------------------------------------------

RETURN_MIX = """
    def f(x, y, k, lst, d):
        z = x * k
        BREAK(z)
        return x, z, k, y, lst, d, z.sum(), (x, 1), x[1:], y.T, "s", None
"""


@pytest.mark.parametrize("kind", KINDS)
def test_return_after_break_mixes_arrays_scalars_and_inputs(kind: str):
    args = (V4.copy(), M34.copy(), 2.5, [1, 2], {"a": 1})
    standard_check(RETURN_MIX, kind, *args, tag="return-mix")
    fn, _ = make(RETURN_MIX, kind, tag="return-mix-identity")
    compiled = tc.compile(fn, fullgraph=False, backend="eager")
    for _ in range(2):  # the second call is served from the cache
        x, y, k, lst, d = fresh_args(args, {})[0]
        out = compiled(x, y, k, lst, d)
        assert out[0] is x and out[3] is y and out[4] is lst and out[5] is d and out[7][0] is x
        assert out[8].base is x and out[9].base is y
        assert not np.shares_memory(out[1], x)


SIDE_EFFECTS = """
    class Box:
        pass

    def note(log, v):
        log.append(("note", v))

    def f(x, log, d, obj):
        log.append("a")
        d["z"] = 1
        obj.first = x.sum()
        note(log, 1)
        BREAK((log, d, vars(obj)))
        log.append("b")
        d["a"] = 2
        d["z"] = 3
        obj.second = x * 2.0
        obj.first = obj.first + 1.0
        note(log, 2)
        BREAK((log, d))
        del d["z"]
        log.insert(0, "head")
        obj.third = len(log)
        return len(log), d
"""


@pytest.mark.parametrize("kind", KINDS)
def test_side_effects_on_pre_existing_objects_around_breaks(kind: str):
    fn, ns = make(SIDE_EFFECTS, kind, tag="side-effects")
    box = ns["Box"]()
    box.zero = 0
    args = (V4.copy(), ["pre"], {"k": 0}, box)
    with_source(fn, lambda: check_calls(fn, *args))


@pytest.mark.parametrize("kind", KINDS)
def test_mutation_of_input_arrays_around_breaks(kind: str):
    template = """
        def f(x, y):
            x += 1.0
            y[0] = x[1]
            BREAK(x)
            x *= 2.0
            y[1:] = x[1:] - y[0]
            BREAK(y)
            np.negative(y, out=y)
            return x, y.sum()
    """
    standard_check(template, kind, V4.copy(), W4.copy(), tag="mutate-inputs")


# ---------------------------------------------------------------------------------------------
# nonlocal and global writes across breaks
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_nonlocal_writes_across_breaks(kind: str):
    template = """
        def f(x):
            total = 0
            acc = x * 0.0
            def add(v):
                nonlocal total, acc
                total += 1
                acc = acc + v
                BREAK(total | v)
                total += 10
                return total
            add(x)
            BREAK(acc)
            n = add(x * 2.0)
            return acc, total, n
    """
    standard_check(template, kind, V4.copy(), tag="nonlocal")


@pytest.mark.parametrize("kind", KINDS)
def test_closure_state_of_the_compiled_function_across_breaks(kind: str):
    """The compiled function itself writes its enclosing scope's cells; state persists across
    calls, so eager and compiled each get their own closure from the same factory."""
    template = """
        def make():
            count = 0
            hist = []
            def g(x):
                nonlocal count
                count += 1
                hist.append(count)
                BREAK(count | x)
                count += 1
                return x * count, list(hist)
            return g, lambda: (count, list(hist))
    """
    source = expand(template, kind)
    factory, _ = bp.build(source, "make", f"<tc-break-test closure-state {kind}>")
    ge, state_e = factory()
    gc, state_c = factory()
    compiled = tc.compile(gc, fullgraph=False, backend="eager")
    for n in range(3):
        args = perturbed((V4.copy(),), {}) if n % 2 else ((V4.copy(),), {})
        eager = run_captured(ge, *fresh_args(*args))
        comp = run_captured(compiled, *fresh_args(*args))
        try:
            assert_same_outcome(eager, comp)
            assert_same(state_e(), state_c(), "closure state")
        except AssertionError as e:
            raise AssertionError(f"call {n + 1}: {e}\n--- source ---\n{source}") from None


@pytest.mark.parametrize("kind", KINDS)
def test_global_writes_across_breaks(kind: str):
    template = """
        def f(x):
            global COUNTER, STATE
            COUNTER = 10
            STATE = x * 2.0
            GLOG.append(COUNTER)
            BREAK(COUNTER | x)
            COUNTER = COUNTER + 1
            STATE = STATE + COUNTER
            GLOG.append(STATE.sum())
            BREAK(STATE)
            COUNTER += 1
            return STATE, COUNTER, len(GLOG)
    """
    fn, ns = make(template, kind, tag="globals")
    ns["GLOG"] = []
    compiled = tc.compile(fn, fullgraph=False, backend="eager")

    def run(f, args):
        ns["COUNTER"] = -1
        ns["STATE"] = None
        ns["GLOG"].clear()
        out = run_captured(f, *fresh_args(*args))
        return out, (ns["COUNTER"], ns["STATE"], list(ns["GLOG"]))

    def check():
        for n, args in enumerate([((V4.copy(),), {}), perturbed((V4.copy(),), {})]):
            eager, e_globals = run(fn, args)
            comp, c_globals = run(compiled, args)
            assert_same_outcome(eager, comp)
            assert_same(e_globals, c_globals, f"call {n + 1}: globals (COUNTER, STATE, GLOG)")

    with_source(fn, check)


# ---------------------------------------------------------------------------------------------
# Many calls: a frame after a break must not be re-specialized on every call
# ---------------------------------------------------------------------------------------------

MANY_CALLS = {
    "closure_defined_before_break": """
        def f(x):
            scale = 2.0
            def bump(v):
                return v * scale
            BREAK(x)
            return bump(x)
    """,
    "bound_method_of_temporary_on_stack": """
        def f(x):
            return (x * 2.0).reshape((BRK or -1),).sum()
    """,
    "exception_raised_after_break": """
        def f(x):
            y = x + 1.0
            BREAK(y)
            if y.shape[0] == 4:
                raise ValueError("four")
            return y
    """,
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(MANY_CALLS))
def test_many_calls_behave_like_eager(name: str, kind: str):
    """More calls than `tc.config.cache_size_limit` with equal arguments: same outcome and no
    warning (eager emits none), every call after the first served from the cache."""
    fn, _ = make(MANY_CALLS[name], kind, tag=f"many-{name}")
    calls = tc.config.cache_size_limit + 2
    with_source(fn, lambda: check_same(fn, V4.copy(), fullgraph=False, calls=calls))
    compiled = tc.compile(fn, fullgraph=False, backend="eager")
    for _ in range(calls):
        _, warned = run_with_warnings(compiled, (V4.copy(),))
        assert warned == [], f"compiled call warned (eager does not): {warned}"


# ---------------------------------------------------------------------------------------------
# Exceptions raised after a break
# ---------------------------------------------------------------------------------------------

RAISING = {
    "raise_statement": (
        """
        def f(x):
            y = x * 2.0
            BREAK(y)
            z = y + 1.0
            raise ValueError(f"bad shape {z.shape} {z.sum():.2f}")
        """,
        lambda: (V4.copy(),),
    ),
    "key_error": (
        """
        def f(x, d):
            y = x + 1.0
            BREAK(y)
            return y * d["missing"]
        """,
        lambda: (V4.copy(), {"present": 1.0}),
    ),
    "broadcast_error": (
        """
        def f(x, y):
            a = x * 2.0
            BREAK(a)
            b = a - 1.0
            return b + y
        """,
        lambda: (M34.copy(), np.ones(3)),
    ),
    "index_error": (
        """
        def f(x):
            BREAK(x)
            y = x + 1.0
            return y[10]
        """,
        lambda: (V4.copy(),),
    ),
    "zero_division": (
        """
        def f(x, n):
            y = x.sum()
            BREAK(y)
            return y + n / (n - n)
        """,
        lambda: (V4.copy(), 3),
    ),
    "raise_in_helper_after_break": (
        """
        def raiser(v):
            w = v * 2.0
            BREAK(w)
            raise RuntimeError("from helper " + str(w.shape))

        def f(x):
            y = x + 1.0
            return raiser(y) + 1.0
        """,
        lambda: (V4.copy(),),
    ),
    "helper_raises_after_break_in_caller": (
        """
        def picky(v):
            return v.reshape(7)

        def f(x):
            y = x + 1.0
            BREAK(y)
            z = picky(y)
            return z
        """,
        lambda: (M34.copy(),),
    ),
    "attribute_error": (
        """
        def f(x, obj):
            BREAK(x)
            y = x * obj.w
            return y + obj.missing_attr
        """,
        lambda: (V4.copy(), bp.fresh_namespace()["Acc"](2.0)),
    ),
    "type_error": (
        """
        def f(x):
            BREAK(x)
            return x + "s"
        """,
        lambda: (V4.copy(),),
    ),
    "after_two_breaks": (
        """
        def f(x, log):
            log.append(1)
            BREAK(x)
            log.append(2)
            BREAK(log | x)
            return log[5]
        """,
        lambda: (V4.copy(), []),
    ),
    "assertion_after_break": (
        """
        def f(x):
            y = x * 0.0
            BREAK(y)
            assert y.shape == (5,), "wrong shape " + str(y.shape)
            return y
        """,
        lambda: (V4.copy(),),
    ),
}


# Their message holds array data: new array values may recompile the frame that raises.
VALUE_SPECIALIZED = {"raise_statement"}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(RAISING))
def test_exception_after_break_matches_eager_with_traceback(name: str, kind: str):
    template, make_args = RAISING[name]
    fn, _ = make(template, kind, tag=name)
    args = make_args()
    eager, _ = run_with_warnings(fn, args)
    assert eager.exc is not None, "the template must raise eagerly"
    with_source(fn, lambda: check_warnings_and_traceback(fn, args))
    specialized = name in VALUE_SPECIALIZED
    with_source(fn, lambda: check_calls(fn, *args, value_specialized=specialized))
