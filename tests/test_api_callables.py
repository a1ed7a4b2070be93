"""What tc.compile and tc.explain accept besides plain functions (bound methods, classmethods,
staticmethods, partials, lru_cache wrappers, callable objects), what they reject, and tc.config
validation. Every accepted kind is checked against eager Python on twin objects."""

from __future__ import annotations

import enum
import functools
import re
import types

import numpy as np
import pytest

import tcompile as tc


class Smoother:
    scale = 2.0

    def __init__(self, weights):
        self.weights = np.asarray(weights, dtype=np.float64)
        self.steps = 0

    def step(self, x):
        """Blend ``x`` into the weights."""
        self.weights = 0.5 * self.weights + x
        self.steps += 1
        return np.sin(self.weights).sum() * self.scale

    def apply(self, x):
        return np.tanh(x) * self.weights

    @classmethod
    def ramp(cls, n):
        return np.linspace(0.0, 1.0, n) * cls.scale

    def __call__(self, x):
        self.weights = self.weights + x
        return np.exp(-self.weights).astype(np.float32)


class WideSmoother(Smoother):  # inherits __call__, step and ramp
    scale = 3.5


class Stats:
    offset = 1.5

    @tc.compile
    @classmethod
    def shifted(cls, x):
        return np.sqrt(x) + cls.offset

    @tc.compile(fullgraph=True)
    @staticmethod
    def normalised(x):
        return x / np.linalg.norm(x)


class MoreStats(Stats):
    offset = -2.0


class Color(enum.Enum):  # its metaclass defines a Python __call__, its members are not callable
    RED = 1


def scaled_sum(k, x, axis):
    return (x * k).sum(axis=axis)


@functools.lru_cache(maxsize=16, typed=True)
def table(n, step):
    return np.arange(n) * step


def assert_same(actual, expected):
    assert type(actual) is type(expected)
    assert np.asarray(actual).dtype == np.asarray(expected).dtype
    assert np.array_equal(actual, expected)


def assert_same_state(compiled_obj, eager_obj):
    assert vars(compiled_obj).keys() == vars(eager_obj).keys()
    for name, value in vars(eager_obj).items():
        assert_same(vars(compiled_obj)[name], value)


def inputs():
    return [np.array([0.5, -1.0, 2.0]), np.array([3.0, 0.25, -0.5]), np.ones(3)]


# -- tc.compile: each accepted kind against eager -------------------------------------------------


def test_bound_method_passes_self_and_mutates_it_as_eager():
    compiled_obj, eager_obj = Smoother([1.0, 2.0, 3.0]), Smoother([1.0, 2.0, 3.0])
    step = tc.compile(compiled_obj.step)
    assert isinstance(step, types.MethodType) and step.__self__ is compiled_obj
    assert step.__name__ == "step" and step.__doc__ == "Blend ``x`` into the weights."
    for x in inputs():
        assert_same(step(x), eager_obj.step(x))
        assert_same_state(compiled_obj, eager_obj)
    assert compiled_obj.steps == 3 and tc.counters()["graphs"] >= 1


def test_one_compiled_method_serves_two_instances_through_its_guards():
    a, b, wide = Smoother([1.0, 2.0, 3.0]), Smoother([-4.0, 5.0, 0.5]), WideSmoother([1.0] * 3)
    apply = tc.compile(a.apply)
    x = np.array([0.1, 0.2, 0.3])
    assert_same(apply(x), a.apply(x))
    assert_same(apply.__func__(b, x), b.apply(x))  # same frame, another self: no stale weights
    assert tc.counters()["recompiles"] == 0 and tc.counters()["cache_hits"] == 1
    assert_same(apply.__func__(wide, x), wide.apply(x))  # another class: a guard fails
    assert tc.counters()["recompiles"] == 1
    tc.compile(b.apply)(x)  # a second tc.compile has a frame of its own
    assert tc.counters()["frames_compiled"] == 3


@pytest.mark.parametrize("cls", [Smoother, WideSmoother])
def test_classmethod_through_its_class(cls):
    ramp = tc.compile(cls.ramp)
    assert isinstance(ramp, types.MethodType) and ramp.__self__ is cls
    for n in (3, 5):
        assert_same(ramp(n), cls.ramp(n))
    assert tc.counters()["graphs"] >= 1


def test_classmethod_and_staticmethod_objects_in_a_class_body():
    assert isinstance(vars(Stats)["shifted"], classmethod)
    assert isinstance(vars(Stats)["normalised"], staticmethod)
    plain_shifted, plain_normalised = Stats.shifted.__wrapped__, Stats.normalised.__wrapped__
    x = np.array([1.0, 4.0, 9.0])
    for owner in (Stats, MoreStats, MoreStats()):
        cls = owner if isinstance(owner, type) else type(owner)
        assert_same(owner.shifted(x), plain_shifted(cls, x))
        assert_same(owner.normalised(x), plain_normalised(x))
    assert Stats.shifted.__name__ == "shifted" and tc.counters()["graphs"] >= 2


