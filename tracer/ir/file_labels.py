"""How a file is named to the user: a notebook cell's file (a temporary file of ipykernel's, or
``<ipython-input-5-...>``) is "Cell In[5]", as IPython's tracebacks call it; any other file by
its base name. The Jupyter extension adds the namer of its shell's cells; the printed graph's
comments and the loop records name lines through `label`, so every report says the same."""

from __future__ import annotations

from collections.abc import Callable

Namer = Callable[[str], "str | None"]
_namers: list[Namer] = []


def add_namer(namer: Namer) -> None:
    """``namer(filename)`` names the files it knows (None for the others)."""
    _namers.append(namer)


def remove_namer(namer: Namer) -> None:
    if namer in _namers:
        _namers.remove(namer)


def label(filename: str) -> str:
    """``filename`` as the user knows it: "Cell In[5]", else its base name."""
    for namer in _namers:
        name = namer(filename)
        if name:
            return name
    return filename.rsplit("/", 1)[-1]
