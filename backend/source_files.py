"""Generated source as a module: written once to a file named by its hash, then imported.

Triton's ``@triton.jit`` reads a function's source with ``inspect``, and numba's disk cache keys
a compiled function by its file, so generated code must live in a real file. The file is the
cache key too: the same source is loaded from the same file in every process, and the
compilers' own caches (``~/.triton/cache``; numba's ``__pycache__`` beside the file) keep the
machine code.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
from pathlib import Path


def cache_dir(backend: str) -> Path:
    """Where a backend's sources live: ``$TCOMPILE_CACHE_DIR/<backend>`` or
    ``~/.cache/tcompile/<backend>``."""
    root = os.environ.get("TCOMPILE_CACHE_DIR") or Path.home() / ".cache" / "tcompile"
    return Path(root) / backend


@functools.lru_cache(maxsize=512)
def load_module(source: str, backend: str = "triton"):
    """The module holding ``source`` (a whole Python file of generated functions); loaded
    once per process, written once per cache directory."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    folder = cache_dir(backend)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"k_{digest}.py"
    if not path.exists() or path.read_text() != source:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(source)
        os.replace(tmp, path)  # atomic: another process never reads a half-written file
    name = f"tcompile_{backend}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the compilers resolve a function's globals through its module
    spec.loader.exec_module(module)
    return module


def load_kernel(source: str, name: str):
    """The function ``name`` defined in ``source`` (a ``@triton.jit`` kernel, say).

    >>> src = "import triton\\n@triton.jit\\ndef k(x_ptr):\\n    pass\\n"
    >>> load_kernel(src, "k")  # doctest: +SKIP
    JITFunction(...:k)
    """
    return getattr(load_module(source), name)
