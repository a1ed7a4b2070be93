"""Device arrays through the Triton backend: a torch tensor (on the interpreter's device, the
CPU; a CUDA tensor on a GPU) is traced as the NumPy array of its data, stays where it is, and
results come back as tensors; in-place updates and views reach the caller's tensor."""

from __future__ import annotations

import numpy as np
import pytest
from requires_triton import require_triton

torch = require_triton()

import tcompile as tc  # noqa: E402


def tensors(shape=(3, 4), dtype=torch.float64):
    return torch.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) / 3


def step(x, y):
    z = np.sin(x) * 2 + y.sum(axis=0)
    x += 1
    return z, x[1:], x.T.max()


def test_tensors_in_tensors_out_with_numpys_results_and_writes():
    compiled = tc.compile(step, backend="triton", fullgraph=True)
    for _ in range(3):
        x, y = tensors(), tensors((5, 4))
        xn, yn = x.numpy().copy(), y.numpy().copy()
        z, rows, top = compiled(x, y)
        ez, erows, etop = step(xn, yn)
        assert all(isinstance(t, torch.Tensor) for t in (z, rows, top))
        assert z.dtype == torch.float64 and top.shape == ()
        assert np.allclose(z.numpy(), ez) and np.allclose(rows.numpy(), erows)
        assert np.isclose(top.item(), etop) and np.array_equal(x.numpy(), xn)  # x += 1 landed
    assert tc.counters()["recompiles"] == 0 and tc.counters()["graphs"] == 1


def test_a_returned_view_is_a_view_of_the_callers_tensor():
    x, y = tensors(), tensors((5, 4))
    _, rows, _ = tc.compile(step, backend="triton")(x, y)
    rows[0, 0] = 100.0
    assert x[1, 0].item() == 100.0


def test_guards_know_where_and_what_a_device_array_is():
    compiled = tc.compile(lambda x: x * 2, backend="triton")
    compiled(tensors())
    compiled(tensors(dtype=torch.float32))  # another dtype: a recompile
    compiled(tensors().numpy())  # a NumPy array: another entry, NumPy out
    entries = compiled.__tc_compiled__.entries
    assert len(entries) == 3
    assert any(
        g.describe() == "x is a torch array of float64 on the CPU" for g in entries[0].guards
    )
    assert (
        "x changed: expected x is a torch array of float64"
        in entries[1].report.recompile_reasons[0]
    )
    assert isinstance(compiled(tensors().numpy()), np.ndarray)


def test_reading_a_device_arrays_layout_is_a_graph_break():
    with pytest.raises(tc.Unsupported, match="layout"):
        tc.compile(lambda x: x.strides, backend="triton", fullgraph=True)(tensors())


def test_other_backends_leave_tensors_to_python():
    compiled = tc.compile(lambda x: x + 1, backend="eager")
    out = compiled(tensors())
    assert isinstance(out, torch.Tensor)  # torch's own `+` ran, eagerly
    assert tc.counters()["graphs"] == 0
