"""A share computed from one table's rows, for the extractive answer: "what % of a segment's revenue came from one
of its offerings" when the filing tags no member for the part, but a table of the passages prints the part's row
and the whole's total row under the same years."""

from __future__ import annotations

import re

from ..facts.metrics import PHRASEBOOK
from ..numbers import parse_numbers
from ..schema import QuestionPlan
from .quotable import QuotableUnit
from .table_figure import one_company, untagged, year_column
from .terms import GENERIC_TERMS, tokens


def _cell(row: QuotableUnit, year: str, asked: set[str]):
    """The amount a row prints in the year's column (a WrittenNumber); None for a percentage, a blank or a year
    with no column."""
    company = set(tokens(row.source.company or "")) | ({row.source.ticker.lower()} if row.source.ticker else set())
    found = year_column(row, year, asked, company)
    if found is None:
        return None
    cells = [c.strip() for c in row.text.split("|")]
    figure = next(iter(parse_numbers(cells[1 + found[0]])), None)
    return None if figure is None or figure.pct or figure.value <= 0 else figure


def _label(row: QuotableUnit) -> str:
    return row.text.split("|")[0].strip()


def _whole_row(rows: list[QuotableUnit], part: QuotableUnit, whole: set[str], qualified: bool) -> QuotableUnit | None:
    """The row of the part's table after the part that totals the whole asked. A whole with its qualifier
    ("<segment> revenue") is the first row whose label holds all its words ("Total <segment> revenue"); a
    whole named by its metric alone is the company's, so the label may add nothing to the metric's words but
    "total" ("Total revenue"): a segment's total row is not the company's."""
    table = [r for r in rows if r.source.number == part.source.number and r.header == part.header
             and r.pos > part.pos]
    if qualified:
        return next((r for r in table if whole <= set(tokens(_label(r)))), None)
    return next((r for r in table if whole <= set(tokens(_label(r))) <= whole | {"total"}), None)


# Words of a table's caption that say it covers the whole company, or which figure it breaks down.
_WHOLE_CAPTION = re.compile(r"\b(?:consolidated|total|company|statements?|breakdown)\b", re.I)


def _a_parts_table(row: QuotableUnit, asked: set[str]) -> bool:
    """Is the row's table captioned by a part of the company the question does not name ("NORTH AMERICA" over a
    region's revenues by channel)? Its "Total revenues" row is then the part's total, not the company's."""
    caption = re.sub(r"\([^)]*\)", " ", f"{row.caption} {row.title}").strip()
    if not caption or _WHOLE_CAPTION.search(caption) or PHRASEBOOK.search(caption.lower()):
        return False
    company = set(tokens(row.source.company or "")) | ({row.source.ticker.lower()} if row.source.ticker else set())
    return bool(set(tokens(caption)) - GENERIC_TERMS - asked - company)


def table_share(units: list[QuotableUnit], analysis: QuestionPlan | None) -> str | None:
    """The part's share of the whole, each read from its row's cell for the year asked, when the question asks
    what share of a figure came from a part (plan.share_part) and one table prints both rows. The inputs are cited
    and stated, so the reader checks the division in one look."""
    if analysis is None or analysis.share_part is None or analysis.calculation.growth:
        return None
    rows = [u for u in units if u.kind == "row" and u.header]
    if not rows or not one_company(analysis, rows[:1]):
        return None
    years = [str(y) for y in analysis.fiscal_years] or (
        [str(rows[0].source.fiscal_year)] if rows[0].source.fiscal_year else [])
    if len(years) != 1:
        return None
    part_words = set(tokens(" ".join(analysis.share_part.after)))
    whole = next((m for m in analysis.metrics if m.metric_key == analysis.share_part.metric_key), None)
    if not part_words or whole is None:
        return None
    whole_words = set(tokens(" ".join(whole.before + whole.words)))
    asked = set(tokens(analysis.question))
    for part in rows:
        label = set(tokens(_label(part)))
        if not part_words <= label or "total" in label:
            continue
        if not whole.before and _a_parts_table(part, asked):
            continue  # the company's whole asked: a region's or a segment's table totals only that part
        total = _whole_row(rows, part, whole_words, bool(whole.before))
        if total is None:
            continue
        part_figure, whole_figure = _cell(part, years[0], asked), _cell(total, years[0], asked)
        if part_figure is None or whole_figure is None or part_figure.value >= whole_figure.value:
            continue
        share = 100 * part_figure.value / whole_figure.value
        return (f"Share computed from the table: **{share:.2f}%** for {years[0]} = `{_label(part)}` "
                f"{part_figure.raw} / `{_label(total)}` {whole_figure.raw} [{part.source.number}]. "
                f"{untagged(analysis, 'The figures are read from the table, not from XBRL data', 'they are')}; the whole table is in "
                "the cited passage.")
    return None
