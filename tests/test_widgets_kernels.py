"""The Kernels tab: per compiled graph, its backend's kernels (kind, user lines, fusion notes,
collapsed source), extern steps run by NumPy, the plan and the fusion decisions; on hand-made
reports (the Triton backend's records) and on real eager-backend compiles (no kernel needed)."""

from __future__ import annotations

import html
import re
from dataclasses import replace
from types import MappingProxyType

import pytest
from widget_cells import run_cell

from tcompile.tracer.ir.compiled_graph import CompiledGraph, FusionDecision, KernelInfo
from tcompile.tracer.report import CompileReport
from tcompile.widgets import CellOptions, CellRun, CellSource, CellWidget, kernels_tab
from tcompile.widgets.kernels_tab import kernel_counts, kernels_html
from tcompile.widgets.render import saved_copy, static_html, text_report

SOURCE = CellSource("def f(x):\n    return x * 2\n", 2, "<cell-7>", "Cell In[7]")

SOFTMAX_SOURCE = """@triton.jit
def softmax_0(in_ptr0, out_ptr0, n0, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    mask = tl.arange(0, BLOCK) < n0
    x = tl.load(in_ptr0 + row * n0 + tl.arange(0, BLOCK), mask=mask, other=-float("inf"))
    tl.store(out_ptr0 + row * n0 + tl.arange(0, BLOCK), x - tl.max(x, 0), mask=mask)
"""
SCALE_SOURCE = """@triton.jit
def scale_1(in_ptr0, out_ptr0, n0, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr0 + i, tl.load(in_ptr0 + i, mask=i < n0) * 2, mask=i < n0)
"""
PLAN = (
    "# inputs: x: float64[4, 8]\n"
    "launch softmax_0[4](BLOCK=8)  reads x  writes buf0\n"
    "extern argsort in NumPy on the host: np.argsort has no Triton lowering\n"
    "launch scale_1[1](BLOCK=32)  reads buf1  writes buf2\n"
    "return (buf2)\n"
)
SOFTMAX = KernelInfo(
    "softmax_0",
    "reduction",
    SOFTMAX_SOURCE,
    lines=("cell.py:3  m = x.max(axis=1, keepdims=True)", "cell.py:4  e = x - m"),
    notes=("row reduction over (8,) and its broadcast use, one row per program",),
)
EXTERN = KernelInfo(
    "extern argsort",
    "extern",
    lines=("cell.py:5  i = np.argsort(e)",),
    notes=("np.argsort has no Triton lowering",),
)
SCALE = KernelInfo("scale_1", "pointwise", SCALE_SOURCE, lines=("cell.py:6  return i * 2",))
DECISIONS = (
    FusionDecision("softmax_0", "softmax_0_part", True, "same rows"),
    FusionDecision("softmax_0", "scale_1", False, "an extern step (argsort) runs between them"),
)


def triton_report(details=(SOFTMAX, EXTERN, SCALE, *DECISIONS), plan=PLAN, **fields):
    sources = {"kernels": SOFTMAX_SOURCE + "\n" + SCALE_SOURCE, "plan": plan}
    compiled = CompiledGraph(lambda x: (x,), "triton", MappingProxyType(sources), tuple(details))
    fields = {"compile_id": "[0/0]", "function": "f", **fields}
    return CompileReport(
        filename="<cell-7>", firstlineno=2, outcome="graph", compiled=compiled, **fields
    )


def run_of(*reports) -> CellRun:
    return CellRun(SOURCE, CellOptions(backend="triton"), reports, seconds=0.01)


def kernel_blocks(page: str) -> dict[str, str]:
    """Kernel name -> the HTML of its block."""
    ends = r'</div>(?=<div class="tc-kernel|<div class="tc-title">Plan)'
    blocks = re.findall(r'<div class="tc-kernel[^"]*">(.*?)' + ends, page, flags=re.S)
    return {html.unescape(re.search(r"<code>(.*?)</code>", b).group(1)): b for b in blocks}


@pytest.fixture(scope="module")
def page() -> str:
    return kernels_html(run_of(triton_report()))


