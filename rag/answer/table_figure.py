"""Reading one figure from a table row: the cell of the year asked, named by its row label and the heads over it,
for the extractive answer. Also the patterns that say a question asks for a figure, an amount or a percentage."""

from __future__ import annotations

import re

from ..dates import MONTH_PATTERN, MONTH_WORDS, dates_named, month_number
from ..facts.metrics import METRICS, PHRASEBOOK, STATEMENT_BY_METRIC
from ..numbers import parse_numbers
from ..periods import MONTH_COUNTS
from ..phrasing import PhraseList
from ..schema import QuestionPlan
from .counts import labelled_as_count
from .quotable import QuotableUnit, column_heads
from .terms import GENERIC_TERMS, tokens

# A question that asks for a figure (rag/data/lexicon.toml): by its asking words, or by a noun that names an amount.
_NUMERIC_WORDS = PhraseList("numeric_question")


def numeric_question(question: str) -> bool:
    return bool(_NUMERIC_WORDS.search((question or "").lower()))


def untagged(analysis: QuestionPlan | None, claim: str = "It is read from the filing's text, not from its XBRL data",
             subject: str = "it is") -> str:
    """Where a figure read from the text came from: `claim`, which says how it was read and nothing of whether the
    filing also tags it (the facts layer may have found no match for a tagged figure), unless the fact store could
    not be read (rag.engine), when it was not checked against the tags."""
    if analysis is not None and analysis.facts_unreadable:
        return f"The XBRL facts could not be read, so {subject} not checked against them"
    return claim


def negated(label: str, question: str) -> bool:
    """A label the question names only by the word it negates ("Non-GAAP diluted earnings per share" for "GAAP
    diluted EPS", "Noncurrent" for "current"): the other figure, unless the question says "non" too."""
    return bool(re.search(r"\bnon-?[a-z]", label, re.I)) and not re.search(r"\bnon-?[a-z]", question, re.I)


# A share or a rate asked (rag/data/lexicon.toml's percent_asked).
PERCENT_Q = PhraseList("percent_asked")


_PERCENT_LABEL = re.compile(r"\((?:in\s+)?(?:%|percent)\)|\s%\s*$")
_SCALE_NOTES = {"in thousands": ("thousand", 1e3), "in millions": ("million", 1e6), "in billions": ("billion", 1e9)}
# A column head that is a year and nothing else ("2024", "Fiscal 2025", "FY24" is not). A date head ("February 2,
# 2025") is read by the filing's fiscal calendar instead (see _date_column): a retailer's fiscal 2024 ends in 2025.
_YEAR_HEAD = re.compile(r"(?:fiscal\s+(?:year\s+)?|fy\s?)?((?:19|20)\d\d)", re.I)
# A column head that is a period's end date ("Jan 26, 2025", "February 2, 2025"), as a 10-K heads the years of a
# table when its fiscal year does not end with the calendar's.
_DATE_HEAD = re.compile(MONTH_PATTERN + r"\.?\s+\d{1,2},?\s+((?:19|20)\d\d)", re.I)
# Words of a column group that holds the whole company rather than a part of it.
_WHOLE_GROUP = set(tokens("total consolidated worldwide"))


# A column head over a comparison of periods rather than a period: "2024 vs. 2023", "% Change", "Increase".
_COMPARISON_HEAD = PhraseList("comparison_head")


