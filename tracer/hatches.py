"""Escape hatches and settings users put in their code: how each behaves when run eagerly.

The tracer recognises these objects by their ``__tc_*__`` markers (see `calls.py`):

  ``skip_frame()``                 the current frame runs eagerly; its callees still compile
  ``error_on_graph_break(flag)``   context manager / decorator: breaks raise (True) or not
  ``disable(fn, recursive=True)``  fn is never compiled (recursive: nor what it calls)
  ``allow_in_graph(fn)``           calls of fn become one opaque graph node
  ``disallow_in_graph(fn)``        calls of fn always break the graph
  ``nonstrict_trace(fn)``          calls of fn are traced by running fn on proxy arrays
  ``custom_op(name)``              an opaque op, never traced into; ``register_fake`` gives shapes
"""

from __future__ import annotations

import functools
import threading

_state = threading.local()


def skip_frame(msg: str = "") -> None:
    """Inside compiled code: give up on the current frame; it runs eagerly, the functions it
    calls are still compiled. Does nothing when run eagerly."""
    del msg


def current_error_on_graph_break() -> bool:
    stack = getattr(_state, "error_on_graph_break", None)
    return bool(stack and stack[-1])


class error_on_graph_break:  # noqa: N801 - the public name mirrors torch._dynamo's
    """Make graph breaks errors (``True``) or allowed (``False``), innermost setting winning.

    As a context manager inside or around compiled code, and as a decorator::

        @tc.error_on_graph_break(True)
        @tc.compile
        def fn(x): ...              # any break while tracing fn raises tc.Unsupported

    ``fullgraph=True`` is stronger: under it every break raises, whatever this says.
    """

    def __init__(self, flag: bool):
        if not isinstance(flag, bool):
            raise TypeError(f"tc.error_on_graph_break() takes True or False, not {flag!r}")
        self.flag = flag

    def __enter__(self):
        stack = getattr(_state, "error_on_graph_break", None)
        if stack is None:
            stack = _state.error_on_graph_break = []
        stack.append(self.flag)

    def __exit__(self, *exc) -> bool:
        _state.error_on_graph_break.pop()
        return False

    def __call__(self, fn):
        flag = self.flag

        @functools.wraps(fn)
        def with_setting(*args, **kwargs):
            with error_on_graph_break(flag):
                return fn(*args, **kwargs)

        with_setting.__tc_error_on_graph_break__ = (flag, fn)
        return with_setting


def disable(fn=None, *, recursive: bool = True):
    """Never compile ``fn``; with ``recursive=True`` the functions it calls are not compiled
    either (they run as plain Python), with ``recursive=False`` they still are."""
    if fn is None:
        return functools.partial(disable, recursive=recursive)
    if not callable(fn):
        raise TypeError(f"tc.disable() needs a callable, not {type(fn).__name__}")
    if not isinstance(recursive, bool):
        raise TypeError(f"tc.disable(recursive=...) must be True or False, not {recursive!r}")
    target = getattr(getattr(fn, "__tc_compiled__", None), "fn", fn)

    @functools.wraps(target)
    def disabled(*args, **kwargs):
        if recursive:
            return target(*args, **kwargs)
        return _EAGER_ROUTER(target, args, kwargs)

    disabled.__tc_disabled__ = (target, recursive)
    return disabled


def _no_router(fn, args, kwargs):
    return fn(*args, **kwargs)


# How ``disable(fn, recursive=False)`` runs ``fn``: as plain Python while the functions it calls
# are compiled. The compile cache (`entry`), which sits above this module, registers it.
_EAGER_ROUTER = _no_router


def set_eager_router(router) -> None:
    global _EAGER_ROUTER
    _EAGER_ROUTER = router


_ALLOWED: dict[int, object] = {}
_DISALLOWED: dict[int, object] = {}


def allow_in_graph(fn):
    """Put every call of ``fn`` into the graph as one opaque node (its body is not traced;
    it runs when the graph runs). Use it for pure functions only."""
    if not callable(fn):
        raise TypeError(f"tc.allow_in_graph() needs a callable, not {type(fn).__name__}")
    _DISALLOWED.pop(id(fn), None)
    _ALLOWED[id(fn)] = fn
    return fn


def disallow_in_graph(fn):
    """Make every call of ``fn`` a graph break (it runs eagerly)."""
    if not callable(fn):
        raise TypeError(f"tc.disallow_in_graph() needs a callable, not {type(fn).__name__}")
    _ALLOWED.pop(id(fn), None)
    _DISALLOWED[id(fn)] = fn
    return fn


def is_allowed(fn) -> bool:
    return _ALLOWED.get(id(fn)) is fn


def is_disallowed(fn) -> bool:
    return _DISALLOWED.get(id(fn)) is fn


class nonstrict_trace:  # noqa: N801 - the public name mirrors torch._dynamo's
    """Trace calls of ``fn`` by running it on proxy arrays: its NumPy operations land in the
    graph, and what would break bytecode tracing inside it does not matter::

        @tc.nonstrict_trace
        def get_magic_num():
            tc.graph_break()
            return np.array([42])

    ``fn`` must be pure; turning a proxy into a Python value (``bool``, ``float``, ``.item()``)
    inside it is an error that names the line. Also usable inline: ``tc.nonstrict_trace(g)(x)``.
    """

    def __init__(self, fn):
        if not callable(fn):
            raise TypeError(f"tc.nonstrict_trace() needs a callable, not {type(fn).__name__}")
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


class CustomOp:
    """An opaque operator: never traced into, one node in the graph (see `custom_op`)."""

    def __init__(self, name: str, fn, mutates_args: tuple[str, ...]):
        self.name = name
        self.fn = fn
        self.mutates_args = tuple(mutates_args)
        self.fake = None
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def register_fake(self, fake):
        """``fake(*args)`` returns arrays of the op's output shapes and dtypes (values unused)."""
        self.fake = fake
        return fake

    def __repr__(self) -> str:
        return f"<tc.custom_op {self.name}>"


def custom_op(name: str, fn=None, *, mutates_args=()):
    """Decorator making ``fn`` an opaque op named ``name`` ("lib::op")::

    @tc.custom_op("mylib::square", mutates_args=())
    def square(x):
        return np.square(x)

    @square.register_fake
    def _(x):
        return np.empty_like(x)
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"tc.custom_op() needs a name like 'mylib::op', not {name!r}")
    if isinstance(mutates_args, str) or not all(isinstance(a, str) for a in mutates_args):
        raise TypeError("tc.custom_op(mutates_args=...) takes a tuple of argument names")

    def decorate(f):
        if not callable(f):
            raise TypeError(f"tc.custom_op() decorates a function, not {type(f).__name__}")
        return CustomOp(name, f, tuple(mutates_args))

    return decorate if fn is None else decorate(fn)
