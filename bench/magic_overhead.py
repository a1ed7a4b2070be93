"""What ``%%tcompile`` adds to a cell that compiles nothing, next to the same plain cell.

Run from the repository root::

    python bench/magic_overhead.py

Both cells run in one IPython ``InteractiveShell`` (the kernel's own shell class, without the
messaging), alternately, many times; the cell assigns and prints nothing heavy, so what is
left is the magic's own work: parsing options, registering the cell's source, running its
statements one by one, collecting reports, building the widget (with its empty Graphs page)
and displaying it. Medians in milliseconds; the target is at most 20 ms added.
"""

from __future__ import annotations

import contextlib
import io
import statistics
import time

from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell

TARGET_MS = 20.0
CELL = "values = [i * i for i in range(100)]\ntotal = sum(values)\ntotal\n"


def cell_ms(shell, text: str) -> float:
    with contextlib.redirect_stdout(io.StringIO()):  # the cells' Out lines
        start = time.perf_counter()
        result = shell.run_cell(text, store_history=True)
        elapsed = (time.perf_counter() - start) * 1e3
    if not result.success:
        raise RuntimeError(f"the benchmark cell failed: {result.error_in_exec!r}")
    return elapsed


def main() -> int:
    shell = InteractiveShell.instance()
    shell.display_pub = CapturingDisplayPublisher()
    shell.run_line_magic("load_ext", "tcompile")
    variants = {"plain": CELL, "%%tcompile": "%%tcompile\n" + CELL}
    for text in variants.values():  # warm up: imports, the first widget
        cell_ms(shell, text)
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(60):
        for name, text in variants.items():
            samples[name].append(cell_ms(shell, text))
            shell.display_pub.outputs.clear()
    medians = {name: statistics.median(ms) for name, ms in samples.items()}
    added = medians["%%tcompile"] - medians["plain"]
    print(f"plain cell       {medians['plain']:7.2f} ms (median of {len(samples['plain'])})")
    print(f"%%tcompile cell  {medians['%%tcompile']:7.2f} ms")
    print(f"added by the magic: {added:.2f} ms; target <= {TARGET_MS:g} ms -> "
          f"{'met' if added <= TARGET_MS else 'NOT MET'}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
