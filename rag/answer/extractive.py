"""The extractive answer, used without a language model or when Ollama fails: the sentences and table rows of the
retrieved passages that best match the question, each with its [n], grouped by source.
"""

from __future__ import annotations

import re

from ..companies import reader_name
from ..dates import MONTH_WORDS
from ..facts.mentions import CHANGE_WORDS
from ..item_topics import BUSINESS_VERBS, BUSINESS_WORDS
from ..numbers import (
    WrittenNumber,
    listed_runs,
    respective_years,
)
from ..parse.tables import without_unit_leftovers
from ..phrasing import PhraseList, follows
from ..retrieve import PREAMBLE_WORDS
from ..schema import Citation, QuestionPlan
from ..second_look import MIN_SENTENCE_WORDS
from .clauses import (
    TRAILING_CHANGE,
    change_amount,
    clause_quote,
    compared_figure,
    figures_of_the_year,
    respective_quote,
)
from .counts import (
    counts_all_of_it,
    counts_named,
    listed_parts,
    names_another_year,
)
from .figures import answer_figures
from .quotable import LIST_MARKS, QuotableUnit, column_heads, headlines, quotable_units
from .stated import stated_figure
from .table_figure import PERCENT_Q, one_company, table_change, table_figure, untagged
from .table_share import table_share
from .terms import (
    content_terms,
    content_words,
    coverage_gap,
    is_covered,
    section_tokens,
    tokens,
)
from .unit_scoring import asks_amount, scored_units


def _selection(question: str, sources: list[Citation], analysis: QuestionPlan | None,
               units: list[QuotableUnit]) -> list[QuotableUnit]:
    """The units the extractive answer quotes from the passages (`units`, their scored sentences and rows); [] when
    no passage says it: no unit matches, or no passage is on the question's topic (see _off_topic)."""
    chosen = (_opening_description(question, sources, analysis) or _item_headlines(sources, analysis)
              or _select_per_company(units, analysis))
    return [] if not chosen or _off_topic(question, sources, analysis) else chosen


# Sentences asked about per answer (the best-scored first): each costs a keyword search over the whole index.
RECURRING_CHECKED = 8


def _without_recurring(units: list[QuotableUnit], recurring) -> list[QuotableUnit]:
    """The units without the best-scored sentences that other companies' filings print too (boilerplate: the
    caution on forward-looking statements, the preamble to the risk factors), whatever their wording; all of them
    when `recurring` is None (no index to ask, or a figure read alone)."""
    if recurring is None:
        return units
    best = sorted((u for u in units if u.kind == "sentence"), key=lambda u: -u.score)[:RECURRING_CHECKED]
    flags = recurring([(u.text, u.source.ticker or "") for u in best])
    dropped = {id(u) for u, flag in zip(best, flags, strict=True) if flag}
    return [u for u in units if id(u) not in dropped]


def _with_following(chosen: list[QuotableUnit], sources: list[Citation]) -> None:
    """The best sentence takes the one after it, which often says why or how; one that leads in to a list ("we
    spent $40 million on our plants, as follows:", an invented example) is followed by the list's first items, from
    its own passage or from the one that continues it in the filing (`sources`), each quoted under its own passage."""
    best = chosen[0]
    if best.kind == "sentence" and best.text.rstrip().endswith(":"):
        quoted = {(u.source.number, u.text) for u in chosen}
        items: list[QuotableUnit] = []
        for u in _continuation(best, sources):
            if len(items) == LEAD_IN_ITEMS or (items and _list_item(items[-1]) and not _list_item(u)):
                break  # the list ends where its items do
            if (u.source.number, u.text) not in quoted:
                items.append(u)
        chosen[1:1] = items
    elif best.kind == "sentence" and best.following and len(best.text) < 250 and \
            not any(v.text == best.following for v in chosen):
        best.text = f"{best.text} {best.following}"


LEAD_IN_ITEMS = 3  # the items of a list a quoted lead-in brings with it


def _list_item(unit: QuotableUnit) -> bool:
    """A unit set out as an item of a list (a bullet opens it, or follows the heading a PDF's line runs it into)."""
    return unit.kind == "sentence" and any(len(word) == 1 and word in _BULLETS for word in unit.text[:80].split())


# The list marks that stand alone before an item; not a hyphen or a middle dot, which join words and headings too.
_BULLETS = LIST_MARKS.replace("-", "").replace("·", "")


