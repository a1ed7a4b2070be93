"""Every breaking-corpus function graph-breaks where its `# BREAK` marker says:
- fullgraph=True: calling it raises `tc.Unsupported` naming the corpus file and the marked line,
  before running any of it (nothing printed, arguments untouched);
- fullgraph=False: it runs with the break and behaves exactly like eager, also when called again
  with different array values, and the break is counted and reported by `tc.explain` at the
  marked line."""

from __future__ import annotations

import contextlib
import inspect
import io
import os
import re

import corpus
import pytest
from harness import assert_same, check_same, check_same_calls, fresh_args, perturbed, run_captured

import tcompile as tc

# Branches on array values break the graph here, as torch.compile's do (cond nodes off): they
# drive the breaks these tests are about.
pytestmark = pytest.mark.usefixtures("branches_break", "sizes_break")

BREAKING = corpus.breaking_cases()


def _id(case: corpus.Case) -> str:
    return case.id


def marked_line(case: corpus.Case) -> tuple[str, int]:
    """(source file, line number) of the single `# BREAK` marker in the function that breaks."""
    target = case.break_in or case.fn
    lines, start = inspect.getsourcelines(target)
    hits = [start + i for i, text in enumerate(lines) if "# BREAK" in text]
    assert len(hits) == 1, f"{target.__qualname__} must carry exactly one '# BREAK' marker"
    return inspect.getsourcefile(target), hits[0]


def call_args(case: corpus.Case, tmp_path) -> tuple[tuple, dict]:
    args = tuple(str(tmp_path / a.name) if isinstance(a, corpus.TmpPath) else a for a in case.args)
    return args, dict(case.kwargs)


def mentions_line(message: str, line: int) -> bool:
    return re.search(rf"(line |:){line}\b", message) is not None


def test_breaking_corpus_is_large_enough():
    assert len(BREAKING) >= 40


def test_every_breaking_function_marks_exactly_one_line():
    for case in BREAKING:
        path, line = marked_line(case)
        assert path.endswith(".py") and line > 0


@pytest.mark.parametrize("case", BREAKING, ids=_id)
def test_fullgraph_raises_unsupported_at_marked_line(case: corpus.Case, tmp_path):
    path, line = marked_line(case)
    args, kwargs = call_args(case, tmp_path)
    compiled = tc.compile(case.fn, fullgraph=True, backend="eager")
    args, kwargs = fresh_args(args, kwargs)
    with contextlib.redirect_stdout(io.StringIO()), pytest.raises(tc.Unsupported) as info:
        compiled(*args, **kwargs)
    message = str(info.value)
    assert os.path.basename(path) in message, message
    assert mentions_line(message, line), f"expected line {line} in:\n{message}"


@pytest.mark.parametrize("case", BREAKING, ids=_id)
def test_fullgraph_break_runs_nothing(case: corpus.Case, tmp_path):
    args, kwargs = call_args(case, tmp_path)
    untouched = fresh_args(args, kwargs)
    outcome = run_captured(
        tc.compile(case.fn, fullgraph=True, backend="eager"), *fresh_args(args, kwargs)
    )
    assert isinstance(outcome.exc, tc.Unsupported), repr(outcome.exc)
    assert outcome.stdout == "", "code ran before the fullgraph break was reported"
    assert_same(untouched[0], outcome.args, "args (must be untouched)")
    assert_same(untouched[1], outcome.kwargs, "kwargs (must be untouched)")


@pytest.mark.parametrize("case", BREAKING, ids=_id)
def test_breaks_and_matches_eager_without_fullgraph(case: corpus.Case, tmp_path):
    args, kwargs = call_args(case, tmp_path)
    tc.reset()
    check_same(case.fn, *args, fullgraph=False, **kwargs)
    assert tc.counters()["graph_breaks"] >= 1, tc.counters()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # e.g. log of the negated inputs
@pytest.mark.parametrize("case", BREAKING, ids=_id)
def test_second_call_with_new_array_values_matches_eager(case: corpus.Case, tmp_path):
    """Same shapes and dtypes, different values: branches may go the other way and data-dependent
    sizes change, so nothing decided from the first call's values may be reused wrongly."""
    args, kwargs = call_args(case, tmp_path)
    check_same_calls(case.fn, [(args, kwargs), perturbed(args, kwargs)], fullgraph=False)


@pytest.mark.parametrize("case", BREAKING, ids=_id)
def test_explain_reports_break_at_marked_line(case: corpus.Case, tmp_path):
    path, line = marked_line(case)
    args, kwargs = fresh_args(*call_args(case, tmp_path))
    with contextlib.redirect_stdout(io.StringIO()):
        report = tc.explain(case.fn)(*args, **kwargs)
    assert report.graph_break_count >= 1
    assert len(report.break_reasons) >= 1
    text = str(report)
    assert os.path.basename(path) in text and mentions_line(text, line), text
