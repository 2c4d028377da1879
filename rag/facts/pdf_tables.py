"""Figures read from a PDF's primary statements, for the fact store: a PDF carries no XBRL, but its statement pages
(rag.parse.statements) print each figure in a row whose label names it and under a column head that dates it.

A row whose whole label is a phrasing of a metric of the vocabulary (rag/data/metrics.toml) printed by that
statement ("Total net sales" on the income statement) gives one fact per column: the metric's first concept, the
column's period (its head's date, or its year with the filing's own period end), the unit note's scale. Every such
fact is marked PDF_TABLE_SOURCE, never XBRL, and keeps the span of its cell, so it is cited to the chunk and page
that print it and answers name where it was read.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re

from ..dates import dates_named
from ..lexicon import word_set
from ..numbers import SCALE_WORDS, YEAR, parse_numbers
from ..parse import Fact, ParsedFiling
from ..parse.statements import statement_pages
from ..periods import MONTH_COUNTS
from .metrics import METRICS, PHRASEBOOK, Metric

PDF_TABLE_SOURCE = "pdf-table"  # Fact.source of a figure read from a PDF's statement table
_KINDS = {"money": "usd", "per_share": "usdPerShare"}


def _statement_metrics() -> dict[str, list[Metric]]:
    out: dict[str, list[Metric]] = {}
    for m in METRICS:
        if m.statement and m.concepts and m.kind in _KINDS and m.period in ("duration", "instant"):
            out.setdefault(m.statement, []).append(m)
    return out


_BY_STATEMENT = _statement_metrics()


def row_metric(label: str, statement: str) -> Metric | None:
    """The metric a statement row's whole label names ("Total net sales" -> revenue), among those the statement
    prints; None when the label names none of them, or more than one."""
    low = " ".join(re.sub(r"[^\w\s,'&-]", " ", label.lower()).split()).strip(" ,:")
    allowed = _BY_STATEMENT.get(statement, [])
    found = {p.names.key: p.names for p in PHRASEBOOK.fullmatch(low) if p.names in allowed}
    return next(iter(found.values())) if len(found) == 1 else None


_NONCONTROLLING = word_set("noncontrolling_share")


def parent_share_metric(label: str, statement: str) -> Metric | None:
    """The metric a row "<metric> attributable to <the parent>" names ("Net income attributable to <Company>",
    "... to common shareholders"): the parent's share, which the metric's first concept holds (XBRL's
    NetIncomeLoss is the parent's, beside a consolidated line including the noncontrolling interests). None for
    the noncontrolling interests' own row and for any other label."""
    head, sep, whom = label.lower().partition(" attributable to ")
    words = {w.strip(",.;:()") for w in whom.replace("-", "").split()}
    return row_metric(head, statement) if sep and not words & _NONCONTROLLING else None


def _scale(text: str) -> int:
    """The power of ten a unit note gives ("(In millions, except per share amounts)" -> 6); 0 when none."""
    for word in re.findall(r"[a-z]+", text.lower()):
        scale = SCALE_WORDS.get(word.rstrip("s"))
        if scale:
            return round(len(str(int(scale))) - 1)
    return 0


def _shift_years(iso: str, years: int) -> str:
    d = dt.date.fromisoformat(iso)
    try:
        return d.replace(year=d.year + years).isoformat()
    except ValueError:  # 29 February
        return d.replace(year=d.year + years, day=28).isoformat()


def _column_period(head: str, filing: dict) -> str | None:
    """The date a column head names: its own "Month day, year", or its year at the filing's period end."""
    dates = dates_named(head)
    if dates:
        return dates[-1][2]
    years = YEAR.findall(head)
    own_end, own_year = filing.get("period_end"), filing.get("fiscal_year")
    if not years or not own_end:
        return None
    lag = int(own_year) - int(own_end[:4]) if own_year else 0  # a fiscal year labelled by the year it starts in
    return _shift_years(own_end, int(years[-1]) - lag - int(own_end[:4]))


def _months(head: str, filing: dict) -> int | None:
    for word in head.lower().split():
        if word in MONTH_COUNTS:
            return MONTH_COUNTS[word]
    return 12 if str(filing.get("fiscal_period") or "FY").upper() == "FY" else None


def _start(end: str, months: int) -> str:
    d = dt.date.fromisoformat(end) + dt.timedelta(days=1)
    month = d.month - months
    year = d.year + (month - 1) // 12
    month = (month - 1) % 12 + 1
    return dt.date(year, month, min(d.day, calendar.monthrange(year, month)[1])).isoformat()


def table_facts(parsed: ParsedFiling, filing: dict) -> list[Fact]:
    """Facts read from the rows of the filing's primary statement tables (see the module's docstring);
    `filing` gives the filing's period_end, fiscal_year and fiscal_period."""
    pages = statement_pages(parsed)
    facts: list[Fact] = []
    seen: set[tuple[str, str | None, str | None]] = set()
    for block in parsed.blocks:
        statement = pages.get(block.page)
        if block.kind != "table" or not statement or not block.table_header:
            continue
        head_lines = block.table_header.splitlines()
        heads = [c.strip() for c in head_lines[-1].split("|")[1:]]
        spanning = " ".join(line.split("|", 1)[-1] for line in head_lines[:-1])
        periods = [_column_period(f"{spanning} {h}" if not dates_named(h) else h, filing) for h in heads]
        if not heads or not all(periods):
            continue
        page_start = parsed.page_starts[block.page - 1]
        scale = _scale(" ".join((block.caption, block.table_header, parsed.text[page_start:block.char_start])))
        offset = block.char_start + len(block.table_header) + 1
        rows = []
        for line in block.text[len(block.table_header) + 1:].split("\n"):
            cells = line.split(" | ")
            if len(cells) == len(heads) + 1:
                parent = parent_share_metric(cells[0], statement)
                rows.append((line, offset, parent or row_metric(cells[0], statement), parent is not None))
            offset += len(line) + 1
        # A table that prints a figure's parent share beside its consolidated line ("Net income" above "Net income
        # attributable to <Company>") gives the figure from the parent's row: it is the one the metric names.
        shared = {m.key for _, _, m, parent in rows if parent}
        for line, at, metric, parent in rows:
            if metric is not None and (parent or metric.key not in shared):
                facts.extend(_row_facts(line, at, metric, heads, periods, spanning, scale, filing, seen))
    return facts


def _row_facts(line: str, offset: int, metric: Metric, heads: list[str], periods: list, spanning: str, scale: int,
               filing: dict, seen: set) -> list[Fact]:
    cells = line.split(" | ")
    out = []
    at = offset + len(cells[0]) + 3
    for cell, head, end in zip(cells[1:], heads, periods, strict=True):
        numbers = parse_numbers(cell)
        start_at, at = at, at + len(cell) + 3
        if len(numbers) != 1:
            continue
        n = numbers[0]
        # Parentheses mean "below zero" where the figure can be (a loss, a net outflow, a deficit, a loss per
        # share); on an expense or outflow line they only say it is subtracted, and its concept counts it above zero.
        signed = bool(metric.negative) or metric.period == "instant" or metric.kind == "per_share"
        value = n.value * (-1 if n.negative and signed else 1)
        per_share = metric.kind == "per_share"
        start = None
        if metric.period == "duration":
            months = _months(f"{spanning} {head}", filing)
            if months is None:
                continue
            start = _start(end, months)
        key = (metric.key, start, end)
        if key in seen:
            continue
        seen.add(key)
        out.append(Fact(
            concept=metric.concepts[0], value=value * (1 if per_share else 10 ** scale), text=n.raw,
            unit=_KINDS[metric.kind], context_id=f"{PDF_TABLE_SOURCE}:{start or ''}:{end}", period_start=start,
            period_end=end, decimals=None if per_share else str(-scale), scale=0 if per_share else scale,
            char_start=start_at + cell.index(n.raw), char_end=start_at + cell.index(n.raw) + len(n.raw),
            source=PDF_TABLE_SOURCE))
    return out
