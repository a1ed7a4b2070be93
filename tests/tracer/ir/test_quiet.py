"""`quiet`: trace-time NumPy runs drop their own warnings without touching other threads', and
folding gives up on anything that warns (so the warning happens at run time instead)."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

from tcompile.tracer.ir import quiet


def test_silenced_drops_this_threads_warnings_and_fp_errors():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with quiet.silenced():
            warnings.warn("dropped", UserWarning, stacklevel=1)
            np.log(np.zeros(2))
        warnings.warn("kept", UserWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ["kept"]


def test_strict_turns_warnings_and_fp_errors_into_exceptions():
    with pytest.raises(FloatingPointError), quiet.strict():
        np.sqrt(np.float64(-1.0))
    with pytest.raises(DeprecationWarning), quiet.strict():
        warnings.warn("old", DeprecationWarning, stacklevel=1)


def test_other_threads_keep_their_warnings_while_one_thread_is_silenced():
    counts: list[int] = []
    stop = threading.Event()

    def warn_in_a_loop():
        while not stop.is_set() or len(counts) < 50:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                warnings.warn("from the other thread", UserWarning, stacklevel=1)
            # Its own warnings only: while this block has put "always" in front of the filters
            # (catch_warnings is process-wide), the silenced thread's warning can show here.
            counts.append(sum(str(w.message) == "from the other thread" for w in seen))

    other = threading.Thread(target=warn_in_a_loop)
    other.start()
    for _ in range(500):
        with quiet.silenced():
            warnings.warn("tracing", UserWarning, stacklevel=1)
    stop.set()
    other.join()
    assert counts and all(c == 1 for c in counts)


def test_compiling_in_one_thread_does_not_silence_another():
    import tcompile as tc

    seen_other: list[int] = []
    done = threading.Event()

    def other():
        while not done.is_set():
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                np.log(np.zeros(1))  # a RuntimeWarning from NumPy, every time
            seen_other.append(len(seen))

    thread = threading.Thread(target=other)
    thread.start()
    try:
        for i in range(30):
            fn = tc.compile(eval(f"lambda x: np.log(x) * {i}", {"np": np}))  # a fresh compile each
            with np.errstate(all="ignore"):  # per thread, unlike warnings filters
                fn(np.zeros(2))
    finally:
        done.set()
        thread.join()
    assert seen_other and all(n == 1 for n in seen_other)
