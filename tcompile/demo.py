"""The demo (``python -m tcompile.demo``): compile a few NumPy functions and show what was captured.

For each function: the captured graph as the Python that runs, its guards, and the
``tc.explain`` report; then a recompile with automatic dynamic shapes, and a graph break.
"""

from __future__ import annotations

import numpy as np

import tcompile as tc


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


class Linear:
    def __init__(self, n_in, n_out):
        rng = np.random.default_rng(0)
        self.w = rng.standard_normal((n_in, n_out))
        self.b = np.zeros(n_out)

    def __call__(self, x):
        return np.maximum(x @ self.w + self.b, 0)


LAYER = Linear(4, 3)


def mlp_step(x, steps=3):
    for _ in range(steps):  # unrolled at trace time
        x = x + 0.1 * LAYER(x).sum(axis=-1, keepdims=True)
    return x


def with_print(x):
    y = np.sin(x)
    print("  (eager) y.sum() =", y.sum())  # a graph break: compiled before, resumed after
    return y * 2


def branchy(x):
    y = np.cos(x)
    if y.sum() > 0:  # a branch on an array's value: two continuations
        return y * 2
    return y - 1


def rule(title: str) -> None:
    print(f"\n{'=' * 78}\n{title}\n{'=' * 78}")


def show(fn, *args) -> None:
    compiled = tc.compile(fn)
    with tc.CompileProfiler() as prof:
        result = compiled(*args)
    first = prof.reports[0]
    rule(f"{fn.__name__}{tuple(np.shape(a) for a in args)} -> {np.shape(result)}")
    if first.outcome == "eager":
        print(f"runs eagerly: {first.eager_reason}")
    else:
        print("Graph (the Python that runs, with the eager backend's memory plan):\n")
        print(first.sources.get("backend") or first.sources["graph"])
        if first.breaks:
            print("Glue (the graph, then the break run eagerly, then the resume function):\n")
            print(first.sources["glue"])
    print("Guards:")
    for guard in first.guards:
        print(f"  {guard.describe()}")
    print("\nexplain:")
    print("  " + str(tc.explain(fn)(*args)).replace("\n", "\n  "))


def main() -> None:
    x = np.linspace(-1.0, 1.0, 8).reshape(2, 4)
    show(softmax, x)
    show(layer_norm, x, np.ones(4), np.zeros(4))
    show(mlp_step, x)
    show(with_print, x)
    show(branchy, x)

    rule("Recompiles and automatic dynamic shapes")
    tc.reset()
    f = tc.compile(softmax)
    with tc.CompileProfiler() as prof:
        for rows in (2, 3, 5, 7):
            f(np.ones((rows, 4)))
    print(prof.report())
    print("\nThe second entry treats dim 0 as dynamic:\n")
    print(f.__tc_compiled__.entries[-1].graph)
    print("counters:", tc.counters())

    rule("fullgraph=True turns a graph break into an error")
    try:
        tc.compile(with_print, fullgraph=True)(x)
    except tc.Unsupported as error:
        print(error)
    print("\ncompile times:\n" + tc.compile_times())


if __name__ == "__main__":
    main()
