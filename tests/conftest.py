"""Every test starts and ends with a fresh compiler: no cache, counter or log left behind, and
numba's start, where it is installed, is over. The ``shell`` fixture: a real IPython shell with
the extension loaded (the ``%%tcompile`` magic)."""

from __future__ import annotations

import os

import pytest

# Triton's interpreter where the machine has no NVIDIA GPU, set before anything imports Triton:
# its @triton.jit makes interpreted functions only where the setting is there when they are
# defined (a module of helpers imported earlier would hold compiled ones). tests/triton's own
# conftest decides again where a GPU is there but torch cannot use it.
if "TRITON_INTERPRET" not in os.environ and not os.path.exists("/dev/nvidiactl"):
    os.environ["TRITON_INTERPRET"] = "1"

import tcompile as tc  # noqa: E402
from tcompile.tracer.ir.first_run import FirstRun  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def numba_started():
    """numba's start is over before any test: a graph compiled for the cpu backend while it
    runs makes its kernels at its second call (`backend/cpu/while_starting.py`, whose own tests
    bring that about), and each test's first call would depend on the order tests run in."""
    from tcompile.backend.cpu import numba_start

    numba_start.start()
    numba_start.wait()


@pytest.fixture(autouse=True)
def fresh_compiler_state():
    tc.reset()
    yield
    tc.reset()


@pytest.fixture
def branches_break(monkeypatch):
    """Branches on array values break the graph (``tc.config.cond_nodes = False``), as
    torch.compile's do: for tests of the break machinery (resume functions, split loops, break
    messages), which such branches drive."""
    monkeypatch.setattr(tc.config, "cond_nodes", False)


@pytest.fixture
def sizes_break(monkeypatch):
    """Operations whose output size follows array values (``x[mask]``, ``np.nonzero``) break
    the graph (``tc.config.sizes_from_data = False``), as torch.compile's do by default: for
    tests of the break machinery that such operations drive."""
    monkeypatch.setattr(tc.config, "sizes_from_data", False)


@pytest.fixture
def replays(monkeypatch) -> list[bool]:
    """Whether each kept first run of a loop (tracer/ir/first_run.py) was replayed (True) or
    missed (False) by the graph's call that took it, in order."""
    seen: list[bool] = []
    real = FirstRun.replay

    def replay(self, args):
        results = real(self, args)
        seen.append(results is not None)
        return results

    monkeypatch.setattr(FirstRun, "replay", replay)
    return seen


@pytest.fixture(scope="module")
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "tcompile")
    yield ip
    ip.run_line_magic("unload_ext", "tcompile")