def _heads_over(lines: list[list[str]], column: int, width: int) -> list[str] | None:
    """The head of every header line over a value column, top to bottom: a line with fewer heads than columns
    spans them evenly (a group over its years); a line that cannot is left out."""
    out = []
    for heads in lines:
        if heads and width % len(heads) == 0:
            out.append(heads[column // (width // len(heads))])
    return out


def year_column(row: QuotableUnit, year: str, asked: set[str], company: set[str]) -> tuple[int, list[str]] | None:
    """The one value column of a table row for the year asked, and the heads over it; None when the header gives
    that year no column, or several that neither the question nor the whole company tells apart. Column groups
    ("U.S. | International | <Company>" over three pairs of years) are told apart by the group the question names
    (not by the company's own name), else by the group that is the whole company (its name, "Total")."""
    lines = [column_heads(line) for line in row.header.splitlines() if line.strip()]
    values = row.text.split("|")[1:]
    for i, heads in enumerate(lines):
        hits = [j for j, h in enumerate(heads) if (m := _YEAR_HEAD.fullmatch(h)) and m.group(1) == year]
        if not hits:
            continue
        # A label column's heading or a unit note set in the year line ("| As of December 31, | 2024 | 2023 |
        # (in thousands)") heads no value cell.
        while len(heads) > len(values) and not _YEAR_HEAD.fullmatch(heads[0]):
            heads, hits = heads[1:], [j - 1 for j in hits]
        while len(heads) > len(values) and not _YEAR_HEAD.fullmatch(heads[-1]):
            heads = heads[:-1]
        if len(values) != len(heads):
            # A comparison after the year columns printed in two cells under one head ("2024 vs. 2023" over
            # "8,607 | 12%"): the year columns before it still line up from the first value cell.
            years_first = next((k for k, h in enumerate(heads) if not _YEAR_HEAD.fullmatch(h)), len(heads))
            if len(values) > len(heads) and len(hits) == 1 and hits[0] < years_first and all(
                    _COMPARISON_HEAD.search(h) for h in heads[years_first:]):
                return hits[0], [heads[hits[0]]]
            return None  # the row's cells do not line up with the header's columns
        if len(hits) > 1:
            groups = next((g for g in reversed(lines[:i]) if len(g) == len(hits) and len(heads) % len(g) == 0
                           and len(set(g)) == len(g)), None)
            if groups is None or any(h // (len(heads) // len(groups)) != k for k, h in enumerate(hits)):
                return None
            group_words = [set(tokens(g)) for g in groups]
            named = [k for k, w in enumerate(group_words) if w - company and w - company <= asked]
            if not named:
                named = [k for k, w in enumerate(group_words) if w and (w <= company or w & _WHOLE_GROUP)]
            if len(named) != 1:
                return None
            hits = [hits[named[0]]]
        return hits[0], _heads_over(lines[:i] + [heads], hits[0], len(heads))
    return _date_column(lines, values, row.source.fiscal_year, year)


def _date_column(lines: list[list[str]], values: list[str], fiscal_year: int | None,
                 year: str) -> tuple[int, list[str]] | None:
    """The value column of the fiscal year asked in a table headed by period end dates, one a year, latest first
    ("Jan 26, 2025 | Jan 28, 2024 | Jan 29, 2023" in a fiscal 2025 10-K): the latest is the filing's own fiscal
    year and each one after it a year earlier, whatever calendar year the dates fall in (a retailer's fiscal 2024
    ends in February 2025). None unless every value column has such a head."""
    if not fiscal_year:
        return None
    for i, heads in enumerate(lines):
        dates = [m for h in heads if (m := _DATE_HEAD.fullmatch(h))]
        if len(dates) != len(heads) or len(heads) != len(values) or len(heads) < 2:
            continue
        years = [int(m.group(1)) for m in dates]
        if years[0] not in (fiscal_year, fiscal_year + 1) or any(a - b != 1 for a, b in zip(years, years[1:])):
            return None  # not the filing's own year first, then one column a year before it
        column = fiscal_year - int(year)
        if 0 <= column < len(heads):
            return column, _heads_over(lines[:i] + [heads], column, len(heads))
        return None
    return None


def _names_asked(row: QuotableUnit, label: set[str], analysis: QuestionPlan, content: list[str]) -> bool:
    """Does the row name what is asked: what is counted, for a count, else the question's words? A row labelled in
    generic words only ("Total") is named by its table's title ("Revenue Pallets Thousands"); a count of a part
    ("associates in Canada") by the part in its label and what is counted in a column head."""
    named_by = label | set(tokens(row.title)) if label <= GENERIC_TERMS else label
    wanted = set(tokens(" ".join(analysis.counted) if analysis.counted else " ".join(content)))
    if named_by & wanted:
        return True
    return bool(analysis.counted) and bool(label & set(tokens(" ".join(content)))) and bool(
        wanted & set(tokens(row.header)))


def another_line_of_its_kind(label: str, question: str) -> bool:
    """Do the row's label and the question name one head noun with different words before it ("Net income" for
    "interest income", "Operating expenses" for "interest expenses"), or is the row an amount earned "on" what the
    question names? The row is another line, and its figure would answer a question not asked."""
    asked = tokens(question)
    # "Income earned on cash and investments" for "cash and investments": the line is an income
    # earned on what the question names, and none of the words that name it is asked.
    named, on, _ = label.partition(" on ")
    if on and not set(t for t in tokens(named) if t.isalpha()) & set(asked):
        return True
    printed = [t for t in tokens(label) if t.isalpha()]
    if len(printed) < 2 or printed[-1] not in asked[1:]:
        return False
    before = asked[asked.index(printed[-1]) - 1]
    return before.isalpha() and before not in printed and before not in GENERIC_TERMS and printed[-2] not in asked


def _counted_column(row: QuotableUnit, counted: list[str]) -> tuple[int, list[str]] | None:
    """The one value column of a table with no year column (a count at the filing's year end, "Geographic
    Region | Number of Associates | Share of Workforce") whose head names what the question counts."""
    values = row.text.split("|")[1:]
    stems = set(tokens(" ".join(counted)))
    for line in row.header.splitlines():
        heads = column_heads(line)
        if len(heads) == len(values) + 1:
            heads = heads[1:]  # the label column's own head ("Geographic Location")
        if len(heads) != len(values):
            continue
        hits = [j for j, h in enumerate(heads) if stems & set(tokens(h))]
        if len(hits) == 1:
            return hits[0], [heads[hits[0]]]
    return None


def _heads_the_figure_asked(group: str, analysis: QuestionPlan) -> bool:
    """Is the group heading a statement line's caption ("Net sales:", "Operating expenses:") whose figure the
    question asks, or asks no other? The rows under it are that figure's parts ("Advertising services" under net
    sales), named by their own labels; under a part's heading ("<region>") they are that part's lines."""
    heading = re.sub(r"[:\s]+$", "", group.strip().lower())
    keys = {p.names.key for p in PHRASEBOOK.fullmatch(heading) if p.names.key in STATEMENT_BY_METRIC}
    asked = {m.metric_key for m in analysis.metrics if not m.vetoed}
    return bool(keys) and (not asked or bool(keys & asked))


def _statement_words() -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for m in METRICS:
        if m.statement:
            out.setdefault(m.statement, set()).update(tokens(" ".join((m.label, *m.phrases))))
    return {name: frozenset(words) for name, words in out.items()}


_STATEMENT_WORDS = _statement_words()  # every word the metric vocabulary names a statement's figures with


def _statement_section(group: str, analysis: QuestionPlan) -> bool:
    """Is the group heading a section of the statement that prints the figure asked ("Cash flows from investing
    activities" over a cash-flow statement's investing lines), not a part of the company? Its words are all words
    the metric vocabulary names that statement's own figures with; a region's or a segment's name is not."""
    statements = {STATEMENT_BY_METRIC.get(m.metric_key, "") for m in analysis.metrics if not m.vetoed} - {""}
    heading = set(tokens(group))
    # One word ("Products", "Services") may name a part as well as a kind of line: a section is named by more.
    return len(heading) > 1 and any(heading <= _STATEMENT_WORDS.get(name, frozenset()) for name in statements)


def _names_group(group: str, asked: set[str]) -> bool:
    """Does the question name a table's group heading, by its words or by the abbreviation printed beside them
    ("Europe, Middle East, and Africa (EMEA)")?"""
    names = [re.sub(r"\([^)]*\)", " ", group)] + re.findall(r"\(([^)]+)\)", group)
    return any((words := set(tokens(name))) and words <= asked for name in names)


# "What was the international volume in 2024?": a figure asked in words the numeric pattern does not list.
_WHAT_WAS = re.compile(r"\s*what\s+(?:was|were|is|are)\b", re.I)
# A question's asking words: a query with none of them that names one year is typed as terms ("<region> ebit
# fiscal 2025", "treasury stock at cost, year-end 2024"), and asks that year's figure.
ASKING_WORD = PhraseList("asking_words")
# Narrative words that name what is counted ("how many employees") rather than ask why or how.
_COUNTED_TOPICS = {"employee", "employees", "headcount", "customer", "customers"}


def _asks_figure(question: str, analysis: QuestionPlan) -> bool:
    """The question asks for a figure (how many, how much, what was the amount), not why or how it came about."""
    if analysis.counted:
        return True
    if any(w.lower() not in _COUNTED_TOPICS for w in analysis.narrative_words):
        return False
    if len(analysis.fiscal_years) == 1 and not ASKING_WORD.search((question or "").lower()):
        return True
    return numeric_question(question) or bool(_WHAT_WAS.match(question or ""))


# A row whose label says it prints a change: "Same-store sales (% change)", "Net sales growth", "Increase in ...".
_CHANGE_ROW = PhraseList("change_row")


def one_company(analysis: QuestionPlan, chosen: list[QuotableUnit]) -> bool:
    """A figure read from one passage answers for one company: the one the question names, or, when it names none,
    the one all the quoted passages come from (a company chosen in the filters). With several in play, one
    company's figure would read as the answer for all."""
    if analysis.tickers:
        return len(analysis.tickers) == 1
    return len({u.source.ticker for u in chosen}) == 1


# A balance asked at a period's end ("the year-end balance of", "at the end of 2024"), and the column of a
# roll-forward table that holds it ("Balance at End of Period", "Ending balance").
_END_ASKED = PhraseList("end_asked")
_END_HEAD = re.compile(r"\b(?:end|ending|closing)\b", re.I)


def _roll_forward_balance(chosen: list[QuotableUnit], row: QuotableUnit, analysis: QuestionPlan,
                          question: str) -> str | None:
    """The balance at the end of the year asked, from a roll-forward table whose rows are years and whose columns
    run from the opening balance through additions and deductions to the closing one: Regulation S-X Rule 12-09's
    valuation and qualifying accounts (Schedule II) and the allowance and reserve tables of the notes. The row of
    that year is read in its end-of-period column, under the group heading the question names; quoting the row
    puts the opening balance (the prior year's close) beside the answer."""
    if not _END_ASKED.search(question) or not row.group or not _names_group(row.group, set(tokens(question))):
        return None
    year = [str(y) for y in analysis.fiscal_years] or [str(row.source.fiscal_year or "")]
    if len(year) != 1:
        return None
    same_table = [u for u in chosen[:_SENTENCES_PASSED + 2] if u.kind == "row" and u.source is row.source
                  and u.group == row.group and u.header == row.header]
    row = next((u for u in same_table if (m := _YEAR_HEAD.fullmatch(u.text.split("|")[0].strip()))
                and m.group(1) == year[0]), None)
    if row is None or not row.header:
        return None
    values = [c.strip() for c in row.text.split("|")[1:]]
    heads = column_heads(row.header.splitlines()[-1])
    if len(heads) != len(values):
        return None
    ends = [j for j, h in enumerate(heads) if _END_HEAD.search(h) and not re.search(r"\bbeginning\b", h, re.I)]
    if len(ends) != 1:
        return None
    figure = next(iter(parse_numbers(values[ends[0]])), None)
    if figure is None or figure.pct:
        return None
    word = _SCALE_NOTES.get(row.note, ("", 1.0))[0]
    stated = f"**{figure.raw} {word}**" if word else f"**{figure.raw}**"
    return (f"Figure read from the table: {stated} at the end of {year[0]}: `{row.group}`, column "
            f"{heads[ends[0]]} [{row.source.number}]. {untagged(analysis)}; the whole table is in the cited "
            "passage.")


def _leading_row(chosen: list[QuotableUnit], question: str, analysis: QuestionPlan) -> QuotableUnit:
    """The unit the figure is read from: the best-matching one, or the first row after sentences that state no
    figure of the kind asked. A product's or segment's amount is printed in its table row, while the prose that
    names it best often gives only its share of revenue or its growth ("<product> accounted for 13% of total
    revenues"): a sentence with no amount does not answer "how much", and its row, ranked next, does."""
    if analysis.counted or chosen[0].kind == "row":
        return chosen[0]
    percent_asked = bool(PERCENT_Q.search(question))
    for unit in chosen[:_SENTENCES_PASSED + 1]:
        if unit.kind == "row":
            return unit
        if any(n.pct == percent_asked and (percent_asked or n.money) for n in parse_numbers(unit.text)):
            break  # the sentence states a figure of the kind asked
    return chosen[0]


_NOTE_MARKS = re.compile(r"\s*\(\d\)|\s*[*†‡]")


def _one_part_of_several(row: QuotableUnit, chosen: list[QuotableUnit], asked: set[str]) -> bool:
    """The row's label is printed in several tables, each under its own caption (one region's or segment's table
    after another: "Paid subscribers at end of period" under "<Region A>", "<Region B>", ...), and the question
    names none of the row's: the row is one part's figure, and which part (or the whole) is asked is a guess."""
    label = _NOTE_MARKS.sub("", row.text.split("|")[0]).strip().lower()
    captions = {u.caption for u in chosen if u.kind == "row" and u.caption
                and _NOTE_MARKS.sub("", u.text.split("|")[0]).strip().lower() == label}
    return len(captions) > 1 and not _names_group(row.caption, asked)


# How many sentences stating no figure of the kind asked the figure's row may be ranked below.
_SENTENCES_PASSED = 2


def stated_cell(figure, row: QuotableUnit, counted: bool, *, scaled: bool, percent_row: bool) -> str:
    """A table cell as the answer states it, in bold: with its table's scale written beside it when `scaled`.
    The table's unit note scales a count or an amount, except an amount per item ("per share", "per member") or a
    percentage: a note "in millions, except percentages and per share data" scales neither. The scale is written
    as a word beside the figure ("$13,962 million"): a bare "13,962" under "(in thousands)" is read as millions by
    anyone who skips the note. A count, and an amount in thousands, also get their whole in millions or billions."""
    # The unit note, else a unit the table's title gives ("Revenue Pallets Thousands").
    note = row.note or next((n for n in _SCALE_NOTES if n.split()[1] in row.title.lower().split()), "")
    word, scale = _SCALE_NOTES.get(note, ("", 1.0))
    if word and scaled:
        full = figure.value * scale
        sign = "$" if figure.money else ""
        about = f"{sign}{full / 1e9:,.2f} billion" if full >= 1e9 else f"{sign}{full / 1e6:,.1f} million" \
            if full >= 1e6 else f"{sign}{full:,.0f}"
        whole = counted or word == "thousand"
        return f"**{figure.raw} {word}**" + (f" (about {about})" if whole else "")
    return f"**{figure.raw}%**" if percent_row and not figure.pct else f"**{figure.raw}**"


def table_figure(chosen: list[QuotableUnit], analysis: QuestionPlan | None, question: str,
                  content: list[str]) -> str | None:
    """A figure asked whose best match is a table row of several columns (years, and groups of years): the cell
    of the year asked (else the filing's own year), named by its row label and the heads over it. Quoting the
    whole row instead puts the other years' figures beside the answer, and a reader (or a model) takes the wrong
    column. A count printed under "(in thousands)" or "(in millions)" is stated in full, so "76,218" is not read
    as 76,218 members. Said only when the row's label names what is asked (what is counted, for a count), the
    cell holds the kind of figure asked (a count, an amount, a percentage), and the header gives that year one
    column."""
    if analysis is None or not one_company(analysis, chosen) or not chosen or not _asks_figure(question, analysis):
        return None
    lead = _leading_row(chosen, question, analysis)
    # A period asked of a quarterly report: the best-matching row is often the same line in another period's
    # table (the prior year's, the year to date's, the trailing year's); the next rows are read until one has a
    # column for the period asked, each under every check below.
    others = [u for u in chosen[:_PERIOD_ROWS] if u.kind == "row" and u is not lead] if analysis.periods else []
    return next((said for row in [lead, *others] if (said := _row_figure(row, chosen, analysis, question, content))),
                None)


# How many of the best-matching passages' units are read for a period's row (see table_figure).
_PERIOD_ROWS = 8


def _row_figure(row: QuotableUnit, chosen: list[QuotableUnit], analysis: QuestionPlan, question: str,
                content: list[str]) -> str | None:
    """The figure asked read from one row, or None (see table_figure)."""
    # A change asked is computed from two years' figures, unless the row itself prints the change ("Comparable
    # sales (% change)"): then its cell for the year is the change asked.
    change_row = bool(_CHANGE_ROW.search(row.text.split("|")[0]))
    if row.kind != "row" or not row.header or (analysis.calculation.growth and not (analysis.counted or change_row)):
        return None
    # A quarter or a year to date: a year's column may hold three, six or twelve months, which its head does
    # not always say; the row is quoted with its header instead, unless its heads name the months (see
    # _quarter_column).
    if analysis.latest_quarters or len(analysis.periods) > 1:
        return None
    # "The prior fiscal year" with no year named counts back from the latest filing, which this row may not be from.
    if analysis.years_back:
        return None
    cells = [c.strip() for c in row.text.split("|")]
    quarter_year = _quarter_row(row, analysis)
    if quarter_year is not None:
        return _quarter_row_figure(row, analysis, content, quarter_year)
    if _YEAR_HEAD.fullmatch(cells[0]):
        return _roll_forward_balance(chosen, row, analysis, question)
    label = set(tokens(cells[0]))
    if not _names_asked(row, label, analysis, content) or another_line_of_its_kind(cells[0], question):
        return None
    # "Gross revenues before client incentives are deducted": the adjustment's own row is not the figure asked.
    if any(label <= set(tokens(words)) for words in analysis.deducted):
        return None
    if negated(cells[0], question):
        return None
    # A part the question names ("<product> net revenues", "<offering> subscription revenue") that the row, its
    # group and its table's title do not print: the row is the whole or another part, and reading it would state a
    # figure of something else with confidence. The passage is quoted instead.
    printed = label | set(tokens(row.group)) | set(tokens(row.title)) | set(tokens(row.caption)) | set(tokens(row.lead))
    if _parts_table_period(row):
        printed |= set(tokens(row.header))  # a period's rows under the parts' heads (see _part_column)
    if any(not set(tokens(name)) <= printed for name in analysis.unread_names):
        return None
    asked = set(tokens(question))
    # A row under a group heading (a region's or a segment's block of a key-metrics table, "Europe, Middle East, and
    # Africa (EMEA)") is that part's figure: the question names the group, or the row is the group's own total
    # ("Total net sales" under "Net sales:").
    if row.group and not (_names_group(row.group, asked) or set(tokens(row.group)) <= label
                          or _heads_the_figure_asked(row.group, analysis) or _period_heading(row.group)
                          or _statement_section(row.group, analysis)) \
            or _one_part_of_several(row, chosen, asked):
        return None
    # A figure asked per item ("net sales per retail square foot") is a rate: a row without "per" is the total,
    # and a row per another item ("per share" when a square foot is asked) another rate.
    per_item_row = bool(re.search(r"\bper\b", cells[0], re.I))
    if analysis.per_item and not (per_item_row and set(tokens(analysis.per_item[-1])) <= label):
        return None
    cell = _cell_asked(row, analysis, asked)
    if cell is None:
        return None
    period, (column, heads) = cell
    figure = next(iter(parse_numbers(cells[1 + column])), None)
    if figure is None:
        return None
    percent_asked = bool(PERCENT_Q.search(question)) or (change_row and analysis.calculation.growth)
    # A row whose label gives its unit as a percentage ("Operating ratio (%)", "Gross margin %") prints its cells
    # without the sign.
    percent_row = bool(_PERCENT_LABEL.search(cells[0])) and not figure.money
    is_percent = figure.pct or percent_row
    # A count asked: a line of a table of amounts (its "$" on another row) is one too, unless labelled as a count.
    amount = figure.money or (row.in_dollars and not labelled_as_count(cells[0], analysis.counted))
    if (analysis.counted and (amount or is_percent)) or (not analysis.counted and is_percent != percent_asked):
        return None
    stated = stated_cell(figure, row, bool(analysis.counted), scaled=analysis.counted or not (per_item_row or is_percent),
                          percent_row=percent_row)
    return (f"Figure read from the table: {stated} for {period}: {cell_place(row, cells[0], heads)}. "
            f"{untagged(analysis)}; the whole table is in the cited passage.")


def _quarter_row(row: QuotableUnit, analysis: QuestionPlan) -> str | None:
    """For a row labelled by a quarter ("Three Months Ended December 31") in an annual report's table whose
    columns are years (a key metric by quarter): the year whose column holds the quarter asked, when the row's
    months and end month are that quarter's in the filing's fiscal calendar; None for any other row or question."""
    ask = analysis.periods[0] if len(analysis.periods) == 1 else None
    source = row.source
    if ask is None or ask.quarter is None or ask.months != 3 or ask.trailing or not source.period_end:
        return None
    if (source.fiscal_period or "FY") != "FY":
        return None  # a quarterly report's quarters are its columns
    words = [w.strip(".,:").lower() for w in row.text.split("|")[0].split()]
    months = next((MONTH_COUNTS[w] for w in words if w in MONTH_COUNTS), None)
    month = next((month_number(w) for w in words if w in MONTH_WORDS), None)
    year_end = int(source.period_end[5:7])
    if months != 3 or month is None or (year_end - 3 * (4 - ask.quarter) - 1) % 12 + 1 != month:
        return None
    back = (source.fiscal_year or 0) - (ask.fiscal_year or source.fiscal_year or 0)  # a prior year's column
    return str(int(source.period_end[:4]) - back - (1 if month > year_end else 0))


def _quarter_row_figure(row: QuotableUnit, analysis: QuestionPlan, content: list[str], year: str) -> str | None:
    """The quarter's figure from its row (see _quarter_row): said only when the table's title names what is asked
    and nothing else (an "<item>" table, not a "<measure> per <item>" one), and the cell holds the kind of figure
    asked (a count is no amount)."""
    title = set(tokens(row.caption or row.title or row.header_title))
    if not title or title != set(content):
        return None
    column = year_column(row, year, set(), set())
    if column is None:
        return None
    cells = [c.strip() for c in row.text.split("|")]
    figure = next(iter(parse_numbers(cells[1 + column[0]])), None)
    if figure is None or figure.pct or (analysis.counted and figure.money):
        return None
    per_item = bool(analysis.per_item)
    stated = stated_cell(figure, row, bool(analysis.counted), scaled=not per_item, percent_row=False)
    place = f"`{cells[0]}` of {row.caption or row.title or row.header_title}, column {' / '.join(column[1])}"
    return (f"Figure read from the table: {stated} for the quarter ({cells[0]}, {year}): {place} [{row.source.number}]. "
            f"{untagged(analysis)}; the whole table is in the cited passage.")


def _cell_asked(row: QuotableUnit, analysis: QuestionPlan, asked: set[str]) -> tuple[str, tuple[int, list[str]]] | None:
    """The period asked, as the answer names it, and the row's value column for it with the heads over it: a
    quarter's or a year to date's column group (see _quarter_column), else the year's column (the filing's own year
    when none is named), else, for a count at the filing's year end, the column headed by what is counted. None
    when the row gives the period no one column."""
    if analysis.periods:
        found = _quarter_column(row, analysis.periods[0], asked) or (
            _part_column(row, row.group, analysis.periods[0], asked) if row.group else None)
        return (analysis.periods[0].label(), found) if found else None
    wanted = [str(y) for y in analysis.fiscal_years] or ([str(row.source.fiscal_year)] if row.source.fiscal_year
                                                         else [])
    if len(wanted) != 1 or len(row.text.split("|")) < 3:
        return None
    company = set(tokens(row.source.company or "")) | ({row.source.ticker.lower()} if row.source.ticker else set())
    found = year_column(row, wanted[0], asked, company)
    if found is None and analysis.counted and wanted[0] == str(row.source.fiscal_year):
        found = _counted_column(row, analysis.counted)
    return (wanted[0], found) if found else None


# The months a column group's head says it holds: "Three Months Ended", "Six Months", "Quarter Ended".
_MONTHS_HEAD = {3: re.compile(r"\b(?:three\s+months|quarters?\s+ended|13\s+weeks)\b", re.I),
                6: re.compile(r"\b(?:six\s+months|26\s+weeks)\b", re.I),
                9: re.compile(r"\b(?:nine\s+months|39\s+weeks)\b", re.I)}


def _quarter_column(row: QuotableUnit, period, asked: set[str]) -> tuple[int, list[str]] | None:
    """The value column of a quarterly report's table for the period asked (a PeriodAsk): under the column group
    whose head names the months asked ("Three Months Ended" for a quarter, "Six Months" for a half year), the
    group's first column when the row's own 10-Q reports that period, its second (the prior-year column) when the
    period asked is a year earlier. None unless the heads say both the months and one column per period."""
    source = row.source
    if period.trailing or period.quarter not in (1, 2, 3) or period.months not in _MONTHS_HEAD \
            or source.fiscal_period != period.fiscal_period or not source.fiscal_year:
        return None
    back = (source.fiscal_year - period.fiscal_year) if period.fiscal_year else 0
    if back not in (0, 1):
        return None
    values = row.text.split("|")[1:]
    lines = [column_heads(line) for line in row.header.splitlines() if line.strip()]
    for g, groups in enumerate(lines):
        named = [k for k, head in enumerate(groups) if _MONTHS_HEAD[period.months].search(head)]
        # Each column its own head: those of the months asked must each give an end date (the others may be a
        # change or a rate: "$ change 23 vs. 22").
        each_dated = len(groups) == len(values) and all(_DATE_HEAD.search(groups[k]) for k in named)
        if named and each_dated:
            return _dated_column(groups, named, back)
        if len(groups) == 1 and len(values) > 1 and _period_heading(groups[0]):
            # One period over every column ("As of or for the Three Months Ended June 30, 2025" over the segments)
            return _part_column(row, groups[0], period, asked)
        if len(named) != 1 or not groups or len(values) % len(groups):
            continue
        heads = next((h for h in lines[g + 1:] if len(h) == len(values)), None)
        if heads is None:
            return None
        column = named[0] * (len(values) // len(groups)) + back
        if not _DATE_HEAD.fullmatch(heads[column]) and not _YEAR_HEAD.fullmatch(heads[column]):
            return None  # the column is a change or a rate, not the period's figure
        return column, [groups[named[0]], heads[column]]
    return None


def _dated_column(heads: list[str], named: list[int], back: int) -> tuple[int, list[str]] | None:
    """The column asked where every column's head gives its own length and end date, as a PDF's table prints
    them once its spanning head is set before each ("For the Three Months Ended June 30, 2025 | ... | For the Six
    Months Ended June 30, 2024"): among the columns of the length asked, the latest-dated one for the row's own
    period, the one a year before it for the prior year. None when their years do not tell them apart."""
    dated = sorted(((int(_DATE_HEAD.search(heads[k]).group(1)), k) for k in named), reverse=True)
    if len({year for year, _ in dated}) != len(dated) or back >= len(dated) or dated[0][0] - dated[back][0] != back:
        return None
    column = dated[back][1]
    return column, [heads[column]]


def _period_heading(group: str) -> bool:
    """A group heading that is a period ("Three months ended June 30, 2025"), not a part of the company: it heads
    that period's rows in a table whose columns are the parts (segments, regions)."""
    return any(head.search(group) for head in _MONTHS_HEAD.values()) and bool(_DATE_HEAD.search(group))


def _parts_table_period(row: QuotableUnit) -> str:
    """The period a table of parts' columns says once for the row: its group heading, or a head over every column
    ("As of or for the Three Months Ended June 30, 2025"); "" for any other table."""
    spanning = [heads for line in row.header.splitlines() if len(heads := column_heads(line)) == 1]
    return next((h for h in [row.group] + [heads[0] for heads in spanning] if h and _period_heading(h)), "")


def _part_column(row: QuotableUnit, heading: str, period, asked: set[str]) -> tuple[int, list[str]] | None:
    """The value column of a table whose columns are parts (segments, regions) and whose period is said once, by
    the row's group heading or a head over every column (`heading`): it must name the months asked and end on the
    row's own filing's period end (a year before it for the prior year's period), and one column head must be the
    part the question names."""
    source = row.source
    months_asked = period.months in _MONTHS_HEAD and bool(_MONTHS_HEAD[period.months].search(heading))
    if not months_asked or not _period_heading(heading) or period.trailing or not source.period_end \
            or not source.fiscal_year or source.fiscal_period != period.fiscal_period:
        return None
    back = (source.fiscal_year - period.fiscal_year) if period.fiscal_year else 0
    ends = dates_named(heading)
    if back not in (0, 1) or len(ends) != 1 or ends[0][2][:7] != f"{int(source.period_end[:4]) - back}{source.period_end[4:7]}":
        return None
    values = row.text.split("|")[1:]
    heads = next((h for h in reversed([column_heads(line) for line in row.header.splitlines()]) if len(h) == len(values)),
                 None)
    named = [j for j, head in enumerate(heads or []) if _names_group(head, asked)]
    if len(named) != 1:
        return None
    return named[0], ([heads[named[0]]] if heading == row.group else [heading, heads[named[0]]])


def table_change(chosen: list[QuotableUnit], analysis: QuestionPlan | None, question: str) -> str | None:
    """A change asked over a company's years ("how much did its cash and marketable securities grow from fiscal
    2023 to fiscal 2025") of a figure its filings print in a table row but do not tag: the cell of the first and
    of the last year, each read from that year's own filing where it is quoted (else from a later filing's column
    for it), and the change between them. Said only when both cells sit in rows of one label whose every word the
    question names, are amounts of one kind under one unit note, and each header gives its year one column."""
    if analysis is None or not analysis.calculation.growth or len(analysis.tickers) != 1 or analysis.counted \
            or analysis.periods or analysis.latest_quarters or len(analysis.fiscal_years) < 2:
        return None
    asked = set(tokens(question))
    rows = [u for u in chosen if u.kind == "row" and u.header and u.source.ticker == analysis.tickers[0]]
    picks = []
    for year in (min(analysis.fiscal_years), max(analysis.fiscal_years)):
        for row in sorted(rows, key=lambda r: r.source.fiscal_year != year):  # stable: best match first
            cells = [c.strip() for c in row.text.split("|")]
            label = set(tokens(cells[0])) - GENERIC_TERMS
            if not label or not label <= asked or negated(cells[0], question) or row.group:
                continue
            company = set(tokens(row.source.company or "")) | {(row.source.ticker or "").lower()}
            found = year_column(row, str(year), asked, company)
            figure = next(iter(parse_numbers(cells[1 + found[0]])), None) if found else None
            if figure is not None and not figure.pct:
                picks.append((year, row, cells[0], figure))
                break
    if len(picks) != 2:
        return None
    (first_year, first_row, first_label, first), (last_year, last_row, last_label, last) = picks
    if set(tokens(first_label)) != set(tokens(last_label)) or first.money != last.money \
            or first_row.note != last_row.note:
        return None
    change = last.value - first.value
    places = max(len(n.raw.split(".")[1]) if "." in n.raw else 0 for n in (first, last))
    word = _SCALE_NOTES.get(first_row.note, ("", 1.0))[0]
    amount = f"{'$' if last.money else ''}{abs(change):,.{places}f}{' ' + word if word else ''}"
    rate = f" ({change / first.value * 100:+.1f}%)" if first.value else ""
    return (f"Change read from the tables: `{last_label}` is {stated_cell(last, last_row, False, scaled=True, percent_row=False)}"
            f" for {last_year} [{last_row.source.number}], against "
            f"{stated_cell(first, first_row, False, scaled=True, percent_row=False)} for {first_year} "
            f"[{first_row.source.number}]: a change of {'+' if change >= 0 else '-'}{amount}{rate}. "
            f"{untagged(analysis, 'Both figures are read from the text, not from XBRL data', 'they are')}; each is "
            "in its cited passage's table.")


def cell_place(row: QuotableUnit, label: str, heads: list[str]) -> str:
    """Where a cell sits, for the reader to check it: its row label, its group or table, its column heads, and
    the passage's citation number."""
    columns = " / ".join(h for h in heads if h)
    under = f", under {row.group}" if row.group else (f", table {row.title}" if row.title else "")
    return f"`{label}`{under}" + (f", column {columns}" if columns else "") + f" [{row.source.number}]"
