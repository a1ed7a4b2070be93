"""The %%tcompile and %tcompile magics in a real IPython InteractiveShell: options and usage
errors, definition-time compilation, re-runs that replace (and forget) compiled functions,
parity with the plain cell (value, Out, printed output, exceptions, namespace), the pinned
error, and the widget's toggles re-running the cell."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import tcompile as tc
from tcompile.tracer.bytecode import code_cache
from tcompile.widgets import render
from tcompile.widgets.model import CellOptions


@pytest.fixture(autouse=True)
def fresh(shell):
    shell.display_pub = CapturingDisplayPublisher()
    shell.user_ns.pop("f", None)
    magics().defaults = CellOptions()
    shell.run_cell("import numpy as np; import tcompile as tc")
    yield


def magics():
    return InteractiveShell.instance().magics_manager.registry["TcompileMagics"]


def run(shell, source: str, magic: str | None = "%%tcompile"):
    text = textwrap.dedent(source).strip("\n") + "\n"
    return shell.run_cell(f"{magic}\n{text}" if magic else text, store_history=True)


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def shown(shell) -> list[dict]:
    """The display bundles the cell output (widgets, pinned errors), in order."""
    return [output["data"] for output in shell.display_pub.outputs]


def shown_text(shell) -> str:
    return "\n".join(
        str(d.get("text/plain", "")) + str(d.get("text/html", "")) for d in shown(shell)
    )


BREAKING = """
def f(x):
    y = np.sin(x)
    print("between")
    return y * 2
