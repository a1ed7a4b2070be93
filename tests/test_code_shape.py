"""The code's shape, checked with the tests (CI runs the tests, not `make lint`): ruff's lint
(complexity included: C901 at 15, a function past it says why on its ``def`` line) and format
pass, the tracer's maps (the docstrings of ``tracer/__init__.py`` and of its subpackages) name
every module, and no module of the package grows past 600 lines."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_FOLDERS = ("tcompile", "tracer", "backend", "widgets", "jupyter_ext")
MAX_LINES = 600


def _package_modules() -> dict[str, int]:
    lengths = {}
    for folder in PACKAGE_FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8") as fh:
                        lengths[os.path.relpath(path, ROOT).replace(os.sep, "/")] = len(
                            fh.read().splitlines()
                        )
    return lengths


def test_no_module_grows_past_600_lines():
    over = {m: n for m, n in _package_modules().items() if n > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines (split them by role): {over}"


def _maps() -> list[tuple[str, list[str]]]:
    """(package folder, the modules and subpackages its map must name), for the tracer and each
    of its subpackages."""
    out = []
    for dirpath, dirs, files in os.walk(os.path.join(ROOT, "tracer")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        names = [f[:-3] for f in files if f.endswith(".py") and f != "__init__.py"]
        names += [f"{d}/" for d in dirs if os.path.exists(os.path.join(dirpath, d, "__init__.py"))]
        out.append((dirpath, sorted(names)))
    return out


@pytest.mark.parametrize("folder, names", _maps(), ids=lambda v: os.path.basename(v) if
                         isinstance(v, str) else "")  # fmt: skip
def test_the_tracers_maps_name_every_module(folder, names):
    tree = ast.parse(open(os.path.join(folder, "__init__.py"), encoding="utf-8").read())
    doc = ast.get_docstring(tree) or ""
    missing = [n for n in names if not re.search(rf"(?<![\w/]){re.escape(n)}(?![\w])", doc)]
    assert not missing, f"{folder}/__init__.py's docstring does not name {missing}"


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff is not installed "
                    "(the test extra brings it: pip install -e '.[test]')")  # fmt: skip
@pytest.mark.parametrize("command", [("check", "."), ("format", "--check", ".")],
                         ids=["lint", "format"])  # fmt: skip
def test_ruff_passes(command):
    done = _ruff(*command)
    assert done.returncode == 0, f"ruff {' '.join(command)}:\n{done.stdout}\n{done.stderr}"
