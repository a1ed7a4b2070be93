"""Functions that must graph-break. The first breaking line of each carries the marker `# BREAK`
(in the helper named by `break_in` when the break happens inside an inlined callee).

With fullgraph=True the compiled call must raise `tc.Unsupported` naming this file and that line;
with fullgraph=False it must behave exactly like eager (result, stdout, mutations).
Arguments `TmpPath(name)` are replaced by the test with a path under pytest's `tmp_path`.
"""

# Corpus code is deliberately unidiomatic: each construct is there for the bytecode it emits.
# ruff: noqa: S102

import contextlib
import gc
import json
import os
import pickle
import random
import sys
import time

import numpy as np

import tcompile as tc

from . import TmpPath, breaks
from .inputs import A8, M45, POS8, R8, R45

# --- print and other output --------------------------------------------------------------------


@breaks(A8)
def print_between_array_ops(x):
    y = x * 2
    print("mid", y.shape)  # BREAK
    return y + 1


@breaks(R8)
def print_array_values(x):
    y = np.round(x, 3)
    print(y)  # BREAK
    return y.sum()


@breaks(A8)
def print_with_keyword_and_star_arguments(x):
    items = ("a", x.shape, 3)
    print(*items, sep="|", end=";\n")  # BREAK
    return x - 1


@breaks(A8)
def print_before_any_array_op(x):
    print("start")  # BREAK
    return x * 3


@breaks(A8)
def sys_stdout_write(x):
    y = x.cumsum()
    sys.stdout.write(f"n={y.shape[0]}\n")  # BREAK
    return y


def _log(v):
    print("helper sees", v.shape)  # BREAK
    return v


@breaks(M45, break_in=_log)
def print_inside_inlined_helper(x):
    y = _log(x * 2)
    return y.sum(axis=0)


# --- branches and conversions on array values -------------------------------------------------


@breaks(R8)
def branch_on_array_sum(x):
    y = x * 2
    if y.sum() > 0:  # BREAK
        return y
    return -y


@breaks(A8)
def branch_on_any_of_mask(x):
    if (x > 0.5).any():  # BREAK
        x = x - 1
    return x


@breaks(R45)
def branch_on_max_equals_min(x):
    if x.max() == x.min():  # BREAK
        return x * 0
    return x / (x.max() - x.min())


@breaks(R8)
def conditional_expression_on_array_value(x):
    return x.max() if x.sum() > 0 else x.min()  # BREAK


@breaks(POS8 * 3)
def while_loop_on_array_value(x):
    n = 0
    while x.max() > 1.0:  # BREAK
        x = x / 2
        n += 1
        if n > 100:  # a loop that can be left early is no while_loop node (see test_while_loops)
            break
    return x, n


@breaks(R8)
def item_feeds_branch(x):
    if x.sum().item() > 0:  # BREAK
        return x + 1
    return x - 1


@breaks(A8)
def tolist_feeds_loop(x):
    total = 0.0
    for v in x[:3].tolist():  # BREAK
        total += v * 2
    return total, x


@breaks(A8)
def float_of_array_feeds_branch(x):
    if float(x.sum()) > 1.0:  # BREAK
        return x * 2
    return x


@breaks(R8)
def bool_of_array_element(x):
    if bool(x[0] > 0):  # BREAK
        return x
    return -x


@breaks(A8)
def int_of_argmax_as_range_bound(x):
    total = x * 0
    for i in range(int(np.argmax(x))):  # BREAK
        total = total + i
    return total


@breaks(A8)
def data_dependent_slice_bound(x):
    return x[: int(x.argmax()) + 1]  # BREAK


@breaks(R8)
def builtin_min_of_array_elements(x):
    return min(x[0], x[1]) * 2  # BREAK


@breaks(R8)
def sorted_of_array_elements(x):
    return sorted(x[:4])  # BREAK


@breaks(A8)
def data_dependent_assert(x):
    y = x + 1
    assert (y > 0).all(), "negative values"  # BREAK
    return y


@breaks(R8)
def and_with_array_value(x):
    y = x.sum() > 0 and x  # BREAK
    return y


def _branchy(v):
    if v.mean() > 0:  # BREAK
        return v
    return -v


@breaks(R45, break_in=_branchy)
def data_dependent_branch_inside_helper(x):
    return _branchy(x) * 2


# --- explicit breaks -----------------------------------------------------------------------------


@breaks(A8)
def explicit_graph_break(x):
    y = x + 1
    tc.graph_break()  # BREAK
    return y * 2


@breaks(A8)
def two_explicit_graph_breaks(x):
    y = x + 1
    tc.graph_break()  # BREAK
    y = y * 2
    tc.graph_break()
    return y - 3


def _inner_break(v):
    w = v * 3
    tc.graph_break()  # BREAK
    return w


def _outer_calls_inner(v):
    return _inner_break(v) + 1


@breaks(A8, break_in=_inner_break)
def graph_break_two_calls_deep(x):
    return _outer_calls_inner(x) * 2


# --- data-dependent shapes -----------------------------------------------------------------------


@breaks(R8)
def boolean_mask_indexing(x):
    return x[x > 0]  # BREAK


@breaks(R8)
def nonzero_function(x):
    idx = np.nonzero(x > 0.5)  # BREAK
    return idx


@breaks(R45)
def nonzero_method(x):
    rows, cols = (x > 0).nonzero()  # BREAK
    return rows, cols


@breaks(R8)
def unique_values(x):
    return np.unique(np.round(x, 1))  # BREAK