def _continuation(lead: QuotableUnit, sources: list[Citation]) -> list[QuotableUnit]:
    """The units after a lead-in sentence in reading order: the rest of its passage, then the passage of the same
    filing that starts where its passage ends (the chunker cut between them)."""
    own = lead.source
    units = quotable_units(own)
    at = next((k for k, u in enumerate(units) if u.pos == lead.pos and u.text == lead.text), len(units))
    if units[at + 1:]:
        return units[at + 1:]
    for c in sources:
        if c.doc_id and c.doc_id == own.doc_id and c.char_start is not None and own.char_end is not None \
                and 0 <= c.char_start - own.char_end <= CHUNK_GAP:
            return quotable_units(c)
    return []


CHUNK_GAP = 3  # characters between one chunk's end and the next one's start (the white space the chunker drops)


# A unit scoring under this share of the best one is not quoted (rag.unit_fit scales fitted weights so that as
# many units pass it as before).
QUOTED_SHARE = 0.3


def _select_units(units: list[QuotableUnit], limit: int = 7, per_source: int = 3) -> list[QuotableUnit]:
    if not units:
        return []
    best = max(u.score for u in units)
    pool = sorted(units, key=lambda u: -u.score)
    chosen: list[QuotableUnit] = []
    count: dict[int, int] = {}
    while pool and len(chosen) < limit:
        # A source's second and third pick count less, so other sources get their turn when they match.
        pool.sort(key=lambda u: -(u.score * (0.75 ** count.get(u.source.number, 0))))
        u = pool.pop(0)
        adjusted = u.score * (0.75 ** count.get(u.source.number, 0))
        if adjusted < QUOTED_SHARE * best:
            break
        if count.get(u.source.number, 0) >= per_source:
            continue
        if any(_near_duplicate(u, v) for v in chosen):
            continue  # the same text again (overlapping chunks, or a filing repeating itself)
        chosen.append(u)
        count[u.source.number] = count.get(u.source.number, 0) + 1
    return chosen


