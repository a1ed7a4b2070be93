"""Text made of a NumPy scalar or 0-d array of the graph (``f"{y.sum():.3f}"``, ``str(x.max())``)
is a graph node (`operations.array_text`): printing it breaks the graph once, at the print, not
at every field (issue 20.6: one f-string print gave 2 breaks before the print and 4 compiled
frames), and a new value needs no recompile. Used as a str itself (compared, sliced, measured,
a dict key) it breaks the graph there. Every case runs eagerly and compiled on several values:
same results, printed output and exceptions."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check_same_calls

import tcompile as tc


def f_string_print(x):
    y = np.sin(x)
    print(f"y is {y.sum()} and {x.max()}")
    return y * 2


def with_specs(x):
    loss = ((x - 1.0) ** 2).mean()
    print(f"loss {loss:.3e} | max {x.max():>10.4f} | n {x.size}")
    return x - 0.1 * loss


def conversions(x):
    s = x.sum()
    return str(s) + "|" + repr(x.min()) + "|" + format(x.mean(), ".2f") + "|" + ascii(s)


def returned_text(x):
    return f"{x.sum():.6g}", x * 2


def in_containers(x):
    parts = [f"{x.max()}", f"{x.min()}"]
    return {"max": parts[0], "min": parts[1]}, x + 1


def zero_d_array(x):
    a = np.array(x.sum())  # a 0-d array, not a scalar
    print(f"{a} {a:.2f}")
    return a * 2


def int_and_bool_scalars(x):
    n = (x > 0.5).sum()
    flag = (x > 2).any()
    print(f"{n} above, any over 2: {flag}, {x.astype(np.int32).max()}")
    return n


def compared(x):
    s = f"{x.max():.1f}"
    if s == "1.0":  # the text used as a str: a break here, decided by the real text
        return x * 10
    return x


def measured(x):
    s = str(x.sum())
    return len(s), s[:3], s.startswith("1"), x


def as_key(x):
    table = {f"{x.argmax()}": "argmax"}
    return table, x.sum()


def whole_array(x):
    print(f"{x}")  # a whole array's text follows NumPy's print options: still a break there
    return x.sum()


def unfit_spec(x):
    return f"{x.sum():d}"  # ValueError for a float: raised as eagerly, no internal error


def char_spec(x):
    return f"{(x > 0.5).sum() + 60:c}"  # a character: fine for these counts


def carried_text(x):
    s = ""
    for i in range(3):
        s = s + f"{x[i]:.1f},"  # a text carried through an unrolled loop
    return s


def while_text(x):
    s, i = "", 0
    while i < 3:
        s += f"{x[i]}"
        i += 1
    return s


def text_to_int(x):
    return int(f"{int(x.sum())}") + 1  # int() of the text needs its characters: a break


def loop_prints(x):
    total = x * 0
    for i in range(3):
        total = total + x * i
        print(f"step {i}: {total.sum():.3f}")
    return total


FUNCTIONS = [
    f_string_print,
    with_specs,
    conversions,
    returned_text,
    in_containers,
    zero_d_array,
    int_and_bool_scalars,
    compared,
    measured,
    as_key,
    whole_array,
    unfit_spec,
    char_spec,
    carried_text,
    while_text,
    text_to_int,
    loop_prints,
]
VALUES = [np.linspace(0.0, 1.0, 5), np.arange(4.0), np.array([3.25, -1.5, 0.125]), np.ones(5)]


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda fn: fn.__name__)
def test_text_of_array_values_is_made_as_eagerly(fn):
    tc.reset()
    check_same_calls(fn, [((v.copy(),), {}) for v in VALUES], fullgraph=False)


def test_an_f_string_print_breaks_once_at_the_print():
    tc.reset()
    out = tc.explain(f_string_print)(np.ones(3))
    assert out.graph_break_count == 1 and out.graph_count == 2
    (record,) = out.break_reasons
    assert "print()" in record.reason
    assert not [g for g in out.out_guards if 'f"{' in g.describe()]  # no guard on the text


def test_new_values_reuse_the_compiled_entry():
    tc.reset()
    f = tc.compile(with_specs)
    for scale in (1.0, 3.0, -2.5, 1e6):
        f(np.linspace(0.0, 1.0, 5) * scale)  # new values, new texts
    assert tc.counters()["recompiles"] == 0


def test_a_text_used_as_a_str_breaks_where_it_is_used_and_says_so():
    tc.reset()
    out = tc.explain(compared)(np.ones(3))
    reasons = [r.reason for r in out.break_reasons]
    assert any("is text made of array data, used here as a str" in r for r in reasons), reasons
    assert any("{x.max()}" in r for r in reasons), reasons
