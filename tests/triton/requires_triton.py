"""What the Triton backend's tests need, and why they skip without it."""

from __future__ import annotations

import pytest

WHY = (
    "the Triton backend's tests run real kernels in Triton's CPU interpreter, which needs torch "
    "tensors; torch's CPU build installs offline only for Python 3.11 here (`make test` installs "
    "it there with the gpu extra)"
)


def require_triton():
    """Skip the calling test module unless torch and triton import; returns torch."""
    torch = pytest.importorskip("torch", reason=f"torch is not installed: {WHY}")
    pytest.importorskip("triton", reason=f"triton is not installed: {WHY}")
    return torch
