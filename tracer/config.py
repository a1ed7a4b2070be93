"""Settings read by the tracer (``tc.config``)."""

from __future__ import annotations


class Config:
    """``tc.config``: change attributes directly, e.g. ``tc.config.cache_size_limit = 16``.

    cache_size_limit         compiled entries kept per function before it runs eagerly (8)
    automatic_dynamic_shapes a dim seen with a second size becomes symbolic (True)
    suppress_errors          run frames that hit an internal tcompile error eagerly without a warning
    trace_numpy              trace NumPy calls into graphs; False runs compiled functions eagerly
    """

    def __init__(self):
        self.cache_size_limit = 8
        self.automatic_dynamic_shapes = True
        self.suppress_errors = False
        self.trace_numpy = True

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"tc.config({items})"


config = Config()
