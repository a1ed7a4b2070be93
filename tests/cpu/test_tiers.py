"""The cpu backend's choice between a graph's NumPy code and its kernels (`backend/cpu/tiers.py`):
timed per input shapes, the faster one kept, the verdict in the compiled graph's sources."""

from __future__ import annotations

import numpy as np
import pytest

from tcompile.backend.cpu.tiers import SMALL_INPUTS, TRIALS, Tiers


class Clock:
    """A clock each tier's call moves by its own cost, so the choice is known in advance."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def tier(self, name, cost, log):
        def run(*inputs):
            self.now += cost
            log.append(name)
            return name

        return run


def tiers(plain_cost, fused_cost):
    clock, log, sources = Clock(), [], {}
    made = []

    def make_fused():
        made.append(True)
        return clock.tier("kernels", fused_cost, log)

    return (
        Tiers(clock.tier("numpy", plain_cost, log), make_fused, sources, clock),
        log,
        sources,
        made,
    )


BIG = np.zeros(SMALL_INPUTS, np.float32)


@pytest.mark.parametrize(
    ("plain_cost", "fused_cost", "winner"), [(2.0, 1.0, "kernels"), (1.0, 2.0, "numpy")]
)
def test_the_faster_tier_wins_after_timed_trials(plain_cost, fused_cost, winner):
    run, log, sources, _ = tiers(plain_cost, fused_cost)
    for _ in range(1 + 2 * TRIALS):
        run(BIG)
    assert log == ["kernels"] * (1 + TRIALS) + ["numpy"] * TRIALS  # the first plans, untimed
    assert [run(BIG) for _ in range(3)] == [winner] * 3
    verdict = "kernels;" if winner == "kernels" else "NumPy code (kernels do not pay here)"
    assert sources["choice"].startswith(f"# float32[{SMALL_INPUTS}]: {verdict}")
    assert "kernels 1000000 µs" in sources["choice"] or "kernels 2000000 µs" in sources["choice"]


def test_small_inputs_run_numpy_code_and_make_no_kernels():
    run, log, sources, made = tiers(1.0, 0.5)
    assert run(np.zeros(SMALL_INPUTS - 1)) == "numpy"
    assert log == ["numpy"] and not made and "choice" not in sources


def test_each_input_shape_is_timed_on_its_own():
    run, log, sources, made = tiers(1.0, 2.0)
    other = np.zeros((2, SMALL_INPUTS), np.int64)
    for _ in range(1 + 2 * TRIALS):
        run(BIG)
    assert run(other) == "kernels"  # a new shape: planned, then timed again
    for _ in range(2 * TRIALS):
        run(other)
    assert run(other) == "numpy" and len(made) == 1
    assert (
        len(sources["choice"].splitlines()) == 2
        and f"int64[2, {SMALL_INPUTS}]" in sources["choice"]
    )


def test_the_cpu_backend_gives_numpys_results_on_every_call_of_the_trials():
    pytest.importorskip("numba", reason="the CPU kernels need numba: pip install 'tcompile[cpu]'")
    import tcompile as tc

    def f(x, y):
        return (np.sin(x) + 2.5) * np.maximum(y, 0.5), (x * y).sum(axis=1)

    x, y = np.random.default_rng(0).standard_normal((2, 300, 200))
    compiled = tc.compile(f, backend="cpu", fullgraph=True)
    want = f(x, y)
    for _ in range(2 + 2 * TRIALS):
        got = compiled(x, y)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    graph = compiled.__tc_compiled__.entries[-1].report.compiled
    assert graph.sources["choice"].startswith("# float64[300, 200], float64[300, 200]: ")
