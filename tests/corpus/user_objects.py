"""User-defined objects: attributes (arrays and scalars), methods calling methods, class attributes,
static/class methods, properties, inheritance with super(), dataclasses, namedtuples, `__call__`."""

# Corpus code is deliberately unidiomatic: each construct is there for the bytecode it emits.
# ruff: noqa: B009

from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from . import case, raises
from .inputs import A8, M45, R45, SQ4


class Affine:
    kind = "affine"
    default_scale = 1.0

    def __init__(self, w, b, scale=1.0):
        self.w = w
        self.b = b
        self.scale = scale

    def apply(self, x):
        return x @ self.w + self.b

    def forward(self, x):
        return self.act(self.apply(x)) * self.scale

    def forward_twice(self, x):
        return self.forward(self.forward(x))

    @property
    def out_dim(self):
        return self.w.shape[1]

    @staticmethod
    def act(x):
        return np.maximum(x, 0.0)

    @classmethod
    def describe(cls):
        return cls.kind + ":" + str(cls.default_scale)


class Shifted(Affine):
    kind = "shifted"

    def apply(self, x):
        return super().apply(x) - 1.0


class Callable2:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return x * self.k

    def __len__(self):
        return 3

    def __getitem__(self, i):
        return self.k * i


@dataclass
class Params:
    w: np.ndarray
    lr: float = 0.1
    name: str = "p"


Point = namedtuple("Point", ["x", "y"])

MODEL = Affine(SQ4, np.arange(4.0), 0.5)
GLOBAL_PARAMS = Params(np.ones(4), 0.01)


def _model():
    return Affine(SQ4.copy(), np.full(4, 0.5), 2.0)


@case(_model(), SQ4[:2])
def read_array_and_scalar_attributes(m, x):
    return x * m.scale + m.b, m.w.shape, m.w.T


@case(_model(), SQ4)
def method_call(m, x):
    return m.apply(x)


@case(_model(), SQ4)
def method_calling_methods_through_self(m, x):
    return m.forward(x), m.forward_twice(x[:1])


@case(_model())
def class_attributes_via_instance_class_and_type(m):
    return Affine.kind, m.kind, type(m).kind, m.default_scale, Shifted.kind


@case(_model(), SQ4)
def static_and_class_methods(m, x):
    return m.act(x - 3), Affine.act(-x), m.describe(), Affine.describe(), Shifted.describe()


@case(_model(), SQ4)
def property_read(m, x):
    return x[:, : m.out_dim - 1], m.out_dim * 2


@case(SQ4)
def global_object_attributes_and_method(x):
    return MODEL.apply(x), MODEL.scale * x, MODEL.b


@case(Shifted(SQ4, np.zeros(4)), SQ4)
def subclass_method_with_super(s, x):
    return s.apply(x), s.forward(x), s.kind


@case(_model(), SQ4)
def isinstance_on_user_objects(m, x):
    return isinstance(m, Affine), isinstance(m, Shifted), x * isinstance(m, object)


@case(_model())
def getattr_hasattr_on_objects(m):
    return (
        getattr(m, "scale"),
        getattr(m, "missing", None),
        hasattr(m, "w"),
        hasattr(m, "nope"),
        type(m).__name__,
    )


@case(Callable2(2.5), A8)
def dunder_call_len_getitem(c, x):
    return c(x), len(c), c[2], c(c(x))


@case(Params(np.arange(3.0), 0.5), np.ones(3))
def dataclass_fields(p, g):
    return p.w - p.lr * g, p.name, GLOBAL_PARAMS.lr * p.w


@case(Point(np.arange(3.0), 2.0))
def namedtuple_fields_and_indexing(p):
    x, y = p
    return p.x * p.y, p[0] + p[1], x - y, p._fields, len(p)


@case(A8)
def object_constructed_inside(x):
    p = Params(x, 0.5)
    a = Affine(np.eye(8), x)
    return p.w * p.lr, a.apply(x), a.out_dim


@case(_model(), {"k": 2.0}, [1, 2])
def objects_and_containers_as_arguments(m, d, lst):
    return m.b * d["k"] + lst[1], len(lst), list(d)


@raises(_model())
def missing_attribute(m):
    return m.nope


@raises(R45, M45)
def method_raises_inside_inlined_call(a, b):
    return Affine(a, b).apply(a)