f(np.ones(3)).sum()
"""


def test_import_tcompile_never_imports_ipython():
    code = "import tcompile, sys; print('IPython' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_functions_are_compiled_when_defined_and_called_later_in_the_cell(shell):
    result = run(shell, BREAKING)
    assert result.success and result.result == pytest.approx(2 * 3 * 0.8414709848)
    assert hasattr(shell.user_ns["f"], "__tc_compiled__")
    widget = next(d for d in shown(shell) if "text/html" in d)
    assert "graph" in widget["text/plain"].lower()


def test_lambdas_and_methods_of_classes_the_cell_defines_are_compiled(shell):
    result = run(
        shell,
        """
        g = lambda x: np.cos(x) + 1
        class Scale:
            def __init__(self, k):
                self.k = k
            def __call__(self, x):
                return x * self.k
            @staticmethod
            def twice(x):
                return x * 2
        Scale(3)(g(np.zeros(2))).sum() + Scale.twice(np.ones(1)).sum()
    """,
    )
    assert result.success and result.result == 14.0  # (cos 0 + 1) * 3 * 2 + 2
    assert hasattr(shell.user_ns["g"], "__tc_compiled__")
    cls = shell.user_ns["Scale"]
    assert hasattr(vars(cls)["__call__"], "__tc_compiled__")
    assert hasattr(vars(cls)["twice"].__func__, "__tc_compiled__")


@pytest.mark.parametrize(
    "line, expected",
    [
        ("--fullgraph", CellOptions(fullgraph=True)),
        ("--error-on-graph-break", CellOptions(error_on_graph_break=True)),
        ("--backend eager", CellOptions(backend="eager")),
        ("--dynamic", CellOptions(dynamic=True)),
        ("--no-dynamic", CellOptions(dynamic=False)),
        ("--no-widget", CellOptions(widget=False)),
        ("--fullgraph --no-fullgraph", CellOptions(fullgraph=False)),
    ],
)
def test_every_option_reaches_the_cell(shell, line, expected):
    seen = []
    original = magics()._run
    magics()._run = lambda source, options: (seen.append(options), original(source, options))[1]
    try:
        run(shell, "1 + 1", magic=f"%%tcompile {line}")
    finally:
        magics()._run = original
    assert seen == [expected]


@pytest.mark.parametrize(
    "line, message",
    [
        ("--fulgraph", "unrecognized arguments: --fulgraph"),
        ("--backend nope", "unknown backend 'nope'"),
        ("--backend", "expected one argument"),
    ],
)
def test_bad_options_are_usage_errors_saying_what_was_wrong(shell, line, message):
    with pytest.raises(UsageError, match=message):
        magics().tcompile_cell(line, "1")


def test_line_magic_sets_and_shows_session_defaults(shell, capsys):
    shell.run_line_magic("tcompile", "--fullgraph --backend eager")
    assert magics().defaults == CellOptions(fullgraph=True, backend="eager")
    shell.run_line_magic("tcompile", "")
    assert "--fullgraph --backend eager" in capsys.readouterr().out
    result = run(shell, BREAKING)  # the session default applies: a break is an error
    assert isinstance(result.error_in_exec, tc.Unsupported)


def test_value_out_printing_and_namespace_match_the_plain_cell(shell, capsys):
    cell = """
        print("first")
        values = [1, 2]
        def h(x):
            return x + 1
        print("second")
        h(np.array(values)).tolist()
    """
    plain = run(shell, cell, magic=None)
    plain_out, plain_ns = capsys.readouterr().out, dict(shell.user_ns)
    compiled = run(shell, cell)
    compiled_out = capsys.readouterr().out
    assert compiled.result == plain.result == [2, 3]
    assert shell.user_ns["_"] == [2, 3] and shell.user_ns["Out"][compiled.execution_count] == [2, 3]
    assert compiled_out.splitlines()[:2] == plain_out.splitlines()[:2] == ["first", "second"]
    added = set(shell.user_ns) - set(plain_ns)
    assert not {n for n in added if not n.startswith("_")}, added
    assert run(shell, "h(np.ones(1))[0];", magic=None).result is None  # ";" hides the value
    assert run(shell, "h(np.ones(1))[0];").result is None


def test_exceptions_are_the_plain_cells(shell):
    cell = """
        def bad(x):
            return x + np.ones(4)
        bad(np.ones(3))
    """
    plain = run(shell, cell, magic=None).error_in_exec
    compiled = run(shell, cell).error_in_exec
    assert type(compiled) is type(plain) is ValueError and str(compiled) == str(plain)


def test_unsupported_is_pinned_to_the_cell_line_and_the_widget_stays(shell):
    result = run(shell, BREAKING, magic="%%tcompile --fullgraph")
    assert isinstance(result.error_in_exec, tc.Unsupported)
    text = shown_text(shell)
    assert 'print("between")' in text and "call to print()" in text
    assert "Try:" in text or "try" in text.lower()
    assert any("text/html" in d and "tc-" in d["text/html"] for d in shown(shell))


def test_a_failed_compile_shows_one_error_on_top_of_a_widget_that_shows_the_break(shell):
    run(shell, BREAKING, magic="%%tcompile --fullgraph")
    # the saved copy and the widget alone: no pinned error of its own above them
    bundle, live = shown(shell)
    assert "tc-saved-report" in bundle["text/html"] and list(live) == [WIDGET_VIEW]
    widget = magics().last_widget
    assert "tc-pinned-error" in widget.message.value and "tc-pinned-error" in bundle["text/html"]
    assert widget.tabs.titles[widget.tabs.selected_index] == "Breaks"
    graphs = widget.tabs.children[widget.tabs.titles.index("Graphs")].value
    assert "No graph: the compile of f stopped at a graph break" in graphs
    assert (
        "fullgraph=False" not in bundle["text/html"]
        and "fullgraph (or error_on_graph_break) toggle" in bundle["text/html"]
    )


def test_an_unsupported_from_a_plain_cell_is_pinned_on_its_own(shell):
    run(shell, BREAKING, magic="%%tcompile --fullgraph --no-widget")
    (bundle,) = shown(shell)
    assert (
        "tc-pinned-error" in bundle["text/html"]
        and "tc-saved-report" not in bundle["text/html"]
        and WIDGET_VIEW not in bundle
    )


def test_a_toggle_previews_and_never_rebinds_what_a_later_cell_defined(shell, capsys):
    run(shell, "def h(x):\n    return x + 1\nprint('ran early')\nh(np.ones(2))")
    early = magics().last_widget
    run(shell, "def h(x):\n    return x + 2", magic=None)  # a later cell fixes h
    fixed = shell.user_ns["h"]
    capsys.readouterr()
    early.on_options(early.run.options.changed(fullgraph=True))
    assert shell.user_ns["h"] is fixed  # the preview ran in a copy of the namespace
    assert "Preview with %%tcompile --fullgraph" in early.message.value
    assert "put them on the cell&#x27;s %%tcompile line" in early.message.value
    assert early.run is not early.cell_run and early.run.options.fullgraph
    capsys.readouterr()
    early.on_options(early.run.options.changed(fullgraph=False))  # back: the cell's own run
    assert early.run is early.cell_run and early.message.value == ""
    assert capsys.readouterr().out.count("ran early") == 0  # shown again, not run again


def test_rerunning_a_cell_replaces_and_forgets_its_compiled_functions(shell):
    run(shell, BREAKING)
    first = shell.user_ns["f"]
    old_code = first.__wrapped__.__code__
    run(shell, BREAKING)
    assert shell.user_ns["f"] is not first
    assert all(cache.lookup(old_code) is None for cache in code_cache._CACHES)


def test_toggles_rerun_the_cell_and_the_report_follows(shell):
    run(shell, BREAKING)
    widget = magics().last_widget
    assert len([r for r in widget.run.reports if r.graphs and r.graphs[0].op_count()]) == 2
    widget.on_options(widget.run.options.changed(fullgraph=True))
    assert isinstance(widget.run.error, tc.Unsupported)
    # the pinned error shows on top of the widget, and nowhere else
    assert "call to print()" in widget.message.value and "tc-pinned-error" in widget.message.value
    assert "call to print()" not in shown_text(shell) + str(widget.output.outputs)
    widget.on_options(widget.run.options.changed(fullgraph=False))
    assert widget.run.error is None and widget.message.value == ""
    graphs = [r for r in widget.run.reports if r.graphs and r.graphs[0].op_count()]
    breaks = [b for r in widget.run.reports for b in r.breaks]
    assert len(graphs) == 2 and len(breaks) == 1


def test_a_cell_run_hundreds_of_times_grows_no_more_than_the_plain_cell(shell):
    import gc
    import tracemalloc

    cell = BREAKING.replace('print("between")', 'print("between", end="")')

    def growth(magic: str | None) -> int:
        for _ in range(20):  # warm up
            run(shell, cell, magic=magic)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(120):
            run(shell, cell, magic=magic)
            shell.display_pub.outputs.clear()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before

    tracemalloc.start()
    try:
        plain, compiled = growth(None), growth("%%tcompile")
    finally:
        tracemalloc.stop()
    # IPython itself keeps every cell's text and Out value; the magic may add little to that
    assert compiled - plain < 400_000, (plain, compiled)


def test_breaks_and_errors_name_the_cells_own_number(shell):
    result = run(shell, BREAKING, magic="%%tcompile --fullgraph")
    record = result.error_in_exec.record
    assert f"Cell In[{result.execution_count}]" in shown_text(shell)
    filename = record.location.filename
    assert shell.compile._filename_map[filename] == result.execution_count


@pytest.fixture
def kernel_file_names(shell, monkeypatch, tmp_path):
    """Cell file names as ipykernel makes them: from the cell's text alone (the same text run
    again is the same file, whose entry in IPython's map keeps its old place)."""
    import hashlib

    def by_text(raw_code, transformed_code, number):
        return str(tmp_path / f"{hashlib.sha1(raw_code.encode()).hexdigest()[:10]}.py")

    monkeypatch.setattr(shell.compile, "get_code_name", by_text)


