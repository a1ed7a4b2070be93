"""numba starts on a thread of its own when a function is compiled for the cpu backend
(`backend/cpu/numba_start.py`): importing tcompile loads no numba, compiling for the cpu
backend loads it in the background, and the first call finds it ready and runs as plain
NumPy does. In a fresh process, as a restarted notebook kernel is."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba", reason="the cpu backend needs numba")

PROGRAM = """
import json, sys
import numpy as np
import tcompile
from tcompile.backend.cpu import numba_start

def smooth(v):
    out = np.zeros_like(v)
    for i in range(1, v.shape[0] - 1):
        out[i] = (v[i - 1] + v[i] + v[i + 1]) / 3.0
    return out

facts = {"after import": "numba" in sys.modules}
f = tcompile.compile(smooth, backend="cpu")
numba_start._thread.join()
facts["after compile"] = "numba" in sys.modules
v = np.arange(10.0) ** 2
facts["same"] = bool((f(v) == smooth(v)).all())
facts["native"] = tcompile.explain(smooth, backend="cpu")(v).graph_count == 1
print(json.dumps(facts))
"""


def test_numba_is_started_by_compiling_for_the_cpu_backend_not_by_importing(tmp_path):
    env = {**os.environ, "TCOMPILE_CACHE_DIR": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                         env=env, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr
    facts = json.loads(run.stdout.strip().splitlines()[-1])
    assert facts == {"after import": False, "after compile": True, "same": True,
                     "native": True}, facts  # fmt: skip
