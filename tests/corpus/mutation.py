"""In-place updates of input arrays, of views of inputs and of locals; `out=` arguments; mutation of
pre-existing lists, dicts and objects. The caller must see exactly the eager effects."""

import numpy as np

from . import case, raises
from .inputs import A8, I32_45, I64_8, M45, R8, R45, SQ4


class Box:
    def __init__(self, w, count=0):
        self.w = w
        self.count = count


def _bump(a):
    a += 1


@case(A8)
def iadd_input_and_return_it(x):
    x += 1.0
    return x


@case(A8)
def imul_input_returns_none(x):
    x *= 2.0


@case(I64_8)
@case(I32_45)
def integer_inplace_operators(i):
    i += 3
    i //= 2
    i %= 3
    i <<= 1
    i |= 1
    return i.sum()


@case(A8)
def setitem_integer_and_negative(x):
    x[0] = 5.0
    x[-1] = -5
    return x * 1


@case(A8, R8)
def setitem_slice_from_other_array(x, y):
    x[1:3] = y[:2]
    x[::4] = 0.5
    return x


@case(M45)
def column_iadd(m):
    m[:, 0] += 1
    m[1:, -1] *= -1
    return m.sum(axis=0)


@case(A8, R8, np.zeros(8))
def out_keyword_writes_into_argument(a, b, c):
    np.add(a, b, out=c)
    r = np.multiply(a, 2, out=np.empty(8))
    return c, r


@case(A8)
def ellipsis_assignment_zeroes(x):
    x[...] = 0
    return x


@case(M45)
def inplace_on_row_view_of_input(m):
    v = m[0]
    v += 1
    return m.sum()


@case(A8)
def inplace_on_reshaped_view_of_input(x):
    v = x.reshape(2, 4)
    v[1] = -1.0
    v *= 3
    return v, x


@case(M45)
def write_through_transpose_view(m):
    m.T[0] = 9.0
    return m[:, 0]


@case(A8)
def locals_mutated_inputs_untouched(x):
    y = x * 2
    y += 1
    y[0] = 0
    z = x.copy()
    z *= 3
    return x, y, z


@case(A8)
def setitem_with_fancy_index(x):
    x[[1, 3]] = 7.0
    x[np.array([0, 5])] += 1.0
    return x


@case(M45)
def setitem_broadcast_row_into_block(m):
    m[1:3] = np.arange(5)
    m[:, 2:4] = m[0, :2]
    return m


@case(R8)
def sort_and_fill_methods_in_place(x):
    x.sort()
    y = np.empty(3)
    y.fill(1.5)
    return x[0], y


@case(A8, np.zeros(8))
def copyto_into_argument(src, dst):
    np.copyto(dst, src * 2)
    return dst.sum()


@case(A8)
def out_into_view_of_same_input(x):
    np.multiply(x[:4], 2, out=x[4:])
    np.add(x, 1, out=x)
    return x


@case(A8)
def inplace_through_helper_function(x):
    _bump(x)
    _bump(x[:2])
    return x.sum()


@case(A8, A8)
def aliased_arguments_same_array_twice(a, b):
    a += b
    return a is b, b


@case(A8)
def overlapping_reverse_assignment(x):
    x[:] = x[::-1]
    return x


@case(SQ4)
def overlapping_inplace_transpose_add(a):
    a += a.T
    return a


@case(A8)
def mutate_then_read_order(x):
    x[0] = 100.0
    s = x.sum()
    return s


@case(A8)
def read_then_mutate_order(x):
    s = x.sum()
    v = x[1:3]
    x[:] = -1.0
    return s, v


@case(A8, [1, 2])
def append_to_argument_list(x, lst):
    lst.append(x.sum())
    lst.append(x * 2)
    lst[0] = "first"
    return len(lst)


@case(A8, {"keep": 1})
def set_items_on_argument_dict(x, d):
    d["out"] = x * 2
    d["keep"] += 1
    del d["keep"]
    d["n"] = x.shape[0]


@case(Box(np.arange(4.0)), A8)
def set_attributes_on_argument_object(box, x):
    box.w = box.w + x[:4]
    box.count += 1
    box.extra = "new"
    return box.count


@case(Box(np.arange(4.0)))
def inplace_on_array_attribute(box):
    box.w += 1.0
    box.w[0] = -1.0
    return box.w.sum()


@case(R45)
def local_list_of_arrays_mutated(x):
    parts = [x[0], x[1]]
    parts[0] = parts[0] * 2
    parts.append(x[2])
    parts.reverse()
    parts.pop(0)
    return parts


@case(A8)
def augmented_subscript_on_local_dict_and_list(x):
    d = {"a": x, "n": 1}
    d["a"] += 1
    d["n"] *= 5
    lst = [1, x]
    lst[0] -= 3
    return d, lst


@raises(I64_8)
def inplace_add_float_into_int_array(i):
    i += 1.5
    return i


@raises(A8)
def mutation_before_raise_is_visible(x):
    x[0] = 42.0
    return x.reshape(3, 3)


@raises(np.arange(4.0))
def write_into_readonly_broadcast_view(x):
    v = np.broadcast_to(x, (2, 4))
    v[0, 0] = 1.0
    return v