# -- the kernels ---------------------------------------------------------------------------------
def test_each_kernel_shows_its_name_kind_badge_and_user_lines(page):
    blocks = kernel_blocks(page)
    assert list(blocks) == ["softmax_0", "extern argsort", "scale_1"]
    assert '<span class="tc-badge tc-kind-reduction">reduction</span>' in blocks["softmax_0"]
    assert '<span class="tc-badge tc-kind-pointwise">pointwise</span>' in blocks["scale_1"]
    computes = blocks["softmax_0"].split("Computes:")[1]
    assert "cell.py:3  m = x.max(axis=1, keepdims=True)\ncell.py:4  e = x - m" in computes
    assert "cell.py:6  return i * 2" in blocks["scale_1"]


def test_a_kernels_fusion_notes_are_listed(page):
    block = kernel_blocks(page)["softmax_0"]
    assert "<div>Fused into it:</div><ul><li>row reduction over (8,) and its broadcast" in block
    assert "Fused into it" not in kernel_blocks(page)["scale_1"]  # nothing was fused into it


def test_an_extern_step_is_marked_as_numpy_on_the_host_with_its_reason(page):
    block = kernel_blocks(page)["extern argsort"]
    assert '<span class="tc-badge tc-kind-extern">extern: NumPy on the host</span>' in block
    assert "<div>Runs in NumPy because:</div><ul><li>np.argsort has no Triton lowering" in block
    assert "<details>" not in block  # no generated source to show
    assert '<div class="tc-kernel tc-kind-extern">' in page


def test_kernel_sources_are_collapsed_and_escaped(page):
    block = kernel_blocks(page)["softmax_0"]
    assert '<details><summary>source (6 lines)</summary><pre class="tc-code">@triton.jit' in block
    assert "mask = tl.arange(0, BLOCK) &lt; n0" in block
    assert "<details open" not in page
    assert "< n0" not in page and "-float(&quot;inf&quot;)" in block


def test_the_plan_shows_the_steps_a_call_runs(page):
    plan = page.split('<div class="tc-title">Plan')[1]
    assert "the steps one call runs" in plan
    assert html.escape(PLAN) in plan


def test_fusion_decisions_table_gives_each_refusals_reason(page):
    table = page.split('<table class="tc-table tc-decisions">')[1].split("</table>")[0]
    assert table.count("<tr>") == len(DECISIONS) + 1
    assert (
        '<tr><td>softmax_0</td><td>scale_1</td><td class="tc-refused">refused</td>'
        "<td>an extern step (argsort) runs between them</td></tr>"
    ) in table
    assert '<td class="tc-fused">fused</td><td>same rows</td>' in table
    assert 'Fusion decisions <span class="tc-muted">1 made, 1 refused</span>' in page


def test_the_entry_names_the_function_compile_and_backend(page):
    assert '<div class="tc-title">f [0/0] <span class="tc-muted">Cell In[7], line 2 · ' in page
    assert "triton backend</span>" in page
    assert "Kernels: 2 (1 fused reduction, 1 pointwise), 1 extern; fusions: 1 made" in page
    assert page.startswith('<div class="tc-report"><style>')


def test_every_text_of_the_records_is_escaped():
    odd = KernelInfo(
        "k<0>", "pointwise", "a < b && c", ("cell.py:2  y = x if a<b else z",), ("fused <x & y>",)
    )
    weird_kind = KernelInfo("w", "<script>", "")
    refusal = FusionDecision("k<0>", "w&1", False, 'shapes <4> & "8" differ')
    page = kernels_html(run_of(triton_report((odd, weird_kind, refusal), plan="launch k<0>")))
    escaped = (
        "k&lt;0&gt;",
        "a &lt; b &amp;&amp; c",
        "a&lt;b",
        "fused &lt;x &amp; y&gt;",
        "w&amp;1",
        "shapes &lt;4&gt; &amp; &quot;8&quot; differ",
        "launch k&lt;0&gt;",
        '<span class="tc-badge">&lt;script&gt;</span>',
    )
    for text in escaped:
        assert text in page, text
    assert "<script>" not in page and "k<0>" not in page and '<div class="tc-kernel">' in page


# -- counts and text -----------------------------------------------------------------------------
def test_kernel_counts_say_what_the_backend_made_in_one_line():
    assert kernel_counts(triton_report().compiled) == (
        "2 (1 fused reduction, 1 pointwise), 1 extern; fusions: 1 made, 1 refused"
    )
    two = (SOFTMAX, SOFTMAX, SCALE, SCALE)
    assert kernel_counts(triton_report(two).compiled) == "4 (2 fused reductions, 2 pointwise)"
    assert kernel_counts(triton_report((EXTERN,)).compiled) == "0, 1 extern"
    assert kernel_counts(triton_report(()).compiled) == "none reported"
    scatter = KernelInfo("k_at_2", "scatter", "tl.atomic_add(...)", notes=("k_mul (same space)",))
    assert (
        kernel_counts(triton_report((scatter, SCALE)).compiled)
        == "2 (1 fused scatter, 1 pointwise)"
    )
    page = kernels_html(run_of(triton_report((scatter,))))
    assert '<span class="tc-badge tc-kind-scatter">scatter: atomic adds' in page