@breaks(R45)
def argwhere_and_flatnonzero(x):
    a = np.argwhere(x > 0)  # BREAK
    return a, np.flatnonzero(x < 0)


@breaks(R8)
def where_with_one_argument(x):
    return np.where(x > 0)  # BREAK


@breaks(R8)
def where_one_argument_size_used_later(x):
    idx = np.where(x > 0)[0]  # BREAK
    return idx, idx.shape[0], np.zeros(idx.shape[0])


@breaks(R8)
def unique_count_used_later(x):
    u = np.unique(np.round(x, 0))  # BREAK
    return u.shape[0] * 2, x[: u.shape[0]]


@breaks(R45)
def boolean_mask_then_reductions(x):
    pos = x[x > 0]  # BREAK
    return pos.mean(), pos.shape, len(pos)


@breaks(R8)
def nonzero_count_as_python_int(x):
    n = len(np.nonzero(x > 0)[0])  # BREAK
    return n, x * n


# --- unknown C code, I/O, stdlib ---------------------------------------------------------------


@breaks(A8, TmpPath("arr.npy"))
def np_save_to_file(x, path):
    y = x * 2
    np.save(path, y)  # BREAK
    return y + 1


@breaks(M45, TmpPath("arr.txt"))
def savetxt_then_loadtxt(x, path):
    np.savetxt(path, x)  # BREAK
    return np.loadtxt(path) * 2


@breaks(A8, TmpPath("raw.bin"))
def tofile_then_fromfile(x, path):
    x.tofile(path)  # BREAK
    return np.fromfile(path) + 1


@breaks(A8, TmpPath("shape.txt"))
def with_open_write_then_read(x, path):
    with open(path, "w") as f:  # BREAK
        f.write(str(x.shape))
    with open(path) as f:
        text = f.read()
    return text, x * 2


@breaks(A8)
def perf_counter_not_returned(x):
    t0 = time.perf_counter()  # BREAK
    y = x * 2
    elapsed = time.perf_counter() - t0
    return y, elapsed >= 0


@breaks(A8)
def getpid_result_does_not_vary(x):
    pid = os.getpid()  # BREAK
    return x + (pid > 0)


@breaks(A8)
def gc_collect_call(x):
    y = x + 1
    gc.collect()  # BREAK
    return y


@breaks(A8, TmpPath("missing.txt"))
def os_path_exists_check(x, path):
    y = x * 2
    found = os.path.exists(path)  # BREAK
    return y, found


@breaks(A8)
def json_dumps_call(x):
    s = json.dumps({"shape": list(x.shape), "n": 1})  # BREAK
    return s, x


@breaks(A8)
def pickle_dumps_of_shape(x):
    b = pickle.dumps(x.shape)  # BREAK
    return len(b) > 0, x


@breaks(A8)
def exec_string(x):
    ns = {}
    exec("v = 2 * 3", ns)  # BREAK
    return x * ns["v"]


@breaks(A8)
def numpy_random_not_returned(x):
    np.random.rand(3)  # BREAK
    return x + 1


@breaks(A8)
def python_random_not_returned(x):
    random.random()  # BREAK
    return x - 1


@breaks(R8)
def fstring_of_array_values(x):
    s = f"{np.round(x[:3], 2)}"  # BREAK
    return s, x


@breaks(R8)
def str_of_array(x):
    return str(np.round(x, 2))  # BREAK


@breaks(A8)
def tobytes_length(x):
    n = len(x.tobytes())  # BREAK
    return x * n


# --- generators, try, with, loops (the frame may be skipped) ------------------------------------


@breaks(A8)
def generator_defined_inside(x):
    def gen():
        for i in range(3):
            yield x * i

    vals = list(gen())  # BREAK
    return vals


@breaks(A8)
def print_inside_try_except(x):
    try:
        y = x * 2
        print("inside try")  # BREAK
    except ValueError:
        y = x
    return y + 1


@breaks(A8)
def json_loads_error_caught(x):
    try:
        v = json.loads("{bad")  # BREAK
    except ValueError:
        v = None
    return x, v


class _Tracker:
    def __init__(self):
        self.entered = 0

    def __enter__(self):
        self.entered += 1
        return self

    def __exit__(self, *exc):
        return False


@breaks(A8)
def print_inside_user_context_manager(x):
    with _Tracker() as t:
        y = x + t.entered
        print("inside", t.entered)  # BREAK
    return y


@breaks(A8)
def graph_break_inside_nullcontext(x):
    with contextlib.nullcontext():
        y = x + 1
        tc.graph_break()  # BREAK
        y = y * 2
    return y


@breaks(A8)
def print_inside_errstate(x):
    with np.errstate(divide="ignore"):
        y = np.log(x)
        print("logged")  # BREAK
        z = 1.0 / x
    return y, z


@breaks(A8)
def print_inside_for_loop(x):
    for i in range(3):
        print("step", i)  # BREAK
        x = x + i
    return x


# --- side effects around breaks ------------------------------------------------------------------


@breaks(A8)
def mutate_input_around_break(x):
    x += 1
    tc.graph_break()  # BREAK
    x *= 2
    return x


@breaks(A8, [0])
def list_mutations_around_print(x, log):
    log.append(x.shape[0])
    print("len", len(log))  # BREAK
    log.append(x * 2)
    return len(log)


@breaks(A8)
def nonlocal_counter_across_break(x):
    count = 0

    def bump():
        nonlocal count
        count += 1

    bump()
    print("count", count)  # BREAK
    bump()
    return x * count
