"""The project's imports point one way: no module imports one that (directly or not) imports
it back, function-level imports included, and the packages stay in their layers:

    jupyter_ext -> tcompile (facade) -> widgets -> backend -> tracer

One edge goes up on purpose: ``%load_ext tcompile`` calls the facade's
``load_ipython_extension``, which loads `jupyter_ext` when IPython asks (an entry point, not a
dependency: ``import tcompile`` never imports it).
"""

from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = {"tcompile": "tcompile", "jupyter_ext": "tcompile.jupyter_ext",
            "widgets": "tcompile.widgets", "backend": "tcompile.backend",
            "tracer": "tcompile.tracer"}  # fmt: skip
# A package may import the packages after it in this order, never one before it.
LAYERS = ["tcompile.jupyter_ext", "tcompile", "tcompile.widgets", "tcompile.backend",
          "tcompile.tracer"]  # fmt: skip
ENTRY_POINTS = {("tcompile", "tcompile.jupyter_ext")}  # IPython's extension hook


def _modules() -> dict[str, str]:
    found = {}
    for folder, package in PACKAGES.items():
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in files:
                if not name.endswith(".py") or "__pycache__" in dirpath:
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, os.path.join(ROOT, folder))[:-3].replace(os.sep, ".")
                module = f"{package}.{rel}".removesuffix(".__init__")
                found[module] = path
    return found


MODULES = _modules()


def _imports(module: str, path: str) -> set[str]:
    """The project modules ``module`` imports, anywhere in its code."""
    tree = ast.parse(open(path).read())
    package = module if path.endswith("__init__.py") else module.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(max(node.level - 1, 0)):
                base = base.rsplit(".", 1)[0]
            target = (
                (f"{base}.{node.module}" if node.module else base) if node.level else node.module
            )
            for alias in node.names:  # `from . import x`: the module x, else a name of target
                name = f"{target}.{alias.name}"
                name = name if name in MODULES else target
                if name in MODULES and name != module and (module, name) not in ENTRY_POINTS:
                    out.add(name)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name in MODULES)
    return out


EDGES = {module: _imports(module, path) for module, path in MODULES.items()}


def _layer(module: str) -> int:
    return max(
        i for i, prefix in enumerate(LAYERS) if module == prefix or module.startswith(prefix + ".")
    )


def test_no_import_cycle():
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module):
        state[module] = 1
        path.append(module)
        for imported in sorted(EDGES[module]):
            if state.get(imported) == 1:
                cycle = path[path.index(imported) :] + [imported]
                pytest.fail(
                    "import cycle: " + " -> ".join(m.removeprefix("tcompile.") for m in cycle)
                )
            if imported not in state:
                visit(imported)
        path.pop()
        state[module] = 2

    for module in sorted(MODULES):
        if module not in state:
            visit(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down_the_layers(module):
    upward = [m for m in EDGES[module] if _layer(m) < _layer(module)]
    assert not upward, f"{module} imports from a layer above it: {sorted(upward)}"


# Inside the tracer, two packages are foundations the rest stands on: they import nothing of the
# tracer above them (what CPython's bytecode means, and what a symbolic value is), but leaves
# (user_code: which code is the user's, and what a class defines, asked without running it).
FOUNDATIONS = {
    "tcompile.tracer.bytecode": {"tcompile.tracer.code_cache"},
    "tcompile.tracer.values": {
        "tcompile.tracer.graph",
        "tcompile.tracer.source",
        "tcompile.tracer.user_code",
    },
}


@pytest.mark.parametrize("package", sorted(FOUNDATIONS))
def test_tracer_foundations_import_nothing_above_them(package):
    allowed = FOUNDATIONS[package]
    inside = [m for m in MODULES if m == package or m.startswith(package + ".")]
    assert inside, f"{package} has no modules"
    for module in inside:
        above = {m for m in EDGES[module] if not m.startswith(package) and m not in allowed}
        assert not above, f"{module} imports {sorted(above)}"
