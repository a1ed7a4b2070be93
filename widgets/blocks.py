"""The HTML building blocks of tcompile's reports: a page with its style, sections, titles,
tables, code, and the small words they share. All text is escaped here."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from tcompile.tracer.report import CompileReport

from . import drawing, facts
from .model import CellSource
from .style import CSS


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def page(body: str) -> str:
    return f'<div class="tc-report"><style>{CSS}</style>{body}</div>'


def section(title: str, body: str) -> str:
    return f'<div class="tc-section"><div class="tc-h">{escape(title)}</div>{body}</div>'


def empty(text: str) -> str:
    return f'<div class="tc-empty">{escape(text)}</div>'


def pre(text: str) -> str:
    return f'<pre class="tc-code">{escape(text)}</pre>'


def title(text: str, muted: str = "") -> str:
    extra = f' <span class="tc-muted">{escape(muted)}</span>' if muted else ""
    return f'<div class="tc-title">{escape(text)}{extra}</div>'


def table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="tc-table"><tr>{head}</tr>{body}</table>'


def bullets(items: Iterable[str]) -> str:
    return "<ul>" + "".join(f"<li>{escape(item)}</li>" for item in items) + "</ul>"


def report_title(report: CompileReport, source: CellSource, muted: str = "") -> str:
    where = facts.where(report.filename, report.firstlineno, source)
    return title(f"{report.function} {report.compile_id}", f"{where}{muted}")


def pre_head(text: str) -> str:
    """``text`` up to `drawing.CODE_LINES` lines, and how many more there are: a report stays
    small in the saved notebook at any graph size."""
    lines = text.splitlines()
    if len(lines) <= drawing.CODE_LINES:
        return pre(text)
    more = len(lines) - drawing.CODE_LINES
    return pre("\n".join(lines[: drawing.CODE_LINES]) + f"\n# ... {plural(more, 'more line')}")
