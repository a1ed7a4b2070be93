"""Random straight-line NumPy programs with graph breaks anywhere behave exactly like eager.

A small grammar generates the body of

    def prog(a, b, m, k, lst):          # a, b: float64 (4,); m: float64 (3, 4); k: float; lst: list
        c = m.sum(axis=0)
        n = 0                           # a Python int counter
        <statements>
        return a, b, c, m, k, lst, n

from array statements (rebinding, in-place updates of the inputs, views of an input), Python
scalar and list updates, calls to the helpers of `break_programs` (one of which prints), and
breaks: `print(...)`, `tc.graph_break()`, `if <array condition>:`
blocks with an optional `else`, blocks that keep (`with np.errstate`, `with
contextlib.nullcontext()`) the frame around a break, and `for`/`while` loops, which run split
around a break inside them (their body a compiled function of its own), use their variable and
leave early (`break`, `continue`). Every program is compiled
with fullgraph=False and compared with eager by `check_same_calls`: results bitwise, stdout,
mutated arguments, aliasing. A second call with equal arguments must be served from the cache; a
call with new array values must match too (and hit the cache when no array value decides a branch
or becomes a Python scalar). Programs are deterministic: no randomness inside them.
"""

from __future__ import annotations

import hashlib
import textwrap

import break_programs as bp
import numpy as np
from harness import check_same_calls, perturbed
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st

import tcompile as tc

A4 = np.array([0.5, -1.25, 2.0, 0.75])
B4 = np.array([1.5, 0.25, -0.5, 3.0])
M34 = np.arange(12, dtype=np.float64).reshape(3, 4) / 5.0 - 0.7

SIMPLE = [
    "a = a + b",
    "b = np.sin(a) * k",
    "c = a.sum(axis=0)",
    "c = m.sum(axis=0)",
    "lst.append(a.mean())",
    "lst.append(len(lst))",
    "a[0] = b[1]",
    "m[1] = a * k",
    "a += c",
    "k = k * 0.5 + 1.0",
    "b = np.where(a > b, a, b)",
    "m = m * 0.5 - a",
    "a = np.maximum(a, c) / (1.0 + k * k)",
    "c = np.cumsum(b)",
    "b = b[::-1].copy()",
    "b = m[2]",
    "b += 1.0",
    "lst.append(b)",
    "a = affine(a, a=k, b=1.0)",
    "b = combine(a, b, w=0.25)",
    "c = helper_chain(c)",
    "n += 1",
    "n = n * 2 - 1",
    "b = b * 0.5 + n",
]
# Array data that becomes a Python scalar: later frames may specialize on it.
DATA_TO_PYTHON = ["k = float(a[0])"]
BREAKS = [
    'print("P", a)',
    'print("P", lst, k)',
    'print("P", c, m[0])',
    "tc.graph_break()",
    "a = noisy(a)",
]
CONDITIONS = ["a.sum() > 0.0", "m.mean() < 0.5", "b[0] > a[1]", "c.max() > 1.0"]
WITH_HEADS = ['with np.errstate(all="ignore"):', "with contextlib.nullcontext():"]

Lines = list[str]


def _indent(lines: Lines) -> Lines:
    return ["    " + line for line in lines]


def _flat(blocks: list[Lines]) -> Lines:
    return [line for block in blocks for line in block]


# Loops run split around their breaks (the body a compiled function of its own): they use their
# variable (an int, or a row of m), leave early and skip iterations.
LOOP_HEADS = ["range(2)", "range(3)", "range(0)", "m"]


def _loop_leaves(var: str) -> list[Lines]:
    return [[f"a = a + {var}"], [f"lst.append({var})"], ["if c.max() > 1.0:", "    continue"],
            ["if b[0] > a[1]:", "    break"], [f"if {var} is a:", "    break"]]  # fmt: skip


