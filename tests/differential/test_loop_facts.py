"""Facts about a loop's results that follow its trip count (issue 19, class 2).

After a loop node whose trip count changes from call to call (a for loop over a dynamic range,
a while loop), which of its results is an argument itself (``a is x``: true when a while loop
ran zero times, or a swap ran an odd number of times), and their memory layout (``a.T * 1.0``
alternates C and Fortran order), follow the count, not the run the trace saw. They are not
folded: reading one breaks the graph there and Python answers it. The programs are generated
from a loop form and a fact, and run eagerly and compiled over calls with other counts.
"""

from __future__ import annotations

import textwrap
import warnings

import numpy as np
import pytest
from diffharness import C, case_id, on_every_backend

import tcompile as tc

# A loop form: how `a` (and `b`) come out of a loop whose trip count is the argument `n`.
LOOPS = {
    "for_scale": "a = x\nfor i in range(n):\n    a = a * 0.5",
    "for_swap": "a, b = x, y\nfor i in range(n):\n    a, b = b, a * 1.0",
    "for_transpose": "a = x\nfor i in range(n):\n    a = a.T * 1.0",
    "for_fortran": "a = x\nfor i in range(n):\n    a = np.asfortranarray(a.T + 1.0)",
    "while_scale": "a = x\nwhile (a > 2.0 ** -n).any():\n    a = a * 0.5",
    "while_transpose": "a = x\nk = np.float64(0.0)\nwhile k < n:\n    a = a.T * 1.0\n    k = k + 1.0",
}

# A fact read after the loop (`a` its result, `x`, `y` the arguments).
FACTS = {
    "is_x": "a is x",
    "is_not_x": "a is not x",
    "is_y": "a is y",
    "strides": "a.strides",
    "c_contiguous": "a.flags.c_contiguous",
    "f_contiguous": "a.flags.f_contiguous",
    "writeable": "a.flags.writeable",
    "flags_item": "a.flags['C_CONTIGUOUS']",
    "derived_strides": "(a * 2.0).strides",
    "derived_f_contiguous": "(a + 0.0).flags.f_contiguous",
}


def program(loop: str, fact: str) -> str:
    return (
        "def prog(x, y, n):\n"
        + textwrap.indent(LOOPS[loop], "    ")
        + f"\n    fact = {FACTS[fact]}\n"
        + "    return fact, a * 1.0\n"
    )


def make(source: str):
    namespace = {"np": np}
    exec(compile(source, "<loop fact program>", "exec"), namespace)  # noqa: S102
    return namespace["prog"]


def arguments(n: int, read_only: bool = False):
    def build():
        x = np.arange(9.0).reshape(3, 3) + 1.0
        y = np.ones((3, 3))
        if read_only:
            x.flags.writeable = False
        return x, y, n

    return build


def fact_applies(loop: str, fact: str) -> bool:
    return fact != "is_y" or loop == "for_swap"


CASES = [
    C(
        f"{loop}-{fact}",
        make(program(loop, fact)),
        arguments(1),
        arguments(2),
        arguments(3),
        arguments(1, read_only=True),
        arguments(0) if loop.startswith("while") else arguments(4),
        pattern="ABCDEDA",
    )  # fmt: skip
    for loop in LOOPS
    for fact in FACTS
    if fact_applies(loop, fact)
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_a_fact_after_a_loop_follows_its_trip_count(case):
    case.run()


def test_the_break_says_the_fact_follows_the_trip_count():
    tc.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        explained = tc.explain(make(program("while_scale", "is_x")))(*arguments(2)())
    reasons = [b.reason for b in explained.break_reasons]
    assert any("follows how many times the loop node" in r for r in reasons), reasons


def test_a_loop_with_a_constant_trip_count_keeps_its_facts_in_the_graph():
    source = "def prog(x):\n    a = x\n    for i in range(3):\n        a = a.T * 1.0\n" \
             "    return a.flags.f_contiguous, a is x\n"  # fmt: skip
    tc.reset()
    explained = tc.explain(make(source))(np.ones((3, 3)))
    assert explained.graph_break_count == 0 and explained.loops[0].captured


_, _, test_cpu_backend = on_every_backend(CASES)  # loops compiled by numba
