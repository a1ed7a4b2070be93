"""Every capture-corpus function compiles to one graph under fullgraph=True and behaves exactly like
eager Python: bitwise-equal results, same printed output, same mutations of its arguments, same
aliasing; a second call with equal arguments is served from the cache. Raising cases raise exactly
what eager raises. A call with new array values of the same shapes reuses the graph."""

from __future__ import annotations

import corpus
import pytest
from harness import (
    assert_same_outcome,
    check_same,
    check_same_calls,
    fresh_args,
    perturbed,
    run_captured,
)

import tcompile as tc

CAPTURE = corpus.capture_cases()
RAISES = corpus.raises_cases()


def _id(case: corpus.Case) -> str:
    return case.id


def test_corpus_is_large_enough():
    assert len({c.fn for c in CAPTURE}) >= 220
    assert len(RAISES) >= 10


@pytest.mark.parametrize("case", CAPTURE, ids=_id)
def test_compiles_in_one_graph_and_matches_eager(case: corpus.Case):
    check_same(case.fn, *case.args, fullgraph=True, **case.kwargs)
    counters = tc.counters()
    assert counters["graph_breaks"] == 0, counters
    assert counters["graphs"] <= 1, counters


@pytest.mark.parametrize("case", CAPTURE, ids=_id)
def test_second_call_hits_cache_and_matches_eager(case: corpus.Case):
    check_same(case.fn, *case.args, fullgraph=True, calls=2, **case.kwargs)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # e.g. log of the negated inputs
@pytest.mark.parametrize("case", CAPTURE, ids=_id)
def test_new_array_values_reuse_the_graph_and_match_eager(case: corpus.Case):
    """Same types, shapes, dtypes and layouts but different array values: the cached graph serves
    the call (array values are not guarded on) and its results still match eager bitwise."""
    first = (case.args, case.kwargs)
    check_same_calls(case.fn, [first, perturbed(*first)], later_calls_hit_cache=True)


@pytest.mark.parametrize("case", RAISES, ids=_id)
def test_raises_what_eager_raises(case: corpus.Case):
    check_same(case.fn, *case.args, fullgraph=False, **case.kwargs)


@pytest.mark.parametrize("case", RAISES, ids=_id)
def test_raises_what_eager_raises_or_unsupported_under_fullgraph(case: corpus.Case):
    """The SPEC does not say whether an exception raised by traced user code is itself a break under
    fullgraph=True (torch.compile reports it as one). Either the eager exception, with eager's
    argument mutations, or `tc.Unsupported` is accepted; anything else is wrong."""
    eager = run_captured(case.fn, *fresh_args(case.args, case.kwargs))
    compiled = run_captured(
        tc.compile(case.fn, fullgraph=True, backend="eager"), *fresh_args(case.args, case.kwargs)
    )
    assert eager.exc is not None
    if not isinstance(compiled.exc, tc.Unsupported):
        assert_same_outcome(eager, compiled)
