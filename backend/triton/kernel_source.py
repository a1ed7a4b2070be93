"""Turn generated kernel source into Triton functions: written once to a file named by its hash.

Triton's ``@triton.jit`` reads a function's source with ``inspect``, so a generated kernel must
live in a real file. The file is the cache key too: the same source is loaded from the same file
in every process, and Triton's own cache (``~/.triton/cache``) keeps the compiled binary.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
from pathlib import Path


def cache_dir() -> Path:
    """Where kernel sources live: ``$TCOMPILE_CACHE_DIR/triton`` or ``~/.cache/tcompile/triton``."""
    root = os.environ.get("TCOMPILE_CACHE_DIR") or Path.home() / ".cache" / "tcompile"
    return Path(root) / "triton"


@functools.lru_cache(maxsize=512)
def load_module(source: str):
    """The module holding ``source`` (a whole Python file of ``@triton.jit`` kernels); loaded
    once per process, written once per cache directory."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"k_{digest}.py"
    if not path.exists() or path.read_text() != source:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(source)
        os.replace(tmp, path)  # atomic: another process never reads a half-written file
    name = f"tcompile_kernels_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Triton resolves globals of the kernel through its module
    spec.loader.exec_module(module)
    return module


def load_kernel(source: str, name: str):
    """The ``@triton.jit`` function ``name`` defined in ``source``.

    >>> src = "import triton\\n@triton.jit\\ndef k(x_ptr):\\n    pass\\n"
    >>> load_kernel(src, "k")  # doctest: +SKIP
    JITFunction(...:k)
    """
    return getattr(load_module(source), name)
