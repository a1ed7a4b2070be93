"""The inline CSS of tcompile's HTML reports: ``tc-`` classes, JupyterLab theme variables.

Colours are JupyterLab's variables (with fallbacks for other front ends) or translucent tints
that read on light and dark backgrounds alike; graph drawings keep a white card of their own.
Every rule is scoped under ``.tc-report``, which also makes it outrank JupyterLab's own rules
for ``pre`` and ``table`` in rendered HTML, but the widget's own controls' (``.tc-widget``: a
pressed toggle in the brand colour with a check mark, readable on both themes).
"""

CSS = """
.tc-report { font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 13px;
  line-height: 1.45; color: var(--jp-content-font-color1, inherit); }
.tc-report pre, .tc-report code, .tc-report .tc-source {
  font-family: var(--jp-code-font-family, monospace); font-size: 12px; color: inherit; }
.tc-report .tc-h { font-size: 14px; font-weight: 600; margin: 10px 0 4px; padding-bottom: 2px;
  border-bottom: 1px solid var(--jp-border-color2, rgba(128, 128, 128, 0.35)); }
.tc-report .tc-title { font-weight: 600; margin: 10px 0 4px; }
.tc-report .tc-muted { opacity: 0.7; font-weight: normal; }
.tc-report .tc-empty { opacity: 0.7; font-style: italic; margin: 4px 0; }
div.tc-report pre.tc-code { background: var(--jp-layout-color2, rgba(127, 127, 127, 0.1));
  padding: 6px 8px; margin: 2px 0; border-radius: 3px; overflow-x: auto; white-space: pre; }
.tc-report .tc-graph-row { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
.tc-report { overflow-wrap: anywhere; }
.tc-report .tc-graph-svg { background: #ffffff; border-radius: 4px; padding: 4px;
  max-width: 100%; max-height: 340px; overflow: auto; }
.tc-report .tc-graph-svg svg { max-width: 100%; max-height: 330px; width: auto; height: auto; }
.tc-report .tc-graph:has(.tc-zoom input:checked) .tc-graph-svg,
.tc-report .tc-graph:has(.tc-zoom input:checked) .tc-graph-svg svg { max-height: none; }
.tc-report details.tc-graph > summary { list-style-position: outside; margin-left: 1em; }
.tc-report details.tc-graph > summary .tc-title { display: inline-block; margin-right: 12px; }
.tc-report .tc-zoom { font-size: 12px; opacity: 0.85; cursor: pointer; }
.tc-report .tc-graph-row pre.tc-code { max-height: 340px; overflow: auto; }
.tc-report .tc-table { border-collapse: collapse; margin: 4px 0; font-size: inherit; }
.tc-report .tc-table th, .tc-report .tc-table td { padding: 2px 8px; text-align: left;
  border: 1px solid var(--jp-border-color2, rgba(128, 128, 128, 0.35));
  vertical-align: top; color: inherit; background: transparent; }
.tc-report .tc-table th { background: rgba(127, 127, 127, 0.12); }
.tc-report .tc-source { border: 1px solid var(--jp-border-color2, rgba(128, 128, 128, 0.35));
  border-radius: 3px; padding: 4px 0; margin: 4px 0; overflow-x: auto; }
.tc-report .tc-line { white-space: pre; padding-right: 8px; }
.tc-report .tc-mark { display: inline-block; width: 2em; text-align: center; font-weight: bold; }
.tc-report .tc-lineno { display: inline-block; min-width: 2.5em; text-align: right;
  padding-right: 1em; opacity: 0.6; }
.tc-report .tc-break-line { background: rgba(230, 86, 30, 0.22); box-shadow: inset 3px 0 #e0561e; }
.tc-report .tc-skip-line { background: rgba(200, 150, 0, 0.22); box-shadow: inset 3px 0 #c89600; }
.tc-report .tc-call-line { background: rgba(127, 127, 127, 0.14); }
.tc-report .tc-plain-line { background: rgba(0, 120, 200, 0.12); box-shadow: inset 3px 0 #0078c8; }
.tc-report .tc-graph-line { background: rgba(46, 158, 79, 0.16); }
.tc-report .tc-loop-line { background: rgba(46, 158, 79, 0.26); box-shadow: inset 3px 0 #2e7d32; }
.tc-report .tc-glue-line { background: rgba(0, 120, 200, 0.07); box-shadow: none; }
.tc-report .tc-lm-row > summary { display: block; list-style: none; margin: 0; }
.tc-report .tc-lm-row > summary::-webkit-details-marker { display: none; }
.tc-report .tc-lm-row > summary::before { content: "+"; display: inline-block; width: 1em;
  text-align: center; font-weight: bold; opacity: 0.6; }
.tc-report .tc-lm-row[open] > summary::before { content: "\\2212"; }
.tc-report div.tc-lm-row::before { content: ""; display: inline-block; width: 1em; }
.tc-report .tc-lm-ops { margin: 2px 0 6px 5.5em; padding-left: 8px; white-space: normal;
  border-left: 3px solid rgba(127, 127, 127, 0.45);
  font-family: var(--jp-ui-font-family, sans-serif); }
.tc-report .tc-lm-graph-h { margin-top: 4px; opacity: 0.85; }
.tc-report .tc-lm-legend { display: flex; flex-wrap: wrap; gap: 4px 10px; margin: 4px 0; }
.tc-report .tc-lm-chip { padding: 0 6px; border-radius: 3px;
  border: 1px solid var(--jp-border-color2, rgba(128, 128, 128, 0.35)); }
.tc-report .tc-line-note { padding-left: 2em; font-style: italic; opacity: 0.85;
  font-family: var(--jp-ui-font-family, sans-serif); white-space: normal; }
.tc-report .tc-break, .tc-report .tc-entry { margin: 8px 0; padding: 1px 0 1px 10px;
  border-left: 3px solid rgba(127, 127, 127, 0.45); }
.tc-report .tc-break { border-left-color: #e0561e; }
.tc-report .tc-kind-id { opacity: 0.7; font-weight: normal; }
.tc-report ul { margin: 2px 0; padding-left: 22px; }
.tc-report details > summary { cursor: pointer; margin: 2px 0; }
.tc-report .tc-note { margin: 4px 0; }
.tc-report .tc-kernel { margin: 6px 0 6px 4px; padding: 1px 0 1px 10px;
  border-left: 3px solid rgba(127, 127, 127, 0.45); }
.tc-report .tc-kernel.tc-kind-pointwise { border-left-color: #3478c8; }
.tc-report .tc-kernel.tc-kind-reduction { border-left-color: #8e44ad; }
.tc-report .tc-kernel.tc-kind-library { border-left-color: #2a7ab0; }
.tc-report .tc-kernel.tc-kind-scatter { border-left-color: #1f9e89; }
.tc-report .tc-kernel.tc-kind-extern { border-left-color: #c89600; border-left-style: dashed; }
.tc-report .tc-kernel.tc-kind-native-loop { border-left-color: #2e7d32; }
.tc-report .tc-kernel.tc-kind-cond { border-left-color: #2e9e4f; }
.tc-report .tc-kernel.tc-kind-python-loop { border-left-color: #c89600; border-left-style: dashed; }
.tc-report .tc-badge { display: inline-block; padding: 0 7px; margin-left: 4px; border-radius: 9px;
  font-size: 11px; font-weight: 600; background: rgba(127, 127, 127, 0.18); }
.tc-report .tc-badge.tc-kind-pointwise { background: rgba(52, 120, 200, 0.22); }
.tc-report .tc-badge.tc-kind-reduction { background: rgba(142, 68, 173, 0.24); }
.tc-report .tc-badge.tc-kind-library { background: rgba(42, 122, 176, 0.24); }
.tc-report .tc-badge.tc-kind-scatter { background: rgba(31, 158, 137, 0.24); }
.tc-report .tc-badge.tc-kind-extern { background: rgba(200, 150, 0, 0.3); }
.tc-report .tc-badge.tc-kind-native-loop { background: rgba(46, 125, 50, 0.24); }
.tc-report .tc-badge.tc-kind-cond { background: rgba(46, 158, 79, 0.24); }
.tc-report .tc-badge.tc-kind-python-loop { background: rgba(200, 150, 0, 0.3); }
.tc-report .tc-table td.tc-fused { color: #2e9e4f; font-weight: 600; }
.tc-report .tc-table td.tc-refused { color: #e0561e; font-weight: 600; }
.tc-report .tc-error { border: 1px solid rgba(220, 50, 50, 0.6); border-radius: 4px;
  background: rgba(220, 50, 50, 0.08); padding: 6px 10px; margin: 4px 0; }
.tc-widget .tc-toolbar .widget-toggle-button.mod-active {
  background: var(--jp-brand-color1, #1976d2); color: #ffffff; }
.tc-widget .tc-toolbar .widget-toggle-button.mod-active::before { content: "\\2713  "; }
"""

# The report's saved copy (`render.saved_copy`) is the output just above the live widget's (class
# ``tc-widget``). In JupyterLab and Notebook 7 (output areas ``.jp-OutputArea-child``, each output
# tagged with its ``data-mime-type``): while the widget shows, the copy is hidden; where the
# widget's output has no widget (a reopened notebook: "model not found"), that output is hidden
# and the copy shows. Other front ends show the copy (and whatever they make of the widget).
SAVED_COPY_CLASS = "tc-saved-report"
_WIDGET_OUTPUT = (".jp-OutputArea-child:has("
                  '[data-mime-type="application/vnd.jupyter.widget-view+json"])')  # fmt: skip
SAVED_COPY_CSS = f"""
.jp-OutputArea-child:has(.{SAVED_COPY_CLASS}):has(+ .jp-OutputArea-child .tc-widget) {{
  display: none; }}
.jp-OutputArea-child:has(.{SAVED_COPY_CLASS}) + {_WIDGET_OUTPUT}:not(:has(.tc-widget)) {{
  display: none; }}
"""
