"""Loops whose bodies change state that existed before the call (issue 19, class 1).

A loop node runs its body once per iteration, but what a trace changes in pre-existing Python
state (an attribute, a list or dict it was given, a global, a closure cell) is replayed once,
after the graph. Such a body must not become a loop node, however the state is reached: read
before the loop, first read inside the body (``o.log``, ``ll[0]``, ``o.inner.n``), through a
method's ``self``, or by a callee (``global COUNT; COUNT += 1``, a list a closure appends to).

Every program below is one loop form (for over rows, a range, a dynamic range, enumerate, zip;
while on a Python int; while on an array condition) around one change of outside state,
generated from a template and run eagerly and compiled over fresh arguments (results bitwise,
arguments and objects after the call, globals and closure state observed, warnings). A
hypothesis test mixes array statements and such changes at random.
"""

from __future__ import annotations

import sys
import textwrap
import types
import warnings

import numpy as np
import pytest
from diffharness import C, case_id, check
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import tcompile as tc

# -- the state the programs change --------------------------------------------------------------


class Inner:
    def __init__(self):
        self.n = 0


class Obj:
    def __init__(self):
        self.log = []
        self.inner = Inner()
        self.hist = []
        self.last = None

    def record(self, value):
        self.hist.append(value)

    def tally(self):
        self.inner.n += 1


# The module the programs run in: their globals, and the callees that change them.
MODULE = types.ModuleType("loop_effects_programs")
MODULE.np = np
exec(  # noqa: S102 - helpers defined in the programs' own globals
    textwrap.dedent(
        """
        COUNT = 0
        GL = []

        def bump():
            global COUNT
            COUNT += 1

        def push(v):
            GL.append(v)

        def make_cell_helpers():
            box = []
            hits = 0

            def cpush(v):
                box.append(v)

            def ccount():
                nonlocal hits
                hits += 1

            def seen():
                return list(box), hits

            return cpush, ccount, seen
        """
    ),
    MODULE.__dict__,
)
sys.modules[MODULE.__name__] = MODULE


def reset(_letter=None) -> None:
    MODULE.COUNT = 0
    MODULE.GL = []
    MODULE.cpush, MODULE.ccount, MODULE.seen = MODULE.make_cell_helpers()


def observe():
    box, hits = MODULE.seen()
    return MODULE.COUNT, list(MODULE.GL), box, hits


reset()

# -- the programs ----------------------------------------------------------------------------------

# A loop form: its head, the statements that begin each iteration (`row` is this iteration's
# row), and those that end it. Every form visits rows of x (4 x 3) with `acc` carried.
LOOPS = {
    "rows": ("for row in x:", "", ""),
    "range": ("for i in range(x.shape[0]):", "row = x[i]", ""),
    "range_n": ("for i in range(n):", "row = x[i % 4]", ""),
    "enumerate": ("for i, row in enumerate(x):", "", ""),
    "zip": ("for row, w in zip(x, y):", "row = row * w", ""),
    "while_int": ("i = 0\nwhile i < n:", "row = x[i % 4]", "i += 1"),
    "while_array": ("while (acc < 2.5 * n).all():", "row = x[0] + 1.0", ""),
}

# One change of outside state per program; `{v}` is a value the body computes.
CHANGES = {
    "attr_append": "o.log.append('step')",
    "attr_append_value": "o.log.append(float({v}.sum()))",
    "attr_append_array": "o.log.append({v})",
    "nested_append": "ll[0].append(1)",
    "nested_append_value": "ll[0].append({v}[0])",
    "attr_attr_iadd": "o.inner.n += 1",
    "attr_store": "o.last = {v}",
    "list_item_store": "ll[1] = ll[1] + 1",
    "dict_item": "d['k'] = d.get('k', 0) + 1",
    "dict_item_value": "d['v'] = {v}",
    "method_append": "o.record(float({v}[1]))",
    "method_iadd": "o.tally()",
    "callee_global_counter": "bump()",
    "callee_global_list": "push(float({v}[2]))",
    "global_list_append": "GL.append(1)",
    "callee_closure_list": "cpush({v}[0])",
    "callee_nonlocal_counter": "ccount()",
    "set_add": "s.add(int({v}[0]))",
}


def program(loop: str, changes: list[str], extra: list[str] = ()) -> str:
    """The program of one loop form around the ``changes`` (keys of `CHANGES`)."""
    head, begin, end = LOOPS[loop]
    body = [begin, "acc = acc + row", *extra, *(CHANGES[c].format(v="acc") for c in changes), end]
    text = "\n".join(line for line in body if line)
    return (
        "def prog(x, y, n, o, ll, d, s):\n"
        "    acc = np.zeros(3)\n"
        + textwrap.indent(head, "    ")
        + "\n"
        + textwrap.indent(text, "        ")
        + "\n    return acc\n"
    )


def make(source: str):
    exec(compile(source, "<loop effects program>", "exec"), MODULE.__dict__)  # noqa: S102
    return MODULE.__dict__.pop("prog")


def arguments(rows: int, n: int):
    def build():
        x = np.arange(rows * 3, dtype=np.float64).reshape(rows, 3) / 4
        y = np.linspace(0.5, 1.5, rows * 3).reshape(rows, 3)
        return x, y, n, Obj(), [[], 0], {}, set()

    return build


def test_every_program_runs_plainly_without_error():
    for loop in LOOPS:
        for change in CHANGES:
            reset()
            make(program(loop, [change]))(*arguments(4, 4)())


CASES = [
    C(
        f"{loop}-{change}",
        make(program(loop, [change])),
        arguments(4, 4),
        arguments(4, 3),
        setup=reset,
        observe=observe,
    )  # fmt: skip
    for loop in LOOPS
    for change in CHANGES
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_a_loop_changing_outside_state_matches_eager(case):
    case.run()


# -- what became of the loops ------------------------------------------------------------------


def loop_records(fn, build):
    tc.reset()
    reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tc.explain(fn)(*build()).loops


@pytest.mark.parametrize("change", ["attr_append", "nested_append", "attr_attr_iadd",
                                    "method_iadd", "callee_global_counter",
                                    "callee_closure_list", "callee_nonlocal_counter"])  # fmt: skip
def test_such_a_loop_is_unrolled_and_says_why(change):
    records = loop_records(make(program("rows", [change])), arguments(4, 4))
    assert records and not any(r.captured for r in records)
    assert any("made before the loop" in r.reason or "before the call" in r.reason
               or "writes global" in r.reason for r in records), [r.reason for r in records]  # fmt: skip


def test_a_loop_changing_only_what_it_made_stays_a_loop_node():
    source = program("rows", [], extra=["t = []", "t.append(row)", "acc = acc + t[0]"])
    records = loop_records(make(source), arguments(4, 4))
    assert [r.captured for r in records] == [True]


# -- random programs -----------------------------------------------------------------------------

ARRAY_STATEMENTS = [
    "acc = acc * 1.5",  # every statement keeps acc growing: the while_array loop ends
    "acc = np.maximum(acc, row)",
    "acc[0] = acc[0] + 1.0",
    "acc = acc + row.sum()",
]

programs = st.builds(
    lambda loop, statements: program(loop, [], extra=statements),
    st.sampled_from(list(LOOPS)),
    st.lists(st.sampled_from(ARRAY_STATEMENTS + [c.format(v="acc") for c in CHANGES.values()]),
             min_size=1, max_size=4),
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=programs)
def test_random_loops_changing_state_match_eager(source):
    note(source)
    check(make(source), arguments(4, 4), arguments(4, 3), arguments(4, 1), setup=reset,
          observe=observe, pattern="AABCA")  # fmt: skip
