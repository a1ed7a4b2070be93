"""Settings read by the tracer (``tc.config``)."""

from __future__ import annotations

# name -> default; a new value must have the default's exact type (so True is no int here).
_DEFAULTS = {
    "cache_size_limit": 8,
    "automatic_dynamic_shapes": True,
    "suppress_errors": False,
    "trace_numpy": True,
    "trace_max_ops": 10_000,
    "trace_max_seconds": 10.0,
    "split_loop_pay_check": True,
    "cond_nodes": True,
    "sizes_from_data": True,
}


class Config:
    """``tc.config``: change attributes directly, e.g. ``tc.config.cache_size_limit = 16``.

    cache_size_limit         compiled entries kept per function before it runs eagerly (8)
    automatic_dynamic_shapes a dim seen with a second size becomes symbolic (True)
    suppress_errors          run frames that hit an internal tcompile error eagerly without a warning
    trace_numpy              trace NumPy calls into graphs; False runs compiled functions eagerly
    trace_max_ops            graph ops one trace may reach before it stops: the frame runs
                             eagerly, and explain says why (10000)
    trace_max_seconds        seconds one trace may take before it stops the same way (10.0)
    split_loop_pay_check     time a split loop's compiled body against the plain loop, and run
                             plainly one for which compiling does not pay (True); False keeps
                             every split loop compiled: what compiles no longer follows timings
    cond_nodes               a branch on an array value whose sides trace becomes one cond node,
                             both sides in the graph and the side taken run (True); False
                             breaks the graph there, as torch.compile does
    sizes_from_data          an operation whose output size follows array values (x[mask],
                             np.nonzero, np.unique) stays in the graph, its sizes known when
                             the graph runs (True); False breaks the graph there

    Unknown names and wrongly typed values fail at assignment; reads are plain attributes.
    """

    def __init__(self):
        for name, value in _DEFAULTS.items():
            setattr(self, name, value)

    def __setattr__(self, name: str, value) -> None:
        if name not in _DEFAULTS:
            raise _unknown(name)
        kind = type(_DEFAULTS[name])
        wanted = {int: "an int >= 1", float: "a number > 0", bool: "True or False"}[kind]
        if kind is float and type(value) is int:
            value = float(value)  # seconds: 5 means 5.0
        if type(value) is not kind:
            raise TypeError(f"tc.config.{name} must be {wanted}, not {value!r}")
        if (kind is int and value < 1) or (kind is float and not value > 0):
            raise ValueError(f"tc.config.{name} must be {wanted}, not {value!r}")
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str):  # only called for names that are not set
        raise _unknown(name)

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"tc.config({items})"


def _unknown(name: str) -> AttributeError:
    return AttributeError(
        f"tc.config has no setting {name!r}; the settings are {', '.join(_DEFAULTS)}"
    )


config = Config()
