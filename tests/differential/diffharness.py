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

import harness
import pytest
from harness import Outcome, cross_call_sharing, outcome_differences, value_difference

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


def _short_warnings(ws: list[tuple[str, str]], width: int = 100) -> str:
    short = [(cat, msg if len(msg) <= width else msg[: width - 3] + "...") for cat, msg in ws]
    return repr(short)


def _without_fp(ws: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [w for w in ws if not (w[0] == "RuntimeWarning" and " encountered in " in w[1])]


def compare_runs(eager: Run, compiled: Run) -> list[str]:
    """Every aspect that differs, as readable lines (empty: identical): the outcome
    (`harness.outcome_differences`), the warnings and the state the case observed."""
    problems = outcome_differences(eager.outcome, compiled.outcome, compiled.traceback)
    warned = _warning_difference(eager.warnings, compiled.warnings)
    if warned:
        problems.insert(_after_stdout(problems), warned)
    observed = value_difference(
        eager.observed, compiled.observed, "observed state (after the call)"
    )
    if observed:
        problems.append(observed)
    return problems


def _after_stdout(problems: list[str]) -> int:
    """Where the warnings' line goes among ``problems``: after the exception's and stdout's."""
    return sum(1 for p in problems if p.startswith(("exception differs", "stdout differs")))


def _warning_difference(eager: list, compiled: list) -> str | None:
    """The warnings each run showed, compared: tcompile's own left out (`check` reports them on
    their own; eager never shows them), floating-point ones too unless `FP_WARNINGS`."""
    compiled = [w for w in compiled if not w[1].lower().startswith("tcompile")]
    if not FP_WARNINGS:
        eager, compiled = _without_fp(eager), _without_fp(compiled)
    if eager == compiled:
        return None
    return (
        f"warnings differ ({len(eager)} eager, {len(compiled)} compiled)"
        f"\n    eager:    {_short_warnings(eager)}"
        f"\n    compiled: {_short_warnings(compiled)}"
    )


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
    settings       ``tc.config`` values while it runs (``{"cond_nodes": False}``).
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
    settings: dict = field(default_factory=dict)

    def run(self) -> None:
        __tracebackhide__ = True
        with config_settings(self.settings):
            self._check()

    def _check(self) -> None:
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


@contextlib.contextmanager
def config_settings(settings: dict):
    """``tc.config`` set to ``settings`` inside the block, put back after."""
    import tcompile as tc

    saved = {name: getattr(tc.config, name) for name in settings}
    try:
        for name, value in settings.items():
            setattr(tc.config, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(tc.config, name, value)


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


def on_every_backend(cases: list) -> tuple[Callable, Callable, Callable]:
    """The three tests of a case list: every case on the eager backend, on the default one,
    and on the cpu backend where numba is installed (``test_eager_backend,
    test_default_backend, test_cpu_backend = on_every_backend(CASES)``)."""

    @pytest.mark.parametrize("case", cases, ids=case_id)
    def test_eager_backend(case):
        case.run()

    @pytest.mark.parametrize("case", cases, ids=case_id)
    def test_default_backend(case):
        check(case.fn, *case.builders, pattern=case.pattern, setup=case.setup, after=case.after,
              make_compiled=tc.compile, name=case.id)  # fmt: skip

    @pytest.mark.parametrize("case", cases, ids=case_id)
    def test_cpu_backend(case, monkeypatch):
        pytest.importorskip("numba", reason="the cpu backend needs numba: tcompile[cpu]")
        # as the triton backend's: floats within a few ulps of NumPy's (libm's sin is not
        # NumPy's), and NumPy's floating-point warnings are not shown by machine code
        monkeypatch.setattr(sys.modules[__name__], "FP_WARNINGS", False)
        monkeypatch.setattr(harness, "FLOAT_ULPS", 16)
        check(case.fn, *case.builders, pattern=case.pattern, setup=case.setup, after=case.after,
              make_compiled=lambda fn: tc.compile(fn, backend="cpu"), name=case.id)  # fmt: skip

    return test_eager_backend, test_default_backend, test_cpu_backend


def corpus_cases(prefix: str, known: dict[str, str] | None = None) -> list:
    """Every case of the differential corpus (the ``CASES`` of this folder's test modules), as
    pytest params with ids ``<module>-<case>``, for running it again on another backend. Left
    out: cases that build their own compiled callable, and those that print floats a reduction
    computed (printed output is compared exactly: another summation order prints other last
    digits). ``known``: ids to skip, with the reason; ``prefix`` names the modules loaded."""
    import importlib.util

    folder = os.path.dirname(os.path.abspath(__file__))
    cases = []
    for name in sorted(os.listdir(folder)):
        if not (name.startswith("test_") and name.endswith(".py")):
            continue
        spec = importlib.util.spec_from_file_location(f"{prefix}_{name[:-3]}",
                                                      os.path.join(folder, name))  # fmt: skip
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for case in getattr(module, "CASES", []):
            if case.make_compiled is None and not case.extra.get("exact_prints_only"):
                ident = f"{name[5:-3]}-{case.id}"
                reason = (known or {}).get(ident)
                marks = [pytest.mark.skip(reason=reason)] if reason else []
                cases.append(pytest.param(case, id=ident, marks=marks))
    return cases


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
