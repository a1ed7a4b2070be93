"""The capture corpus (tests/corpus: 220+ functions that compile into one graph) compiled with
``backend="triton"``: each must still be one graph, behave as eager code (floats within a few
ULP, everything else exact: dtypes, shapes, layouts, exceptions, printed output, mutated
arguments, aliasing), and be served from the cache on a second call."""

from __future__ import annotations

import corpus
import harness
import pytest
from harness import check_same
from requires_triton import require_triton

require_triton()

import tcompile as tc  # noqa: E402

CAPTURE = corpus.capture_cases()


@pytest.fixture(autouse=True)
def gpu_comparison(monkeypatch):
    monkeypatch.setattr(harness, "FLOAT_ULPS", 16)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # kernels raise none; eager code may
@pytest.mark.parametrize("case", CAPTURE, ids=lambda case: case.id)
def test_capture_case_on_the_triton_backend(case: corpus.Case):
    check_same(case.fn, *case.args, fullgraph=True, backend="triton", calls=2, **case.kwargs)
    assert tc.counters()["graph_breaks"] == 0