def _select_per_company(units: list[QuotableUnit], analysis: QuestionPlan | None) -> list[QuotableUnit]:
    """The units to quote. A question about several companies is answered by each one's best passages: each
    company gets its own share of the quotes, so one filing's many close matches cannot crowd out the other's."""
    tickers = analysis.tickers if analysis else []
    if len(tickers) < 2:
        return _select_units(units)
    share = max(2, 7 // len(tickers))
    chosen: list[QuotableUnit] = []
    for ticker in tickers:
        chosen += _select_units([u for u in units if u.source.ticker == ticker], limit=share)
    return sorted(chosen, key=lambda u: -u.score)


def _near_duplicate(a: QuotableUnit, b: QuotableUnit) -> bool:
    if a.text == b.text:
        return True
    ta, tb = set(tokens(a.text)), set(tokens(b.text))
    if not ta or not tb:
        return False
    return len(ta & tb) / min(len(ta), len(tb)) >= 0.9 and len(ta & tb) / max(len(ta), len(tb)) >= 0.6


def _render_unit(u: QuotableUnit) -> str:
    text = " ".join(u.text.split())
    if len(text) > 600:
        text = text[:600].rsplit(" ", 1)[0] + " …"
    if u.kind == "row":
        context = []
        if u.group and not text.lower().startswith(u.group.lower()):
            context.append(f"under: {u.group}")
        if u.header:
            if u.title:
                context.append(f"table: {u.title}")
            elif u.caption and len(u.caption) <= 60:
                context.append(f"table: {u.caption}")  # one region's or segment's table of several alike
            lines = [" | ".join(filter(None, map(without_unit_leftovers, column_heads(h))))
                     for h in u.header.splitlines()]
            context.append("columns: " + " / ".join(ln for ln in lines if ln))
        values = [c for c in u.text.split("|")[1:] if re.search(r"\d", c)]
        if u.note and not (values and all("%" in c for c in values)):
            context.append(u.note)
        suffix = f" ({'; '.join(context)})" if context else ""
        return f"- `{text}`{suffix} [{u.source.number}]"
    return f"- {text} [{u.source.number}]"


def _figure_text(value: float, money: bool, pct: bool) -> str:
    if pct:
        return f"{value:,.2f}%".replace(".00%", "%")
    text = f"{value:,.0f}" if abs(value) >= 100 or value == int(value) else f"{value:,.2f}"
    return f"${text}" if money else text


def _figures_about(u: QuotableUnit, content: list[str], percent_asked: bool, years: set[str]) -> list[WrittenNumber]:
    """The figures of a sentence that a word of the question's topic stands next to ("employed approximately
    34,145 persons", "31,302 employees"): the counts of what was asked, not the other figures around them, nor
    one the sentence gives for a year not asked ("from 27,324 in fiscal 2023 to 31,302 in fiscal 2024")."""
    out = []
    figures = answer_figures(u.text)
    parts = listed_parts(u.text, [n for n in figures if not n.pct])
    for n in figures:
        if n.start in parts:
            continue  # one part's figure in a list paired with its parts by "respectively"
        if n.pct and not percent_asked:
            continue  # "approximately 69% were employed outside the U.S.": a share, when a count is asked
        after = tokens(u.text[n.end:])[:3]
        if names_another_year(after, years):
            continue
        near = set(tokens(u.text[:n.start])[-2:]) | set(after[:1])
        if any(is_covered(t, near) for t in content):
            out.append(n)
    return out


_HOW_MANY = re.compile(r"\bhow\s+many\b", re.I)


# What a comparison of figures read from prose says of them.
_FROM_PROSE = ("These figures are read from prose, not from tagged XBRL data: check that they count the same thing at "
               "comparable dates.")


def _missing_note(missing: list[str]) -> str:
    return ("Note: no retrieved passage mentions " + ", ".join(f"'{w}'" for w in missing[:6])
            + "; the cited passages may not answer the question fully.")


def _prose_comparison(chosen: list[QuotableUnit], analysis: QuestionPlan | None, content: list[str]) -> str | None:
    """A question that compares a figure the filings state in prose only (headcount, stores, customers) across
    two or more companies, or across two or more years of one company ("employee count FY23 vs FY25"): each
    company's (or year's filing's) best quoted sentence that states a figure of what was asked, and the
    difference of those figures. Said only when each such sentence states exactly one such figure, all of one
    kind (a count, an amount, a percentage), so the figures compared are the ones quoted; never a guess."""
    if analysis is None:
        return None
    over_years = len(analysis.tickers) == 1 and len(analysis.fiscal_years) >= 2
    # Several years of one company's figure asked, not as a change ("how many vehicles did it deliver in 2023 and
    # 2024"): each year's figure from that year's filing, set side by side; one sentence answers one year only.
    if not (analysis.calculation.ranks or analysis.calculation.growth or over_years):
        return None
    if len(analysis.tickers) >= 2 and analysis.calculation.ranks:
        sides = [(ticker, None) for ticker in analysis.tickers]
    elif over_years:
        # A change over a company's years ("how much did its headcount grow from FY23 to FY25") is the same
        # comparison, the latest against the earliest.
        sides = [(analysis.tickers[0], year) for year in sorted(analysis.fiscal_years)]
    else:
        return None
    percent_asked = bool(PERCENT_Q.search(analysis.question or ""))
    picks: list[tuple[QuotableUnit, WrittenNumber]] = []
    for ticker, year in sides:
        own = [u for u in chosen if u.source.ticker == ticker and (year is None or u.source.fiscal_year == year)]
        years = {str(year)} if year else {str(y) for y in analysis.fiscal_years}
        # What is counted, when the question says ("how many stores", a headcount's employees), before any other
        # word of the question: "31.4 million people" served is not a count of the people employed.
        stating = [(u, figures) for u in own if (figures := counts_named(u, analysis.counted, years))] or [
            (u, figures) for u in own if (figures := _figures_about(u, content, percent_asked, years))]
        if not stating or stating[0][0].kind != "sentence":
            return None
        unit, figures = stating[0]
        if analysis.counted:
            # A total beside its parts ("24,318 employees ..., 17,845 were engaged in research and development"):
            # the question's other words pick the part, as for one count (see _count_asked); else the total.
            every, kept = figures_of_the_year(unit, years)
            part = _count_asked(unit, every, kept, analysis.counted, content) if len(kept) > 1 else None
            figures = [part] if part else figures
        if len(figures) != 1:
            return None
        picks.append((unit, figures[0]))
    kinds = {(n.money, n.pct) for _, n in picks}
    if len(kinds) != 1:
        return None
    money, pct = kinds.pop()

    def who(u: QuotableUnit) -> str:
        name = reader_name(u.source.company) or u.source.ticker
        return f"{name} (FY{u.source.fiscal_year})" if sides[0][1] is not None else name

    if sides[0][1] is not None:
        # Over years: the latest against the earliest, as a change.
        (first_unit, first), (last_unit, last) = picks[0], picks[-1]
        change = last.value * last.scale - first.value * first.scale
        base = first.value * first.scale
        rate = f" ({change / base * 100:+.1f}%)" if base and not pct else ""
        return (f"Comparison of the figures quoted below: {who(last_unit)} states {last.raw} "
                f"[{last_unit.source.number}], against {first.raw} for {who(first_unit)} [{first_unit.source.number}]; "
                f"change {'+' if change >= 0 else '-'}{_figure_text(abs(change), money, pct)}{rate}. {_FROM_PROSE}")
    ranked = sorted(picks, key=lambda p: -p[1].value * p[1].scale)
    (top_unit, top), (next_unit, second) = ranked[0], ranked[1]
    if top.value * top.scale == second.value * second.scale:
        return None
    diff = top.value * top.scale - second.value * second.scale
    others = "; ".join(f"{who(u)}: {n.raw} [{u.source.number}]" for u, n in ranked[2:])
    return (f"Comparison of the figures quoted below: {who(top_unit)} states the larger, {top.raw} "
            f"[{top_unit.source.number}], against {second.raw} for {who(next_unit)} [{next_unit.source.number}]; "
            f"difference {_figure_text(diff, money, pct)}{'; ' + others if others else ''}. {_FROM_PROSE}")


def _prose_count(chosen: list[QuotableUnit], analysis: QuestionPlan | None, content: list[str]) -> str | None:
    """One company's count (people served, stores, employees) from the best sentence that states several counts: a
    period trap in prose (the year asked, or the filing's own, beside another year) or a total beside its parts
    ("42,300 employees; 25,400 were engaged in research and development"). The figure wanted is the answer, quoted
    with its clause; the sentence itself is left out, as its other figures would read as further answers. Said only
    when exactly one figure is the one asked (see _count_asked); otherwise the sentence is quoted whole, never
    guessed at."""
    if analysis is None or not analysis.counted or not one_company(analysis, chosen) or not content:
        return None
    if len(analysis.fiscal_years) >= 2:
        return None  # one company's count over years, each from its own year's filing: see _prose_comparison
    if len(_HOW_MANY.findall(analysis.question or "")) > 1:
        return None  # "how many people does it employ, and how many work in R&D": both counts, so the sentence whole
    stating = [u for u in chosen if u.kind == "sentence" and any(
        not n.pct and not n.money for n in answer_figures(u.text))]
    if not stating:
        return None
    unit = stating[0]
    figures, kept = figures_of_the_year(unit, {str(y) for y in analysis.fiscal_years})
    if len(figures) < 2 or not kept:
        return None
    figure = _count_asked(unit, figures, kept, analysis.counted, content)
    if figure is None or _placed_elsewhere(unit.text, figure, analysis.question or ""):
        return None
    # A count listed with its years and "respectively" is read with the whole list: its noun follows the last
    # figure, and the quote must show which year each figure is.
    run = next((r for r in listed_runs(unit.text, figures) if figure in r and respective_years(unit.text, r)), [figure])
    later = [n for n in figures if n.start > run[-1].start]
    clause = unit.text[run[0].start:later[0].start if later else len(unit.text)]
    before = " ".join(tokens(unit.text[:run[0].start])[-2:])
    if not any(is_covered(t, set(tokens(clause)) | set(before.split())) for t in content):
        return None
    quote = respective_quote(unit.text, run, figure) if len(run) > 1 else clause_quote(unit.text, figure, figures)
    return (f"Figure read from prose: **{figure.raw}**, as {unit.source.label()} states it: "
            f"\"{quote}\" [{unit.source.number}]. {untagged(analysis)}: the whole passage is under Sources.")


# "3,714 stores in the U.S.", "1,109 retail stores in Canada": where a count is, said right after its noun.
_IN_PLACE = re.compile(r"\s+(?:[a-z-]+\s+){0,3}?(?:in|across|throughout)\s+(?:the\s+)?([A-Z][A-Za-z.]*)")


def _placed_elsewhere(text: str, figure: WrittenNumber, question: str) -> bool:
    """Does the count's clause place it in one named place the question does not name ("operates 3,714 stores in
    the U.S." for "how many stores does it operate")? Then it is that place's count, not the company's; a clause
    that names several places ("throughout the U.S., Canada, and Mexico") counts them all."""
    m = _IN_PLACE.match(text, figure.end)
    if not m or m.group(1).lower() in MONTH_WORDS | {"fiscal", "fy", "q1", "q2", "q3", "q4"}:
        return False
    # Several places listed right after it ("the U.S. (including Puerto Rico), Canada, and Mexico"); a place it
    # includes ("the U.S., including all 50 states") is still that one place.
    if re.match(r"\s*(?:\([^)]*\)\s*)?(?:,|\band\b)\s*(?:and\s+)?(?:the\s+)?[A-Z]", text[m.end():]):
        return False
    place = re.sub(r"[^a-z]", "", m.group(1).lower())
    return place not in {re.sub(r"[^a-z]", "", w.lower()) for w in question.split()}


def _prose_amount(chosen: list[QuotableUnit], analysis: QuestionPlan | None, question: str,
                  content: list[str]) -> str | None:
    """One company's amount for one year from the best sentence, when that sentence also states the amount of
    another year: a period trap in prose, in either of two shapes.
    - A list with "respectively" ("Warranty costs in 2024, 2023 and 2022 included ... $705 million, $576 million and
      $294 million, respectively"), asked "how much": the year asked, else the filing's own, picks the figure by
      its place in the list; said only when exactly one list in the sentence pairs amounts with years.
    - A comparison ("ARR exiting fiscal 2024 was $4.16 billion, up from $3.57 billion at the end of fiscal 2023"),
      asked for the figure (no why or how): the figure the comparison sets beside it for another year is left out
      (see compared_figure), and so is the amount it changed by ("increased by $524 million") unless a change is
      asked; the one left is said only when it is the sentence's only other amount.
    Either way the sentence must hold every word the question asks with (an amount has no counted noun to check it
    by: a sentence about "acquisitions of businesses" is not about "selling businesses"). Quoting the whole
    sentence would state the other year's figure as a second answer."""
    if analysis is None or analysis.counted or not one_company(analysis, chosen) or not chosen or not content:
        return None
    if PERCENT_Q.search(question):
        return None
    best = chosen[0]
    words = set(tokens(best.text))
    if best.kind != "sentence" or not all(is_covered(t, words) for t in content):
        return None
    wanted = {str(y) for y in analysis.fiscal_years} or (
        {str(best.source.fiscal_year)} if best.source.fiscal_year else set())
    if len(wanted) != 1:
        return None
    year = next(iter(wanted))
    money = [n for n in answer_figures(best.text) if n.money]
    paired = [(run, years) for run in listed_runs(best.text, money) if (years := respective_years(best.text, run))]
    if paired:
        if not asks_amount(question) or len(paired) != 1:
            return None
        run, years = paired[0]
        picked = [n for n, y in zip(run, years) if str(y) == year]
        quote = respective_quote(best.text, run, picked[0]) if len(picked) == 1 else ""
    else:
        if analysis.narrative:
            return None
        change_asked = analysis.calculation.growth or analysis.calculation.by_how_much
        picked = [n for n in money if not compared_figure(best.text, n, year) and (
            change_asked or not change_amount(best.text, n))]
        quote = clause_quote(best.text, picked[0], money, lead_words=12) if len(picked) == 1 < len(money) else ""
        quote = TRAILING_CHANGE.sub("", quote).rstrip(" ,")  # "... during fiscal 2024", not "... increased by"
    if not quote:
        return None
    return (f"Figure read from prose: **{picked[0].raw}** for {year}, as {best.source.label()} states it: "
            f"\"{quote}\" [{best.source.number}]. {untagged(analysis)}: the whole passage is under Sources.")


# A unit of measure after a number, up to two words later ("31,000 additional square feet", "five years"): see
# rag/data/lexicon.toml's measure_units.
_MEASURE_UNITS = PhraseList("measure_units")
_MEASURE_GAP_WORD = re.compile(r"\s*[a-z-]+\s+", re.I)


def _measures(text: str, at: int) -> bool:
    """Does a unit of measure follow offset `at`, after at most two other words?"""
    for _ in range(3):
        if follows(_MEASURE_UNITS.book.phrasings, text.lower(), at):
            return True
        gap = _MEASURE_GAP_WORD.match(text, at)
        if gap is None:
            return False
        at = gap.end()
    return False


def _count_asked(unit: QuotableUnit, figures: list[WrittenNumber], kept: list[WrittenNumber], counted: list[str],
                 content: list[str]) -> WrittenNumber | None:
    """Which of a sentence's counts of the year wanted the question asks for. One count: that one. Several (a total
    and its parts): the question's words beyond the thing counted ("research and development" in "how many of its
    people work in research and development") pick the part whose clause holds every one of them the sentence
    holds; with no such words, the total is the count its noun follows ("42,300 employees"). A question whose
    other words the sentence never uses ("how many employees in Europe") gets no figure."""
    # A size or a span ("31,000 additional square feet", "five years") measures something: it counts no stores.
    kept = [n for n in kept if not _measures(unit.text, n.end)]
    # The sentence must count the thing asked at all: "up to 175 million shares" counts no holders of record, and
    # "the 848 factory" no airplanes. One count left is then the one; a part beside the total is picked below.
    named = {m.start for m in counts_named(unit, counted, set())}
    if not named:
        return None
    if len(kept) <= 1:
        return kept[0] if kept and kept[0].start in named else None
    counted_stems = set(tokens(" ".join(counted)))
    asked = [t for t in content if not is_covered(t, counted_stems)]

    def clause_words(n: WrittenNumber) -> set[str]:
        return set(tokens(clause_quote(unit.text, n, figures)))

    if not asked:
        totals = [n for n in kept if n.start in named]
        if len(totals) > 1:
            # A count of the whole thing asked ("96,400 holders of record") over a count of its noun alone, beside
            # it ("and 4,912,000 additional street name holders"): a phrase counted is asked in all its words.
            totals = [n for n in totals if counts_all_of_it(unit.text, n, counted)] or totals
        return totals[0] if len(totals) == 1 else None
    in_sentence = {t for t in asked if is_covered(t, set(tokens(unit.text)))}
    if not in_sentence:
        return None
    holding = [n for n in kept if {t for t in asked if is_covered(t, clause_words(n))} == in_sentence]
    if len(holding) > 1:
        # The other words sit in every count's clause ("151 office locations in 59 countries around the world"):
        # the count its noun follows is the one asked, the other counts where.
        holding = [n for n in holding if n.start in named]
    return holding[0] if len(holding) == 1 else None


# How an extractive answer states a figure it read from one passage (_prose_count, table_figure), with that
# passage's [n] the first citation after it.
_FIGURE_READ = re.compile(r"^Figure read from (?:prose|the table): .*?\[(\d+)\]", re.M)


def figure_source(text: str) -> int | None:
    """The number of the passage an extractive answer read its figure from; None when it quotes passages."""
    m = _FIGURE_READ.search(text or "")
    return int(m.group(1)) if m else None


def _opening_description(question: str, sources: list[Citation], analysis: QuestionPlan | None,
                         sentences: int = 2) -> list[QuotableUnit]:
    """"What does Acme do?", "What kind of company is Acme?", "What does Acme sell?": Item 1 opens with the
    description of the business (Regulation S-K 101(c)). When the question says nothing beyond that (no word but
    the regulation's and the verbs of what a business does, BUSINESS_VERBS), the answer is the first sentences
    of each company's opening Item 1 passage among the sources, latest year, past a preamble on incorporation
    and defined terms; not whichever sentences share the regulation's words."""
    if analysis is None or BUSINESS_WORDS not in analysis.topic_words:
        return []
    regulation = set(tokens(" ".join(analysis.topic_words + list(BUSINESS_VERBS))))
    if any(t not in regulation for t in content_terms(question, sources, analysis, regulation_words=False)):
        return []  # "what does it sell online": the question's own words choose the sentences
    openings: dict[str, Citation] = {}
    for c in sources:
        if c.section != "Item 1" or len(c.text.split("\n", 1)[-1].split()) < PREAMBLE_WORDS:
            continue
        held = openings.get(c.ticker or "")
        if held is None or ((c.fiscal_year or 0), -(c.char_start or 0)) > ((held.fiscal_year or 0),
                                                                          -(held.char_start or 0)):
            openings[c.ticker or ""] = c
    return [u for c in openings.values() for u in [
        u for u in quotable_units(c) if u.kind == "sentence" and len(u.text.split()) >= MIN_SENTENCE_WORDS
        and not _DEFINES_WE.search(u.text)][:sentences]]


HEADLINES_PER_COMPANY = 6


def _item_headlines(sources: list[Citation], analysis: QuestionPlan | None) -> list[QuotableUnit]:
    """"What are the main risk factors?": a question about one Item as a whole (QuestionPlan.whole_item) is
    answered by the Item's headlines (quotable.headlines) in each company's retrieved passages, in the order the
    filing gives them; not by the sentences that share the title's words, which are the Item's preamble about
    itself. [] for any other question, or when the passages hold fewer than two headlines (an Item not set out
    under headlines)."""
    if analysis is None or not analysis.whole_item:
        return []
    passages = [c for c in sources if c.section == analysis.whole_item]
    by_company: dict[str, list[Citation]] = {}
    for c in passages:
        by_company.setdefault(c.ticker or "", []).append(c)
    chosen: list[QuotableUnit] = []
    for group in by_company.values():
        latest = max(c.fiscal_year or 0 for c in group)
        found = [u for c in sorted((c for c in group if (c.fiscal_year or 0) == latest),
                                   key=lambda c: c.char_start or 0) for u in headlines(c)]
        chosen += [u for k, u in enumerate(found) if all(u.text != v.text for v in found[:k])][:HEADLINES_PER_COMPANY]
    return chosen if len(chosen) >= 2 else []


# The preamble's sentence that says what "we", "us" and "our" refer to: no description of anything.
_DEFINES_WE = re.compile(r"[“\"'‘](?:we|us|our)[,.]?[”\"'’]", re.IGNORECASE)


def _off_topic(question: str, sources: list[Citation], analysis: QuestionPlan | None) -> bool:
    """No retrieved passage holds half of the question's topic words, nor two of them. A passage, not a sentence:
    an answer's words spread over a sentence, its neighbours and its table's header. Two words suffice in a longer
    question because the words a passage lacks are most often the question's own phrasing ("buying back",
    "remained", "bring in") rather than its subject; a question about something the filings never discuss
    ("what colour is the headquarters painted") shares at most one word with them."""
    words = content_words(question, sources, analysis)
    if not words:
        return False
    # A name the question writes that a passage holds ("the <target> deal"): the passage is about what is asked, however
    # the question's other words put it ("the hit it took for walking away").
    names = [set(tokens(name)) for name in (analysis.unread_names if analysis else [])]
    if names and any(name and name <= set(tokens(c.text)) for name in names for c in sources):
        return False
    best = 0
    for c in sources:
        vocab = set(tokens(c.text)) | section_tokens(c)
        best = max(best, sum(1 for word in words if all(is_covered(t, vocab) for t in word)))
    return best < 2 and best / len(words) < 0.5


def extractive_answer(
    question: str,
    sources: list[Citation],
    analysis: QuestionPlan | None = None,
    *,
    facts_text: str | None = None,
    reason: str | None = None,
    embed_model=None,
    figure_only: bool = False,
    recurring=None,
) -> tuple[str, bool]:
    """(answer text, refused). The sentences and table rows of the sources that best match the question, each
    with its [n], grouped by source; table rows carry their column header (the years) and unit. `embed_model` (the
    index's) reads a figure only the filer states from the cell or clause that states it (rag.answer.stated).
    figure_only: only a figure read from the passages (a count or amount stated in prose, a figure only the filer
    states, a comparison, a table's cell), else "" (see figure_reading). `recurring` (rag.recurring): which
    sentences other companies' filings print too, boilerplate that is not quoted."""
    how = f" ({reason})" if reason else " (no language model used)"
    if facts_text:
        # The exact figures answer it. Quoting the statement rows as well would repeat them beside the other
        # columns of the same rows (the prior year, the year to date), which reads as a second answer.
        facts = [c for c in sources if c.kind == "fact"]
        read = [c for c in facts if c.origin]
        origin = ("Figures read from the pages of PDFs, which carry no XBRL data" if read and len(read) == len(facts)
                  else "Exact figures from the filings' XBRL data and the pages of PDFs" if read
                  else "Exact figures from the filings' XBRL data")
        return (f"{origin}{how}; each is cited to the passage that reports it, "
                f"listed under Sources.\n\n{facts_text.strip()}", False)
    lead = f"Extractive answer{how}: passages quoted from the filings that best match the question. Check each " \
        "figure's period and unit."
    parts = [lead]
    chunk_sources = [c for c in sources if c.kind != "fact"]
    units = _without_recurring(scored_units(question, chunk_sources, analysis, embed_model),
                               None if figure_only else recurring)
    chosen = _selection(question, chunk_sources, analysis, units)
    missing = coverage_gap(question, chunk_sources, analysis)
    if not chosen:
        if figure_only:
            return "", True
        words = ", ".join(f"'{w}'" for w in missing[:6])
        why = (f": none of the {len(chunk_sources)} retrieved passages mentions {words}" if missing else
               ": no retrieved passage holds what the question asks about")
        return (
            f"The indexed filings do not appear to answer this{why}. Nothing is cited, to avoid quoting passages "
            "that do not answer the question. Try other words, or check that the right filings are indexed.",
            True,
        )
    missing_note = len(parts)
    if missing:
        parts.append(_missing_note(missing))
    years = [str(y) for y in (analysis.fiscal_years if analysis else [])]
    if years and chosen and not any(y in u.text or y in u.header or y in u.source.text[:200]
                                    for u in chosen for y in years):
        parts.append(f"Note: none of these passages mentions {', '.join(years)}.")
    content = content_terms(question, chunk_sources, analysis)
    # A figure read from the text stands alone; why the model did not answer (stopped, failed) is still said.
    figure_lead = [f"Extractive answer{how}."] if reason else []
    count = _prose_count(chosen, analysis, content) or _prose_amount(chosen, analysis, question, content)
    if count:
        return (count if figure_only else "\n\n".join(figure_lead + parts[1:] + [count])), False
    # A figure only the filer states, read before the best sentence takes the one after it (below), where no
    # reader above or of a table's year column reads one.
    stated = stated_figure(units, analysis, question, chunk_sources, embed_model)
    # Compared before the best sentence takes the one after it: that one's figures are not the ones compared.
    comparison = _prose_comparison(chosen, analysis, content)
    _with_following(chosen, chunk_sources)
    if comparison:
        parts.append(comparison)
        if missing:
            # The change the question asks for ("how much did it grow") is the comparison's own: a word of change
            # that no passage holds is answered by it.
            kept = [w for w in missing if not CHANGE_WORDS.fullmatch(w)]
            parts[missing_note:missing_note + 1] = [_missing_note(kept)] if kept else []
    from_table = table_share(units, analysis) or table_figure(chosen, analysis, question, content) or \
        (None if comparison else table_change(chosen, analysis, question)) or stated
    if from_table:
        return (from_table if figure_only else "\n\n".join(figure_lead + parts[1:] + [from_table])), False
    if figure_only:
        return comparison or "", False
    for number in dict.fromkeys(u.source.number for u in chosen):
        group = sorted((u for u in chosen if u.source.number == number), key=lambda u: u.pos)
        head = f"**[{number}] {group[0].source.label()}**"
        parts.append(head + "\n" + "\n".join(_render_unit(u) for u in group))
    return "\n\n".join(parts), False


def figure_reading(question: str, sources: list[Citation], analysis: QuestionPlan | None,
                   embed_model=None) -> str | None:
    """The figure the extractive answer reads from the passages for a question that asks one (a count or amount
    stated in prose, a comparison, a table's cell), with its [n], alone; None when it reads none. A model's answer
    leads with it, as with the facts layer's exact figures (rag.answer.stream)."""
    if analysis is None or not (analysis.metrics or analysis.counted or analysis.number_of or analysis.amount_named):
        return None
    text, _refused = extractive_answer(question, sources, analysis, embed_model=embed_model, figure_only=True)
    return text.strip() or None


def quotes_to_check(question: str, cited: list[Citation], shown: list[Citation],
                    analysis: QuestionPlan | None, embed_model=None) -> str:
    """The filings' own words shown under a model's answer in prose, or one that cites nothing: the sentences and
    rows the extractive answer quotes from the passages shown (its own selection, the best sentence with the one
    after it), then those of the passages the answer cites that best match the question, each with its [n], in
    passage order; "" when none matches. The answer so carries no fewer of the filings' words than the answer
    without a model, and its paraphrase can be checked against the passages it cites."""
    passages = [c for c in shown if c.kind != "fact"]
    chosen = _selection(question, passages, analysis, scored_units(question, passages, analysis, embed_model))
    if chosen:
        _with_following(chosen, passages)
    said = {u.source.number: [] for u in chosen}
    for u in chosen:
        said[u.source.number].append(" ".join(u.text.split()))
    best_cited = _select_units(scored_units(question, cited, analysis, embed_model), limit=4, per_source=2) \
        if cited else []
    for u in best_cited:
        text = " ".join(u.text.split())
        if not any(text in quoted for quoted in said.get(u.source.number, ())):
            chosen.append(u)
            said.setdefault(u.source.number, []).append(text)
    return _quote_lines(chosen)


def _quote_lines(chosen: list[QuotableUnit]) -> str:
    """Quoted units one a line with their [n], in passage order."""
    return "\n".join(_render_unit(u) for u in sorted(chosen, key=lambda u: (u.source.number, u.pos)))