def statements(depth: int, loop_var: str | None = None) -> st.SearchStrategy[Lines]:
    leaf = st.sampled_from(SIMPLE + DATA_TO_PYTHON + BREAKS).map(lambda s: [s])
    if loop_var is not None:
        leaf = st.one_of(leaf, st.sampled_from(_loop_leaves(loop_var)))
    if depth == 0:
        return leaf
    body = st.lists(statements(depth - 1, loop_var), min_size=1, max_size=2).map(_flat)
    if_block = st.tuples(st.sampled_from(CONDITIONS), body, st.none() | body).map(
        lambda t: [f"if {t[0]}:", *_indent(t[1]), *(["else:", *_indent(t[2])] if t[2] else [])]
    )
    with_block = st.tuples(st.sampled_from(WITH_HEADS), body).map(lambda t: [t[0], *_indent(t[1])])
    var = f"_i{depth}"
    loop_body = st.lists(statements(depth - 1, var), min_size=1, max_size=3).map(_flat)
    for_block = st.tuples(st.sampled_from(LOOP_HEADS), loop_body).map(
        lambda t: [f"for {var} in {t[0]}:", *_indent(t[1])]
    )
    while_block = loop_body.map(
        lambda b: [f"{var} = 0", f"while {var} < 2:", f"    {var} += 1", *_indent(b)]
    )
    return st.one_of(leaf, leaf, leaf, if_block, with_block, for_block, while_block)


programs = st.lists(statements(2), min_size=1, max_size=8).map(_flat)


def source_of(body: Lines) -> str:
    return (
        "def prog(a, b, m, k, lst):\n"
        "    c = m.sum(axis=0)\n"
        "    n = 0\n"
        + textwrap.indent("\n".join(body), "    ")
        + "\n    return a, b, c, m, k, lst, n\n"
    )


def check_program(body: Lines, timed: bool = False) -> None:
    """``timed``: with split loops' pay checks, which may run iterations plainly (results are
    compared, not which calls compile: `check_same_calls` turns them off to count compiles)."""
    source = source_of(body)
    note(source)
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    fn, _ = bp.build(source, "prog", f"<tc-break-prop {digest}>")
    tc.reset()
    args = (A4.copy(), B4.copy(), M34.copy(), 0.75, [])
    first = (args, {})
    data_decides = any(line.lstrip().startswith("if ") for line in body) or any(
        s in line for line in body for s in DATA_TO_PYTHON
    )
    try:
        check_same_calls(fn, [first, first], fullgraph=False, later_calls_hit_cache=not timed)
        check_same_calls(
            fn, [first, perturbed(*first)], fullgraph=False,
            later_calls_hit_cache=not (data_decides or timed),
        )  # fmt: skip
    except AssertionError as e:
        raise AssertionError(f"{e}\n--- program ---\n{source}") from None


@settings(
    max_examples=80,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(programs)
@example(["a = a + b", 'print("P", a)', "b = np.sin(a) * k"])
@example(["tc.graph_break()", "tc.graph_break()", "a[0] = b[1]", "lst.append(a.mean())"])
@example(["b = m[2]", "tc.graph_break()", "b += 1.0", 'print("P", c, m[0])'])
@example(["if a.sum() > 0.0:", "    a = a + b", "    tc.graph_break()", "else:", "    b += 1.0"])
@example(
    ['with np.errstate(all="ignore"):', "    tc.graph_break()", "    a += c", "k = float(a[0])"]
)
@example(["for _i in range(2):", '    print("P", lst, k)', "    lst.append(len(lst))"])
@example(["for _i2 in m:", '    print("P", a)', "    lst.append(_i2)", "    m[1] = a * k"])
@example(["_i2 = 0", "while _i2 < 2:", "    _i2 += 1", "    tc.graph_break()", "    if b[0] > a[1]:",
          "        break", "    a = a + _i2"])  # fmt: skip
@example(["k = float(a[0])", "tc.graph_break()", "m = m * 0.5 - a", "c = np.cumsum(b)"])
# found by this test: a loop node's carried array written in place, then a view of m
@example(['with np.errstate(all="ignore"):', "    for _i in range(2):", "        b += 1.0",
          "        b = m[2]"])  # fmt: skip
# found by this test: a row view used inside the graph, merged with two returned views of it
@example(["for _i2 in m:", "    for _i1 in m:", "        lst.append(_i1)"])
def test_random_programs_with_breaks_match_eager(body: Lines):
    check_program(body)


@settings(max_examples=30, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
@given(programs)
def test_random_programs_match_eager_with_split_loops_timed(body: Lines):
    check_program(body, timed=True)