def test_partial_keeps_its_arguments():
    compiled = tc.compile(functools.partial(scaled_sum, 3.0, axis=0))
    assert isinstance(compiled, functools.partial)
    assert compiled.args == (3.0,) and compiled.keywords == {"axis": 0}
    assert compiled.func.__tc_compiled__.fn is scaled_sum
    x = np.arange(6.0).reshape(2, 3)
    assert_same(compiled(x), scaled_sum(3.0, x, axis=0))
    assert tc.counters()["graphs"] == 1


def test_partial_of_a_bound_method():
    compiled_obj, eager_obj = Smoother([1.0, 2.0, 3.0]), Smoother([1.0, 2.0, 3.0])
    x = np.array([0.5, 0.5, 0.5])
    step = tc.compile(functools.partial(compiled_obj.step, x))
    assert step.func.__self__ is compiled_obj
    for _ in range(2):
        assert_same(step(), eager_obj.step(x))
        assert_same_state(compiled_obj, eager_obj)


def test_lru_cache_wrapper_keeps_its_own_cache():
    """Compiled, an lru_cache wrapper is still that cache: hits, misses and cache_clear() are
    the original's, and the cached function runs (eagerly) exactly when eager code runs it."""
    table.cache_clear()
    compiled = tc.compile(table)
    first, second = compiled(4, 0.5), table(4, 0.5)
    assert second is first  # one cache: the plain call hits what the compiled call stored
    assert_same(first, table.__wrapped__(4, 0.5))
    assert table.cache_info().hits == 1 and table.cache_info().misses == 1
    table.cache_clear()
    assert compiled(4, 0.5) is not first and table.cache_info().misses == 1
    report = tc.explain(table)(4, 0.5)
    assert "lru_cache wrapper" in report.break_reasons[0].reason


def test_functools_cache_is_kept_too():
    square = functools.cache(lambda n: np.arange(n) ** 2)
    compiled = tc.compile(square)
    assert_same(compiled(5), np.arange(5) ** 2)
    assert compiled(5) is square(5) and square.cache_info().hits == 2


@pytest.mark.parametrize("cls", [Smoother, WideSmoother])
def test_callable_object_compiles_its_class_call(cls):
    compiled_obj, eager_obj = cls([1.0, 2.0, 3.0]), cls([1.0, 2.0, 3.0])
    compiled = tc.compile(compiled_obj)
    assert isinstance(compiled, types.MethodType) and compiled.__self__ is compiled_obj
    for x in inputs():
        assert_same(compiled(x), eager_obj(x))
        assert_same_state(compiled_obj, eager_obj)
    assert tc.counters()["graphs"] >= 1


def test_options_reach_the_compiled_method():
    def breaks(self, x):
        print("side effect")
        return x + self.weights

    obj = Smoother([1.0, 2.0])
    with pytest.raises(tc.Unsupported, match="print"):
        tc.compile(fullgraph=True)(types.MethodType(breaks, obj))(np.ones(2))


def test_compiling_a_compiled_method_again_compiles_the_original():
    obj = Smoother([1.0, 2.0, 3.0])
    twice = tc.compile(tc.compile(obj.apply), backend="eager")
    assert twice.__func__.__tc_compiled__.fn is Smoother.apply and twice.__self__ is obj
    assert_same(twice(np.ones(3)), obj.apply(np.ones(3)))


# -- tc.explain on the same kinds ----------------------------------------------------------------


def explain_cases():
    """(name, make) pairs; ``make()`` -> (callable for tc.explain, its eager twin, args, state
    pairs that must end equal)."""

    def bound():
        c, e = Smoother([1.0, 2.0, 3.0]), Smoother([1.0, 2.0, 3.0])
        return c.step, e.step, (np.ones(3),), [(c, e)]

    def partial_of_bound():
        c, e = Smoother([1.0, 2.0, 3.0]), Smoother([1.0, 2.0, 3.0])
        x = np.array([2.0, 0.0, -1.0])
        return functools.partial(c.step, x), functools.partial(e.step, x), (), [(c, e)]

    def instance():
        c, e = WideSmoother([1.0, 2.0, 3.0]), WideSmoother([1.0, 2.0, 3.0])
        return c, e, (np.ones(3),), [(c, e)]

    x = np.array([1.0, 4.0, 9.0])
    return [
        ("bound method", bound),
        ("classmethod via class", lambda: (WideSmoother.ramp, WideSmoother.ramp, (4,), [])),
        ("class-body classmethod", lambda: (MoreStats.shifted, MoreStats.shifted, (x,), [])),
        ("staticmethod object", lambda: (vars(Stats)["normalised"], Stats.normalised, (x,), [])),
        ("partial", lambda: (functools.partial(scaled_sum, 2.0, axis=0),) * 2 + ((x,), [])),
        ("partial of a bound method", partial_of_bound),
        ("callable object", instance),
    ]


