"""Appending to a list made before the call (a log, a history): replayed as appends, with no
guard on the list's length or contents, so a list that grows from call to call keeps its
compiled entry (`values.containers.PreexistingList`). Any other use reads the list as before.
Each case runs eagerly and compiled and compares results, the lists' contents and output."""

from __future__ import annotations

import numpy as np
import pytest
from diffharness import C, case_id

import tcompile as tc


def log_mean(x, log):
    m = x.mean()
    log.append(m)
    log.append(("scaled", x * 2))
    return x - m


def append_then_len(x, log):
    log.append(x.sum())
    return x * len(log)  # reads the list: its items are wrapped, what was appended follows


def append_then_iterate(x, log):
    log.append(x.max())
    total = x * 0
    for item in log:
        total = total + item
    return total


def append_to_both(x, a, b):
    a.append(x.sum())
    b.append(x.min())
    a.append(x.max())
    return x + 1


def append_across_a_break(x, log):
    log.append(x.sum())
    print("logged")
    log.append(x.mean())
    return x * 2


def append_in_a_split_loop(x, log):
    for i in range(4):
        x = x * 0.5 + i
        log.append(float(x.sum()))  # float(): a break inside the loop
    return x


def _one_entry(counters):
    assert counters["recompiles"] == 0, counters


shared = []


CASES = [
    C(
        "log_mean",
        log_mean,
        lambda: (np.arange(4.0), []),
        lambda: (np.ones(4), [1, "a"]),
        lambda: (np.arange(4.0), list(range(50))),
        after=_one_entry,
    ),
    C(
        "append_then_len",
        append_then_len,
        lambda: (np.arange(3.0), []),
        lambda: (np.arange(3.0), [1.0, 2.0]),
    ),
    C("append_then_iterate", append_then_iterate, lambda: (np.arange(3.0), [np.ones(3)])),
    C("append_to_both", append_to_both, lambda: (np.arange(3.0), [], [0])),
    C(
        "append_to_one_list_twice",
        append_to_both,
        lambda: (np.arange(3.0), shared, shared),
        setup=lambda letter: shared.clear(),
    ),
    C("append_across_a_break", append_across_a_break, lambda: (np.arange(3.0), [7])),
    C(
        "append_in_a_split_loop",
        append_in_a_split_loop,
        lambda: (np.arange(3.0), []),
        lambda: (np.arange(3.0), [0.5] * 30),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_appending_to_a_list_matches_eager(case):
    case.run()


def test_a_growing_log_keeps_one_compiled_entry():
    compiled = tc.compile(log_mean, backend="eager")
    tc.reset()
    log = []
    for _ in range(20):
        compiled(np.arange(4.0), log)
    assert len(log) == 40 and tc.counters()["recompiles"] == 0
    (report,) = tc.explain(log_mean)(np.arange(4.0), log).reports
    assert not any(g.kind == "len" for g in report.guards)
