"""Issue 23's target on the pattern kernels of bench/slow_kernels.py (NPBench and
numpy-benchmarks style: branches on array values, sizes from data, loops over rows and indices):
each is one graph under ``fullgraph=True``, bitwise eager's on the eager backend (within
tolerance on the cpu backend), and a call with new data of the same shapes reuses the entry.

Two of the fourteen print inside their loops (``ndindex_negatives``, ``print_sums``): I/O is a
graph break, as in torch.compile, so they are not here.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from harness import check_same_calls

import tcompile as tc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import slow_kernels as k  # noqa: E402


def _rng(seed):
    return np.random.default_rng(seed)


def _nbody(seed):
    g = _rng(seed)
    return g.random((16, 1)) + 0.5, g.standard_normal((16, 3)), np.zeros((16, 3)), 0.01, 40


def _wave(seed):
    grid = np.linspace(0.0, 1.0, 256)
    u0 = np.exp(-200.0 * (grid - 0.5 - 0.1 * seed) ** 2) * (1.0 + seed)  # seed 1: damped
    return u0, u0.copy(), 0.25, 60


def _rings(seed):
    g = _rng(seed)
    return g.random(4000), g.random(4000) * 40, 40


KERNELS = {
    "count_positive": (k.count_positive, lambda s: (_rng(s).standard_normal(2000),)),
    "crc16_bits": (k.crc16_bits, lambda s: (_rng(s).integers(0, 256, 300),)),
    "row_assert": (k.normalize_rows, lambda s: (_rng(s).random((200, 32)) + 0.5,)),
    "crc16_npbench": (k.crc16_npbench, lambda s: (_rng(s).integers(0, 256, 300, np.uint8),)),
    "nussinov": (k.nussinov, lambda s: (_rng(s).integers(0, 4, 40).astype(np.int32),)),
    "nbody": (k.nbody, _nbody),
    "wave": (k.wave, _wave),
    "check_mask": (k.check_mask, lambda s: (_rng(s).integers(0, 2, (500, 4)), np.array([1, 0, 1]))),
    "rows_lengths": (k.row_energy, lambda s: (_rng(s).random((60, 32)),)),
    "prefix_slice": (k.prefix_above, lambda s: (_rng(s).random(200),)),
    "radial_means": (k.radial_means, _rings),
    "weighted_hits": (k.weighted_hits, lambda s: (_rng(s).standard_normal(5000), _rng(s).random(5000))),
}  # fmt: skip


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_one_graph_under_fullgraph_and_new_data_reuses_the_entry(name, backend):
    if backend == "cpu":
        pytest.importorskip("numba", reason="the cpu backend needs numba")
    fn, make = KERNELS[name]
    tc.reset()
    check_same_calls(fn, [(make(seed), {}) for seed in range(3)], backend=backend,
                     later_calls_hit_cache=True)  # fmt: skip
    counters = tc.counters()
    assert counters["graphs"] == 1 and counters["graph_breaks"] == 0, counters
