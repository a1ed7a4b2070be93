"""Time to build and render the ``%%tcompile`` widget: a cell of 10 graphs, and graphs of any size.

Run from the repository root::

    python bench/widget_render.py            # 21 repeats
    python bench/widget_render.py --repeat 5

First table: the cell defines ten small NumPy functions (6 to 12 ops each) and calls each once,
so its run holds ten compile reports with one graph each. One repeat builds a `CellWidget` from
that run and the bundle of its saved copy (the static HTML and text shown in saved notebooks),
with the drawings forgotten first, so every graph is drawn again. Graphviz is warmed up before
timing. Target: median <= 300 ms.

Second table: one function whose unrolled loop makes a graph of about 10, 300, 3,000 and 9,000
ops (a branch on ``k % 2`` unrolls it); per size the compile (its first call) and then what the
report adds: the first build of the widget's bundle after the cell ran, drawing included (a
graph over `drawing.DRAW_LIMIT` ops is summarised instead). Target: at most 300 ms beyond the
compile at every size.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))

from widget_cells import run_cell  # noqa: E402

from tcompile.widgets import BackendChoice, CellWidget, drawing  # noqa: E402

TARGET_MS = 300.0

CELL = """
import numpy as np
import tcompile as tc

@tc.compile
def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)

@tc.compile
def layernorm(x, w, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * w + b

@tc.compile
def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))

@tc.compile
def mse(a, b):
    d = a - b
    return (d * d).mean(), np.abs(d).max()

@tc.compile
def mlp(x, w1, w2):
    h = np.maximum(x @ w1, 0)
    return np.tanh(h @ w2) + x.sum(axis=-1, keepdims=True)

@tc.compile
def haversine(lat1, lon1, lat2, lon2):
    dlat = np.radians(lat2 - lat1)
    dlon = np.radians(lon2 - lon1)
    a = np.sin(dlat / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin(dlon / 2) ** 2
    return 2 * np.arcsin(np.sqrt(a))

@tc.compile
def stencil(u):
    v = u.copy()
    v[1:-1] = 0.25 * (u[:-2] + 2 * u[1:-1] + u[2:])
    v += 1.0
    return v

@tc.compile
def normalize(x):
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.where(n > 0, x / n, 0.0), n.squeeze(-1)

@tc.compile
def logsumexp(x):
    m = x.max(axis=-1)
    return m + np.log(np.exp(x - m[..., None]).sum(axis=-1))

@tc.compile
def poly(x):
    y = x * x
    return 3 * y * x - 2 * y + x - 7, np.cumsum(y)

x = np.random.rand(4, 8)
softmax(x); layernorm(x, np.ones(8), np.zeros(8)); gelu(x); mse(x, x + 1)
mlp(x, np.random.rand(8, 16), np.random.rand(16, 8))
haversine(x[0], x[1], x[2], x[3]); stencil(x[0]); normalize(x); logsumexp(x); poly(x[0])
"""

# an unrolled loop of `terms` terms: two graph ops a term
SERIES_CELL = """
import numpy as np
import tcompile as tc

@tc.compile
def series(x):
    s = x * 0
    for k in range({terms}):
        if k % 2:
            s = s + x * k
        else:
            s = s - x / (k + 1)
    return s

series(np.ones(3))
"""
SIZES = (5, 150, 1500, 4500)  # graphs of 11, 301, 3,001 and 9,001 ops

BACKENDS = [
    BackendChoice("auto"),
    BackendChoice("eager"),
    BackendChoice("triton", usable=False, reason="no CUDA GPU"),
]


def build_and_render(run) -> dict:
    """What displaying a cell's report makes: the live widget and its saved copy's bundle."""
    widget = CellWidget(run, BACKENDS, on_options=lambda options: None)
    widget._repr_mimebundle_()
    return widget.saved_copy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()

    run = run_cell(CELL)
    graphs = sum(len(r.graphs) for r in run.reports)
    build_and_render(run)  # warm-up: Graphviz's first call, ipywidgets' first widgets
    times = []
    for _ in range(args.repeat):
        drawing.forget()
        start = time.perf_counter()
        bundle = build_and_render(run)
        times.append((time.perf_counter() - start) * 1e3)
    assert bundle["text/html"].count("<svg") == graphs, "every graph is drawn"
    median = statistics.median(times)
    print(f"{len(run.reports)} compiles, {graphs} graphs; {args.repeat} repeats")
    verdict = "met" if median <= TARGET_MS else "MISSED"
    print(
        f"build + render a CellWidget: median {median:.1f} ms "
        f"(min {min(times):.1f}, max {max(times):.1f}); target <= {TARGET_MS:.0f} ms: {verdict}"
    )
    print()
    print(f"{'graph ops':>10} {'compile ms':>11} {'report ms':>10} {'drawn':>6} {'static KB':>10}")
    worst = 0.0
    for terms in SIZES:
        run = run_cell(SERIES_CELL.format(terms=terms))
        ops = sum(g.op_count() for r in run.reports for g in r.graphs)
        start = time.perf_counter()
        bundle = build_and_render(run)
        report_ms = (time.perf_counter() - start) * 1e3
        worst = max(worst, report_ms)
        compile_ms = sum(r.compile_time for r in run.reports) * 1e3
        drawn = "yes" if "<svg" in bundle["text/html"] else "no"
        print(f"{ops:>10} {compile_ms:>11.1f} {report_ms:>10.1f} {drawn:>6} "
              f"{len(bundle['text/html']) / 1024:>10.0f}")  # fmt: skip
    verdict = "met" if worst <= TARGET_MS else "MISSED"
    print(
        f"report beyond the compile, worst size: {worst:.1f} ms; target <= {TARGET_MS:.0f} ms: {verdict}"
    )


if __name__ == "__main__":
    main()
