"""Differential harness of tests/differential: eager vs compiled over a sequence of calls.

    from diffharness import Case, check
    check(f, lambda: (np.arange(6.0), []), lambda: (np.arange(6.0) - 7, []))   # calls A A B B A

Every call builds FRESH arguments with a builder (never `deepcopy`: a builder keeps read-only
flags, negative strides and several views of one base), runs the function eagerly on one set and
the compiled wrapper (one wrapper for the whole sequence) on another, and compares everything
observable: the result or the exception (type and message), stdout, the warnings emitted (category
and message, in order), the arguments after the call (bitwise, flags included), extra state the
case observes (globals, closure cells...), the aliasing between argument and result arrays, and
which lists, dicts, sets and objects among them are one and the same object.

Case tables use `C(id, fn, builder_A, builder_B, ..., pattern=..., fullgraph=..., setup=...,
observe=..., after=...)` (see `Case`); `run_script` runs a check in a fresh interpreter, so that a
crash of the interpreter is reported as a failure.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import textwrap
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from harness import Outcome, _is_user_object, alias_signature, assert_same, cross_call_sharing

import tcompile as tc

# The backend cases compile with when they do not build their own compiled callable; with a
# backend whose kernels raise no floating-point warnings ("triton"), NumPy's floating-point
# warnings ("overflow encountered in multiply") are left out of the comparison. Set by
# tests/triton to re-run the whole corpus there.
BACKEND = "eager"
FP_WARNINGS = True

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)


class kw:
    """What a builder returns when the call needs keyword arguments: ``kw(x, y, axis=0)``."""

    def __init__(self, *args: Any, **kwargs: Any):
        self.args = args
        self.kwargs = kwargs


@dataclass
class Run:
    """One call, eager or compiled: its `Outcome`, warnings and the state the case observed."""

    outcome: Outcome
    warnings: list[tuple[str, str]]
    observed: Any
    traceback: str = ""


def _split(built: Any) -> tuple[tuple, dict]:
    if isinstance(built, kw):
        return built.args, built.kwargs
    if isinstance(built, tuple):
        return built, {}
    return (built,), {}


def run_once(
    fn: Callable[..., Any],
    builder: Callable[[], Any],
    letter: str,
    setup: Callable[[str], None] | None = None,
    observe: Callable[[], Any] | None = None,
) -> Run:
    """Set up, build fresh arguments, call ``fn`` capturing everything, observe."""
    if setup is not None:
        setup(letter)
    with warnings.catch_warnings():  # building arguments is not the behaviour compared
        warnings.simplefilter("ignore")
        args, kwargs = _split(builder())
    buf = io.StringIO()
    result: Any = None
    exc: BaseException | None = None
    tb = ""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with contextlib.redirect_stdout(buf):
            try:
                result = fn(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 (the exception is part of the behaviour)
                exc = e
                tb = "".join(traceback.format_exception(e)[-3:])
    observed = observe() if observe is not None else None
    warns = [(w.category.__name__, str(w.message)) for w in rec]
    return Run(Outcome(result, exc, buf.getvalue(), args, kwargs), warns, observed, tb)


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------


@dataclass
class _MaskedView:
    """What is compared of a masked array beyond its data (`assert_same` sees only the data)."""

    kind: str
    data: Any
    mask: Any
    fill_value: Any


@dataclass
class _SlotsView:
    """The slot values of an object without a `__dict__` (`assert_same` compares `vars()`)."""

    kind: str
    slots: dict


def normalize(x: Any) -> Any:
    """Expand masked arrays (data, mask, fill value) and `__slots__` objects (their slot values)
    so that `assert_same` compares all of them."""
    if isinstance(x, np.ma.core.MaskedConstant):  # the `np.ma.masked` singleton
        return _MaskedView(type(x).__name__, None, None, None)
    if isinstance(x, np.ma.MaskedArray):
        return _MaskedView(
            type(x).__name__,
            np.asarray(x.data),
            np.ma.getmaskarray(x).copy(),
            np.asarray(x.fill_value),
        )
    if not hasattr(x, "__dict__") and hasattr(type(x), "__slots__") and not isinstance(x, type):
        slots = [n for c in type(x).__mro__ for n in getattr(c, "__slots__", ())]
        return _SlotsView(type(x).__name__, {n: normalize(getattr(x, n, None)) for n in slots})
    if type(x) in (tuple, list):
        return type(x)(normalize(v) for v in x)
    if type(x) is dict:
        return {k: normalize(v) for k, v in x.items()}
    return x


def _containers(x: Any, out: list, seen: set[int]) -> list:
    """Mutable Python containers and user objects reachable from `x` (arrays excluded), in a
    fixed order, each visited once."""
    if isinstance(x, np.ndarray) or id(x) in seen:
        return out
    if isinstance(x, (list, dict, set, bytearray)) or _is_user_object_like(x):
        seen.add(id(x))
        out.append(x)
    if isinstance(x, (tuple, list, set, frozenset)):
        seen.add(id(x))
        for v in x:
            _containers(v, out, seen)
    elif isinstance(x, dict):
        for v in x.values():
            _containers(v, out, seen)
    elif _is_user_object_like(x):
        _containers(vars(x), out, seen)
    return out


def _is_user_object_like(x: Any) -> bool:
    return _is_user_object(x) and not isinstance(x, np.ndarray)


def identity_signature(o: Outcome) -> list[list[int]]:
    """For every list, dict, set and user object reachable from args, kwargs, then the result:
    which earlier ones it *is* (a result that is an argument, an argument passed twice...)."""
    items = _containers((o.args, o.kwargs, o.result), [], set())
    return [[j for j in range(i) if items[j] is a] for i, a in enumerate(items)]


def _exc_text(e: BaseException | None) -> str:
    return "no exception" if e is None else f"{type(e).__module__}.{type(e).__qualname__}: {e}"


def _short_warnings(ws: list[tuple[str, str]], width: int = 100) -> str:
    short = [(cat, msg if len(msg) <= width else msg[: width - 3] + "...") for cat, msg in ws]
    return repr(short)


def _without_fp(ws: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [w for w in ws if not (w[0] == "RuntimeWarning" and " encountered in " in w[1])]


def compare_runs(eager: Run, compiled: Run) -> list[str]:  # noqa: C901 - the harnesses become one (issue 21.7)
    """Every aspect that differs, as readable lines (empty: identical)."""
    problems: list[str] = []
    e, c = eager.outcome, compiled.outcome
    same_exc = (e.exc is None) == (c.exc is None) and (
        e.exc is None or (type(e.exc) is type(c.exc) and str(e.exc) == str(c.exc))
    )
    if not same_exc:
        msg = (
            f"exception differs\n    eager:    {_exc_text(e.exc)}\n    compiled: {_exc_text(c.exc)}"
        )
        if c.exc is not None and compiled.traceback:
            msg += "\n    compiled traceback (tail):\n" + textwrap.indent(
                compiled.traceback, "      "
            )
        problems.append(msg)
    if e.stdout != c.stdout:
        problems.append(f"stdout differs\n    eager:    {e.stdout!r}\n    compiled: {c.stdout!r}")
    own = [w for w in compiled.warnings if w[1].lower().startswith("tcompile")]
    if own:  # reported on their own (`check`), and never something eager emits
        compiled = Run(
            compiled.outcome,
            [w for w in compiled.warnings if w not in own],
            compiled.observed,
            compiled.traceback,
        )
    if not FP_WARNINGS:
        eager = Run(eager.outcome, _without_fp(eager.warnings), eager.observed, eager.traceback)
        compiled = Run(compiled.outcome, _without_fp(compiled.warnings), compiled.observed,
                       compiled.traceback)  # fmt: skip
    if eager.warnings != compiled.warnings:
        problems.append(
            f"warnings differ ({len(eager.warnings)} eager, {len(compiled.warnings)} compiled)"
            f"\n    eager:    {_short_warnings(eager.warnings)}"
            f"\n    compiled: {_short_warnings(compiled.warnings)}"
        )
    for what, a, b in (
        ("result", e.result, c.result),
        ("args (after the call)", e.args, c.args),
        ("kwargs (after the call)", e.kwargs, c.kwargs),
        ("observed state (after the call)", eager.observed, compiled.observed),
    ):
        if what == "result" and (e.exc is not None or c.exc is not None):
            continue
        try:
            assert_same(normalize(a), normalize(b), what)
        except AssertionError as err:
            problems.append(str(err).replace("\n", "\n  "))
        except Exception as err:  # noqa: BLE001 (a comparison that cannot run is a difference)
            problems.append(f"{what}: cannot compare ({err!r})")
    try:
        e_sig, c_sig = alias_signature(e), alias_signature(c)
    except Exception as err:  # noqa: BLE001
        e_sig, c_sig = repr(err), "?"
    if not problems:
        try:
            e_ids, c_ids = identity_signature(e), identity_signature(c)
        except Exception as err:  # noqa: BLE001
            e_ids, c_ids = repr(err), "?"
        if e_ids != c_ids:
            problems.append(
                "object identity differs (lists, dicts, sets, objects reachable from args, "
                f"kwargs, result: [is identical to])\n    eager:    {e_ids}\n    compiled: {c_ids}"
            )
    if e_sig != c_sig and not problems:  # else a consequence of the differences above
        problems.append(
            "aliasing differs (arrays reachable from args, kwargs, result: "
            f"[(is identical to, shares memory with)])\n    eager:    {e_sig}\n    compiled: {c_sig}"
        )
    return problems


# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------


def default_pattern(n_builders: int) -> str:
    return {1: "AAA", 2: "AABBA", 3: "AABBCCA"}.get(n_builders, "AB" * n_builders)


@dataclass
class Case:
    """One differential case: ``fn`` called with builders ``A, B, ...`` in ``pattern`` order.

    setup(letter)  runs before each eager and each compiled call (reset globals, cells...).
    observe()      returns extra state compared after each call (globals, cells, logs...).
    fullgraph      compile with fullgraph=True: `tc.Unsupported` fails unless ``break_ok``; when
                   no call raised it, no frame may have been skipped and no break recorded.
    after(counters) runs on `tc.counters()` after the sequence (recompile limits...).
    make_compiled  builds the compiled callable from ``fn`` (default: tc.compile(fn, backend="eager")).
    """

    id: str
    fn: Callable[..., Any]
    builders: Sequence[Callable[[], Any]]
    pattern: str | None = None
    fullgraph: bool = False
    break_ok: bool = False
    setup: Callable[[str], None] | None = None
    observe: Callable[[], Any] | None = None
    after: Callable[[dict], None] | None = None
    make_compiled: Callable[[Callable], Callable] | None = None
    eager_fn: Callable[..., Any] | None = None
    no_tcompile_warnings: bool = True
    extra: dict = field(default_factory=dict)

    def run(self) -> None:
        __tracebackhide__ = True
        check(
            self.fn,
            *self.builders,
            pattern=self.pattern,
            fullgraph=self.fullgraph,
            break_ok=self.break_ok,
            setup=self.setup,
            observe=self.observe,
            after=self.after,
            make_compiled=self.make_compiled,
            eager_fn=self.eager_fn,
            no_tcompile_warnings=self.no_tcompile_warnings,
            name=self.id,
        )


def case_id(case: Case) -> str:
    return case.id


def check(
    fn: Callable[..., Any],
    *builders: Callable[[], Any],
    pattern: str | None = None,
    fullgraph: bool = False,
    break_ok: bool = False,
    setup: Callable[[str], None] | None = None,
    observe: Callable[[], Any] | None = None,
    after: Callable[[dict], None] | None = None,
    make_compiled: Callable[[Callable], Callable] | None = None,
    eager_fn: Callable[..., Any] | None = None,
    no_tcompile_warnings: bool = True,
    name: str | None = None,
) -> list[tuple[Run, Run]]:
    """Run ``fn`` eagerly and compiled (one wrapper) over ``pattern``; fail on any difference.

    Returns the (eager, compiled) runs. Warnings whose message starts with "tcompile" (the
    compiler's own) are kept out of the comparison with eager's warnings; with
    ``no_tcompile_warnings`` (the default) any of them is a failure of its own, without it only
    those reporting an internal error are (the cache_size_limit warning is documented).
    """
    __tracebackhide__ = True
    name = name or getattr(fn, "__qualname__", repr(fn))
    pattern = pattern or default_pattern(len(builders))
    letters = "ABCDEFGHIJKLMNOP"
    by_letter = dict(zip(letters, builders))
    if make_compiled is not None:
        compiled_fn = make_compiled(fn)
    else:
        compiled_fn = tc.compile(fn, backend=BACKEND, fullgraph=fullgraph)
    eager_fn = eager_fn or fn
    failures: list[str] = []
    runs: list[tuple[Run, Run]] = []
    previous: tuple[Run, Run] | None = None
    unsupported = False
    previous_failed = False
    for n, letter in enumerate(pattern, start=1):
        builder = by_letter[letter]
        eager = run_once(eager_fn, builder, letter, setup, observe)
        compiled = run_once(compiled_fn, builder, letter, setup, observe)
        runs.append((eager, compiled))
        if isinstance(compiled.outcome.exc, tc.Unsupported) and fullgraph and break_ok:
            unsupported = True
            break
        problems = compare_runs(eager, compiled)
        tcw = [w for w in compiled.warnings if w[1].lower().startswith("tcompile")]
        if not no_tcompile_warnings:  # documented ones (cache_size_limit) allowed, not bugs
            tcw = [w for w in tcw if "internal error" in w[1]]
        if tcw:
            problems.append(f"tcompile emitted {len(tcw)} warning(s): {_short_warnings(tcw, 300)}")
        if previous is not None and not problems and not previous_failed:
            try:
                e_cross = cross_call_sharing(previous[0].outcome, eager.outcome)
                c_cross = cross_call_sharing(previous[1].outcome, compiled.outcome)
            except Exception as err:  # noqa: BLE001
                e_cross, c_cross = repr(err), "?"
            if e_cross != c_cross:
                problems.append(
                    "result arrays share memory with the previous call's results differently\n"
                    f"    eager:    {e_cross}\n    compiled: {c_cross}"
                )
        if problems:
            failures.append(
                f"call {n} of {len(pattern)} (pattern {pattern}, builder {letter}):\n  "
                + "\n  ".join(problems)
            )
        previous = (eager, compiled)
        previous_failed = bool(problems)
    counters = tc.counters()
    if fullgraph and not unsupported and not failures:
        if counters.get("frames_skipped", 0) or counters.get("graph_breaks", 0):
            failures.append(
                "fullgraph=True returned without tc.Unsupported but a frame ran eagerly or broke: "
                f"{counters}"
            )
    if not failures and after is not None:
        try:
            after(counters)
        except AssertionError as err:
            failures.append(f"after the sequence: {err}")
    if failures:
        calls = [f for f in failures if f.startswith("call ")]
        head = f"{name}: {len(calls)} of {len(pattern)} calls differ" if calls else f"{name}:"
        shown = failures[:3]
        more = f"\n... and {len(failures) - 3} more failures" if len(failures) > 3 else ""
        raise AssertionError(head + "\n" + "\n".join(shown) + more)
    return runs


def max_recompiles(limit: int) -> Callable[[dict], None]:
    """An ``after`` check: at most ``limit`` recompiles over the whole sequence."""

    def check_counters(counters: dict) -> None:
        assert counters["recompiles"] <= limit, (
            f"{counters['recompiles']} recompiles (at most {limit} expected): {counters}"
        )

    return check_counters


# ---------------------------------------------------------------------------------------------
# Subprocesses (crashes of the interpreter, hash seeds)
# ---------------------------------------------------------------------------------------------


def run_script(source: str, *, env: dict[str, str] | None = None, timeout: float = 60) -> str:
    """Run ``source`` in a fresh interpreter (tests/ and tests/differential importable).

    Fails with the exit status (a negative one is the signal, e.g. -11 for a segfault), stdout and
    stderr unless the script exits 0. Returns its stdout."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join(
        [HERE, TESTS] + ([full_env["PYTHONPATH"]] if full_env.get("PYTHONPATH") else [])
    )
    full_env.pop("TCOMPILE_LOGS", None)
    full_env.update(env or {})
    # A real file, not `-c`: tracebacks, `inspect` and the tracer's source lines work as usual.
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "differential_script.py")
        with open(script, "w") as fh:
            fh.write(textwrap.dedent(source))
        proc = subprocess.run(
            [sys.executable, "-X", "faulthandler", script],
            capture_output=True,
            text=True,
            env=full_env,
            timeout=timeout,
        )
    if proc.returncode != 0:
        how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
        raise AssertionError(
            f"subprocess failed ({how})\n--- stdout ---\n{proc.stdout[-3000:]}"
            f"\n--- stderr ---\n{proc.stderr[-3000:]}"
        )
    return proc.stdout


def C(id: str, fn: Callable[..., Any], *builders: Callable[[], Any], **options: Any) -> Case:
    """Shorthand for `Case(id, fn, builders, **options)` in the case tables."""
    return Case(id, fn, builders, **options)
