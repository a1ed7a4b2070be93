"""``%%tcompile --backend triton`` in a real IPython shell: the cell runs its functions as
Triton kernels, and the cell's widget shows them (the Kernels tab and the static copy)."""

from __future__ import annotations

import numpy as np
import pytest
from requires_triton import require_triton

require_triton()
pytest.importorskip("IPython", reason="the jupyter extra is not installed")

from IPython.core.displaypub import CapturingDisplayPublisher  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

CELL = """%%tcompile --backend triton
def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)

out = softmax(x)
"""


@pytest.fixture
def shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "tcompile")
    ip.display_pub = CapturingDisplayPublisher()
    ip.run_cell("import numpy as np; x = np.linspace(-2, 2, 48).reshape(4, 12)")
    yield ip
    ip.run_line_magic("unload_ext", "tcompile")


def test_a_triton_cell_shows_its_kernels(shell):
    result = shell.run_cell(CELL, store_history=True)
    assert result.success, result.error_in_exec
    x = shell.user_ns["x"]
    expected = np.exp(x - x.max(axis=-1, keepdims=True))
    assert np.allclose(shell.user_ns["out"], expected / expected.sum(axis=-1, keepdims=True))
    html = "\n".join(str(o["data"].get("text/html", "")) for o in shell.display_pub.outputs)
    text = "\n".join(str(o["data"].get("text/plain", "")) for o in shell.display_pub.outputs)
    assert "Kernels" in html and "@triton.jit" in html and "tl.reduce" in html
    assert "row reduction" in html  # the fusion note: softmax is one kernel
    assert "(triton): 1 (1 fused reduction)" in text
