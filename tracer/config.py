"""Settings read by the tracer (``tc.config``)."""

from __future__ import annotations

# name -> default; a new value must have the default's exact type (so True is no int here).
_DEFAULTS = {
    "cache_size_limit": 8,
    "automatic_dynamic_shapes": True,
    "suppress_errors": False,
    "trace_numpy": True,
}


class Config:
    """``tc.config``: change attributes directly, e.g. ``tc.config.cache_size_limit = 16``.

    cache_size_limit         compiled entries kept per function before it runs eagerly (8)
    automatic_dynamic_shapes a dim seen with a second size becomes symbolic (True)
    suppress_errors          run frames that hit an internal tcompile error eagerly without a warning
    trace_numpy              trace NumPy calls into graphs; False runs compiled functions eagerly

    Unknown names and wrongly typed values fail at assignment; reads are plain attributes.
    """

    def __init__(self):
        for name, value in _DEFAULTS.items():
            setattr(self, name, value)

    def __setattr__(self, name: str, value) -> None:
        if name not in _DEFAULTS:
            raise _unknown(name)
        kind = type(_DEFAULTS[name])
        wanted = "an int >= 1" if kind is int else "True or False"
        if type(value) is not kind:
            raise TypeError(f"tc.config.{name} must be {wanted}, not {value!r}")
        if kind is int and value < 1:
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
