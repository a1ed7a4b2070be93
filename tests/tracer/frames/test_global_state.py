"""Process-wide state (tracer/frames/entry.py's ``FROZEN``, tracer/report.py's ``recorder``): what one
thread sets stays in that thread, and a reference to the recorder never goes stale."""

from __future__ import annotations

import threading

import numpy as np

import tcompile as tc
from tcompile.tracer import report
from tcompile.tracer.frames.entry import FROZEN

TIMEOUT = 30  # seconds: a wait that runs out means the other thread is stuck, not slow


def test_a_frozen_region_in_one_thread_leaves_tracing_in_another_thread_alone():
    inside, release = threading.Event(), threading.Event()
    seen = {}

    @tc.compile
    def late(x):
        return np.cos(x) - 1

    def frozen_body():
        inside.set()
        assert release.wait(TIMEOUT)
        seen["frozen here"] = FROZEN.active
        before = tc.counters()["frames_compiled"]
        late(np.ones(3))  # never called before: tc.run must not compile it
        seen["compiled while frozen"] = tc.counters()["frames_compiled"] - before

    frozen_thread = threading.Thread(target=tc.run(frozen_body))
    frozen_thread.start()
    try:
        assert inside.wait(TIMEOUT)
        assert not FROZEN.active  # this thread is not in the frozen region

        @tc.compile
        def f(x):
            return np.sin(x) * 2 + 1

        np.testing.assert_allclose(f(np.ones(4)), np.sin(np.ones(4)) * 2 + 1)
        counts = tc.counters()
        assert counts["frames_compiled"] == 1 and counts["graphs"] == 1, counts
        explained = tc.explain(lambda x: np.exp(x) + 1)(np.ones(2))
        assert len(explained.graphs) == 1, explained
    finally:
        release.set()
        frozen_thread.join(TIMEOUT)
    assert not frozen_thread.is_alive()
    assert seen == {"frozen here": True, "compiled while frozen": 0}
    assert not FROZEN.active


def test_tc_run_still_freezes_its_own_thread():
    @tc.compile
    def f(x):
        return np.tanh(x) + 1

    frozen = tc.run(f)
    out = frozen(np.ones(3))
    np.testing.assert_allclose(out, np.tanh(np.ones(3)) + 1)
    assert tc.counters()["frames_compiled"] == 0
    assert not FROZEN.active  # restored on the way out


def test_a_reference_to_the_recorder_taken_before_reset_sees_the_reset_counters():
    held = report.recorder

    @tc.compile
    def f(x):
        return np.sin(x) + 1

    f(np.ones(3))
    f(np.ones(3))
    assert held.snapshot()["frames_compiled"] == 1 and held.snapshot()["cache_hits"] == 1
    assert held.phase_times

    tc.reset()

    assert report.recorder is held
    assert held.snapshot() == tc.counters() == dict.fromkeys(report.COUNTER_NAMES, 0)
    assert not held.phase_times and not held.bubbled
    assert tc.compile_times(repr="dict") == {}

    f(np.ones(3))  # compiled again after the reset: counted on the same recorder
    assert held.snapshot()["frames_compiled"] == 1 == tc.counters()["frames_compiled"]


def test_reset_keeps_the_listeners():
    with tc.CompileProfiler() as prof:

        @tc.compile
        def f(x):
            return np.sin(x) + 1

        f(np.ones(3))
        tc.reset()
        f(np.ones(3))  # the cache was cleared: compiles again, and the profiler still hears it
    assert len(prof.reports) == 2
    assert prof not in report.recorder.listeners