LOOPING = """
def f(x):
    s = x * 0
    for i in range(3):
        s = s + x[i]
    print(s)
    return s
f(np.ones(3))
"""


def widget_numbers(shell) -> set[str]:
    """Every "Cell In[n]" the last widget's report shows, and its graphs' comments say."""
    widget = magics().last_widget
    text = render.static_html(widget.run) + "".join(
        str(g) for r in widget.run.reports for g in r.graphs
    )
    return set(re.findall(r"Cell In\[\d+\]", text))


@pytest.mark.parametrize("times", [2, 3])
def test_a_cell_run_again_names_its_own_number(shell, kernel_file_names, times):
    for _ in range(times):
        result = run(shell, LOOPING)
        assert widget_numbers(shell) == {f"Cell In[{result.execution_count}]"}


def test_run_all_twice_names_each_cells_own_number(shell, kernel_file_names):
    cells = [LOOPING, LOOPING.replace("range(3)", "range(2)"), "g = 1\n"]
    for _ in range(2):  # Run All, twice
        for cell in cells:
            result = run(shell, cell)
            if cell is not cells[-1]:
                assert widget_numbers(shell) == {f"Cell In[{result.execution_count}]"}


def test_graph_comments_and_loop_records_name_the_cell_not_its_file(shell, kernel_file_names):
    result = run(shell, LOOPING)
    widget = magics().last_widget
    graphs = "".join(str(g) for r in widget.run.reports for g in r.graphs)
    loops = [loop.describe() for r in widget.run.reports for loop in r.loops]
    label = f"Cell In[{result.execution_count}]"
    assert f"{label}:3 in f" in graphs and loops and all(d.startswith(label) for d in loops)
    assert ".py:" not in graphs + "".join(loops)


