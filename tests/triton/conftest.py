"""Triton backend tests run real kernels: on the GPU when there is one, else under Triton's
interpreter (``TRITON_INTERPRET=1``, set here before anything imports Triton)."""

from __future__ import annotations

import os

import pytest


def _has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


if "TRITON_INTERPRET" not in os.environ and not _has_gpu():
    os.environ["TRITON_INTERPRET"] = "1"


def _language_modules() -> list:
    try:
        import triton.language as tl
    except ImportError:
        return []
    return [tl, tl.core, tl.math, tl.standard, tl.tensor]


# Triton's interpreter (3.9) leaves triton.language patched after a kernel that calls a jitted
# library function (tl.sum): the CUDA compiler then sees the interpreter's lambdas. Keep the
# pristine attributes to put back before the tests that use that compiler.
_PRISTINE = {id(m): dict(vars(m)) for m in _language_modules()}


@pytest.fixture
def pristine_triton_language():
    """triton.language as it was before any kernel ran in the interpreter."""
    for module in _language_modules():
        saved = _PRISTINE[id(module)]
        for name in [n for n in vars(module) if n not in saved]:
            delattr(module, name)
        for name, value in saved.items():
            if vars(module).get(name) is not value:
                setattr(module, name, value)


@pytest.fixture(scope="session", autouse=True)
def scratch_caches(tmp_path_factory):
    """Generated kernel files and Triton's compiled kernels go to a scratch folder, not the
    user's caches."""
    saved = {name: os.environ.get(name) for name in ("TCOMPILE_CACHE_DIR", "TRITON_CACHE_DIR")}
    for name in saved:
        os.environ[name] = str(tmp_path_factory.mktemp(name.lower()))
    yield
    for name, value in saved.items():
        if value is None:
            del os.environ[name]
        else:
            os.environ[name] = value


@pytest.fixture
def strict_interpreter(monkeypatch):
    """Integer ops that C and LLVM leave undefined (a shift by a count outside [0, bits), x / 0,
    x % 0, MIN / -1) return garbage under the interpreter, as they may on a GPU, instead of the
    interpreter's NumPy answer: a kernel that relies on them fails its test."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        return
    import numpy as np
    from triton.runtime.interpreter import InterpreterBuilder

    def bad_shift(lhs, rhs):
        return (rhs < 0) | (rhs >= lhs.dtype.itemsize * 8)

    def bad_division(lhs, rhs):
        if lhs.dtype.kind != "i":
            return rhs == 0
        return (rhs == 0) | ((lhs == np.iinfo(lhs.dtype).min) & (rhs == -1))

    def garbage_where(undefined, original):
        def method(self, lhs, rhs):
            out = original(self, lhs, rhs)
            with np.errstate(all="ignore"):
                bad = np.broadcast_to(undefined(lhs.data, rhs.data), out.data.shape)
            if bad.any():
                junk = np.frombuffer(b"Z" * out.data.dtype.itemsize, out.data.dtype)  # 0x5A...
                out.data = np.where(bad, junk, out.data)
            return out

        return method

    for name, undefined in [
        ("create_shl", bad_shift),
        ("create_lshr", bad_shift),
        ("create_ashr", bad_shift),
        ("create_sdiv", bad_division),
        ("create_udiv", bad_division),
        ("create_srem", bad_division),
        ("create_urem", bad_division),
    ]:
        monkeypatch.setattr(
            InterpreterBuilder, name, garbage_where(undefined, getattr(InterpreterBuilder, name))
        )