def test_text_report_has_a_kernels_line_per_compiled_graph():
    resumed = triton_report((SCALE,), compile_id="[1/0]", function="f (resume at line 4)")
    text = text_report(run_of(triton_report(), resumed)).splitlines()
    counts = "2 (1 fused reduction, 1 pointwise), 1 extern; fusions: 1 made, 1 refused"
    assert f"  kernels f [0/0] (triton): {counts}" in text
    assert "  kernels f (resume at line 4) [1/0] (triton): 1 (1 pointwise)" in text


def test_static_page_and_widget_show_the_kernels_tab():
    run = run_of(triton_report())
    page = static_html(run)
    assert '<div class="tc-h">Kernels</div>' in page and "softmax_0" in page
    widget = CellWidget(run)
    try:
        index = widget.tabs.titles.index("Kernels")
        assert widget.tabs.children[index].value == kernels_html(run)
        assert saved_copy(run)["text/plain"] == text_report(run)
    finally:
        widget.close()


# -- other backends --------------------------------------------------------------------------------
EAGER_CELL = """
import numpy as np
import tcompile as tc

@tc.compile(backend="eager")
def f(x):
    y = np.sin(x) + 1
    print("a < b")
    return y * 2

f(np.ones(3))
"""


def test_eager_backend_compiles_say_the_graphs_python_runs_with_no_kernels():
    run = run_cell(EAGER_CELL)
    compiled = [r for r in run.reports if r.compiled is not None]
    assert len(compiled) == 2 and {r.compiled.backend for r in compiled} == {"eager"}
    page = kernels_html(run)
    note = html.escape(kernels_tab.EAGER_NOTE)
    assert page.count(note) == 2
    assert '<div class="tc-kernel' not in page and '<table class="tc-table tc-decisions' not in page
    for report in compiled:
        assert html.escape(f"{report.function} {report.compile_id}") in page
        line = f"  kernels {report.function} {report.compile_id} (eager): none (the graph's "
        assert line + "Python runs as shown)" in text_report(run).splitlines()


def test_a_user_backend_without_details_says_so():
    run = run_cell("""
    import numpy as np
    import tcompile as tc
    from tcompile.backend.eager import eager_backend

    def mine_backend(graph, example_inputs):
        return eager_backend(graph, example_inputs).fn

    @tc.compile(backend=mine_backend)
    def g(x):
        return np.cos(x)

    g(np.ones(2))
    """)
    (report,) = run.reports
    assert report.compiled.backend == "mine"
    page = kernels_html(run)
    assert "mine backend" in page and "The mine backend reported no kernels" in page
    assert f"  kernels g {report.compile_id} (mine): none reported" in text_report(run)


def test_kernels_still_to_come_say_why():
    """The cpu backend's graph compiled while numba starts: no kernels until its second call."""
    from tcompile.backend.cpu.while_starting import WAITING

    compiled = CompiledGraph(lambda x: (x,), "cpu", MappingProxyType({"kernels": WAITING}), [])
    report = CompileReport(compile_id="[0/0]", function="f", filename="<cell-7>",
                           firstlineno=2, outcome="graph", compiled=compiled)  # fmt: skip
    page = html.unescape(kernels_html(run_of(report)))
    assert ("The cpu backend reported no kernels: numba was starting: the first call ran this "
            "code, the second makes the kernels. Its code, if any, is in the Code tab.") in page  # fmt: skip


def test_without_a_compiled_graph_the_tab_says_there_are_no_kernels():
    empty = CellRun(CellSource("x = 1\n", 2, "<empty>"), CellOptions())
    assert "No kernels: no frame of this cell compiled a graph." in kernels_html(empty)
    no_graph = replace(triton_report(compile_id="[0/1]"), compiled=None)
    page = kernels_html(run_of(no_graph, triton_report()))
    assert "[0/1]" not in page and page.count('<div class="tc-entry tc-kernels">') == 1