def test_the_session_log_records_recompiles_a_plain_cell_caused(shell):
    magics().session_log.clear()
    defined = run(shell, "def sq(x):\n    return x * x\nsq(np.ones(3))")
    later = run(shell, "sq(np.ones((2, 2)))", magic=None)  # a plain cell: no widget
    log = shell.run_line_magic("tcompile", "log")
    rows = log.rows()
    assert [row[2] for row in rows] == [f"In[{defined.execution_count}]",
                                        f"In[{later.execution_count}]"]  # fmt: skip
    assert rows[1][3] == "sq" and re.search(
        r"recompiled because \[\d+/0\]: array x rank", rows[1][6]
    )
    bundle = log._repr_mimebundle_()
    assert (
        "tcompile session log: 2 compiles" in bundle["text/plain"]
        and "<table>" in bundle["text/html"]
    )
    shell.run_line_magic("tcompile", "log clear")
    assert shell.run_line_magic("tcompile", "log").rows() == []
    with pytest.raises(UsageError, match="unknown argument 'everything'"):
        shell.run_line_magic("tcompile", "log everything")


def test_timeit_times_the_cells_calls_compiled_and_plain(shell, capsys):
    run(shell, "def lap(u):\n    return u[1:-1] * 2 - u[:-2] - u[2:]\nprint(lap(np.ones(64)).sum())",
        magic="%%tcompile --timeit")  # fmt: skip
    widget = magics().last_widget
    timing = widget.run.timing
    assert timing is not None and timing.runs >= 1 and timing.compiled_s > 0 and timing.plain_s > 0
    assert capsys.readouterr().out.count("0.0") == 1  # the timing runs print nothing
    assert "compiled is" in render.timings_html(widget.run)
    assert shell.user_ns["lap"].__tc_compiled__  # the cell's own names are untouched
    widget_plain = run(shell, "def lap2(u):\n    return u * 2", magic="%%tcompile --timeit")
    assert magics().last_widget.run.timing is None  # nothing called: nothing to time
    assert "nothing to time" in render.timings_html(magics().last_widget.run)
    assert widget_plain.error_in_exec is None
