"""Every test starts and ends with a fresh compiler: no cache, counter or log left behind. The
``shell`` fixture: a real IPython shell with the extension loaded (the ``%%tcompile`` magic)."""

from __future__ import annotations

import pytest

import tcompile as tc
from tcompile.tracer.ir.first_run import FirstRun


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