@pytest.mark.parametrize(
    "make", [m for _, m in explain_cases()], ids=[n for n, _ in explain_cases()]
)
def test_explain_accepts_what_compile_accepts_and_keeps_self(make):
    fn, eager, args, states = make()
    report = tc.explain(fn)(*args)
    assert report.graph_count >= 1 and report.graph_break_count == 0
    assert_same(report.result, eager(*args))
    for compiled_obj, eager_obj in states:
        assert_same_state(compiled_obj, eager_obj)


def test_explain_of_a_bound_method_reports_its_guards_on_self():
    obj = Smoother([1.0, 2.0, 3.0])
    report = tc.explain(obj.step)(np.ones(3))
    assert obj.steps == 1
    assert any(g.describe() == "type(self) is Smoother" for g in report.out_guards)


# -- what is rejected ----------------------------------------------------------------------------


def generator_object():
    yield 1


REJECTED = [
    (np.sin, r"<ufunc 'sin'> \(ufunc\).*no Python bytecode"),
    (len, r"<built-in function len>.*no Python bytecode"),
    ([].append, r"built-in method append.*no Python bytecode"),
    (np.ndarray.sum, r"method 'sum' of 'numpy.ndarray'.*no Python bytecode"),
    (functools.partial(np.add, 1), r"<ufunc 'add'>"),
    (Smoother, r"<class '.*Smoother'> \(type\).*compile its methods"),
    (Color, r"<enum 'Color'>.*compile its methods"),
    (Color.RED, r"<Color.RED: 1> \(Color\) is not one"),
    (3, r"3 \(int\) is not one"),
    (generator_object(), r"\(generator\) is not one"),
    (object(), r"\(object\) is not one"),
]
ACCEPTED = "bound method, classmethod, staticmethod, functools.partial, lru_cache wrapper"


@pytest.mark.parametrize("api", [tc.compile, tc.compile(fullgraph=True), tc.explain])
@pytest.mark.parametrize("bad, what", REJECTED, ids=[type(b).__name__ for b, _ in REJECTED])
def test_rejected_callables_get_a_type_error_saying_what_and_why(api, bad, what):
    name = "tc.explain" if api is tc.explain else "tc.compile"
    with pytest.raises(TypeError, match=rf"^{name}\(\) needs a function to compile") as info:
        api(bad)
    message = str(info.value)
    assert ACCEPTED in message and "needs a Python function" in message
    assert re.search(what, message), message


# -- tc.config -----------------------------------------------------------------------------------


@pytest.fixture
def config_restored():
    saved = dict(vars(tc.config))
    yield tc.config
    for name, value in saved.items():
        setattr(tc.config, name, value)


def test_config_accepts_right_values(config_restored):
    config_restored.cache_size_limit = 3
    config_restored.automatic_dynamic_shapes = False
    assert (
        config_restored.cache_size_limit == 3 and config_restored.automatic_dynamic_shapes is False
    )
    assert repr(config_restored) == (
        "tc.config(cache_size_limit=3, automatic_dynamic_shapes=False, suppress_errors=False, "
        "trace_numpy=True, trace_max_ops=10000, trace_max_seconds=10.0, split_loop_pay_check=True, cond_nodes=True, sizes_from_data=True)"
    )


def test_config_limit_is_read_by_the_tracer(config_restored):
    config_restored.cache_size_limit = 1
    f = tc.compile(lambda x: x + 1, dynamic=False)
    with pytest.warns(UserWarning, match="cache_size_limit"):
        for n in (1, 2, 3):
            assert_same(f(np.ones(n)), np.ones(n) + 1)
    assert len(f.__tc_compiled__.entries) == 1


@pytest.mark.parametrize("name", ["cache_size_limt", "trace_numpys", "fullgraph"])
def test_config_rejects_unknown_names(config_restored, name):
    with pytest.raises(
        AttributeError, match=rf"no setting '{name}'.*cache_size_limit.*trace_numpy"
    ):
        setattr(config_restored, name, 3)
    with pytest.raises(AttributeError, match=f"no setting '{name}'"):
        getattr(config_restored, name)
    assert name not in vars(config_restored)


@pytest.mark.parametrize(
    "name, value, error",
    [
        ("cache_size_limit", True, TypeError),
        ("cache_size_limit", 2.0, TypeError),
        ("cache_size_limit", "8", TypeError),
        ("cache_size_limit", np.int64(4), TypeError),
        ("cache_size_limit", 0, ValueError),
        ("cache_size_limit", -3, ValueError),
        ("automatic_dynamic_shapes", 1, TypeError),
        ("suppress_errors", None, TypeError),
        ("trace_numpy", "yes", TypeError),
        ("trace_numpy", np.bool_(True), TypeError),
    ],
)
def test_config_rejects_wrong_values(config_restored, name, value, error):
    before = getattr(config_restored, name)
    wanted = "an int >= 1" if name == "cache_size_limit" else "True or False"
    with pytest.raises(error, match=rf"tc\.config\.{name} must be {wanted}, not"):
        setattr(config_restored, name, value)
    assert getattr(config_restored, name) == before
