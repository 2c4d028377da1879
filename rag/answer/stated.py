"""Figures only the filer states: operating figures that no taxonomy tags (volumes, units produced or sold, per-unit
figures, counts of stores, customers or sites), read from the table cell or the clause that states them.

Every figure the retrieved passages print is a candidate, described in the filing's own words: a table cell by its
table's caption, its group heading, its row label and the column heads over it; a figure in a sentence by its
clause and its sentence. Each description is scored against the question with the index's embedding model (the
cosine of their sentence vectors) and by word overlap (the share of the question's content words it holds, with
the synonyms the extractive answer reads). The period is chosen as for tagged figures: in a table with a column a
year, the column of the year asked (else the filing's own year); a table without one, and a sentence, speak for the
filing's own year unless they name the year asked; a clause that names only another year is that year's figure.
The best candidate answers only when its description holds most of the question's words, its score clears a floor,
and no candidate that states another figure comes close; otherwise nothing is said here, and the extractive answer
goes on as before (never a guess).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..dates import MONTH_WORDS
from ..embedding import text_vectors
from ..numbers import WrittenNumber, listed_runs, parse_numbers, respective_years, worth_checking
from ..schema import QuestionPlan
from ..words import STOP_WORDS
from .clauses import (
    TRAILING_CHANGE,
    change_amount,
    clause_quote,
    compared_figure,
    figures_of_the_year,
    respective_quote,
)
from .counts import YEAR
from .quotable import QuotableUnit, column_heads
from .table_figure import ASKING_WORD, PERCENT_Q, cell_place, one_company, stated_cell, untagged, year_column
from .terms import GENERIC_TERMS, content_terms, is_covered, tokens

# What the intent model (rag.intent) calls a question for one figure or one count.
_FIGURE_INTENTS = ("figure", "count")
# How much a description's word overlap counts beside its cosine, and the least a figure's description must
# reach: its score, the share of the question's content words it holds, and its lead over the best candidate
# that states another figure. Set on the tune half of tests/eval/questions-operating.jsonl.
OVERLAP_WEIGHT = 0.15
MIN_SCORE = 0.6
MIN_OVERLAP = 0.5
MIN_LEAD = 0.04
# Two figures are one when they differ by less than this share (a table's 12,340 million and a sentence's
# "12.3 billion" state one figure; invented).
_SAME_FIGURE = 0.005
_SCALES = {"in thousands": 1e3, "in millions": 1e6, "in billions": 1e9}
# The most candidates embedded for one question: each costs a pass of the model.
_EMBEDDED = 40


@dataclass
class _Asked:
    """What the plan asks for, as this reader needs it: the year wanted (None: each filing's own), whether a
    count is asked (then no amount of money answers), and the question's words to score descriptions by."""

    year: str | None
    counted: bool
    text: str
    content: list[str]
    vocab: set[str]  # the question's own words


@dataclass
class Candidate:
    """A figure a passage prints, with the words that say what it is: a cell's (caption, group, row label and
    column heads) or a clause's. `heads` is None for a figure stated in a sentence."""

    unit: QuotableUnit
    figure: WrittenNumber
    words: str
    period: str
    heads: list[str] | None = None
    quote: str = ""  # a clause's words as the answer quotes them, the other figures of its sentence left out
    note: str = ""  # a cell's unit note: its column's own ("(in millions)" under one head), else its table's
    magnitude: float = 0.0
    semantic: float = 0.0
    overlap: float = 0.0
    score: float = 0.0


def asked_for(analysis: QuestionPlan | None, question: str, sources) -> _Asked | None:
    """What one figure the plan asks for, or None when it asks for anything else: several companies or years, a
    quarter, a change, a comparison, a share, a rate per item, or prose (those have readers of their own)."""
    if analysis is None or analysis.intent is None or analysis.intent.label not in _FIGURE_INTENTS:
        return None
    calc = analysis.calculation
    percent = PERCENT_Q.search(question) is not None  # a share or a rate: tagged, or computed from tagged figures
    if (len(analysis.tickers) > 1 or len(analysis.fiscal_years) > 1 or analysis.periods or analysis.latest_quarters
            or analysis.years_back or analysis.per_item or analysis.prose_intent or percent):
        return None
    if any((calc.growth, calc.compares, calc.share_of_end is not None, calc.ratio, calc.difference, calc.ranks,
            calc.by_how_much, calc.total, calc.compound, calc.multiple)):
        return None
    content = content_terms(question, sources, analysis)
    if not content or asks(question) > 1:
        return None
    text = " ".join(analysis.question_without(lambda dimension, _value: dimension in (
        "ticker", "fiscal_year", "form", "period")).split())
    year = str(analysis.fiscal_years[0]) if analysis.fiscal_years else None
    return _Asked(year, bool(analysis.counted) or analysis.intent.label == "count", text, content,
                  set(tokens(question)))


def asks(question: str) -> int:
    """How many things the question asks: its parts between commas that open with an asking word ("What did it get
    from the deal, what did it pay, and how was it booked?" asks three). One figure answers one."""
    parts = [part.split()[:2] for part in question.replace(";", ",").split(",")]
    return sum(1 for words in parts if any(ASKING_WORD.fullmatch(w.lower()) for w in words))


def _cell_figure(cell: str) -> WrittenNumber | None:
    """The one figure of a table cell: not a year, not a percentage (a share or a change beside the figure)."""
    figures = parse_numbers(cell)
    if len(figures) != 1 or figures[0].pct:
        return None
    n = figures[0]
    return n if worth_checking(n) or (n.value < 10 and "," not in n.raw and not n.money) else None


def _spread_heads(lines: list[list[str]], column: int, width: int) -> list[str]:
    """The head of every header line over a value column, top to bottom. A line with fewer heads than columns
    spans them: evenly when they divide, else in proportion (a group over three columns beside one over two), as
    a reader takes a head printed over the columns it spans."""
    out = []
    for heads in lines:
        if heads and len(heads) <= width:
            out.append(heads[column * len(heads) // width])
    return out


def _table(row: QuotableUnit, rows: list[QuotableUnit]) -> list[QuotableUnit]:
    """The rows of the row's table in its passage: those under the same column header."""
    return [other for other in rows if other.source is row.source and other.header == row.header]


def _money_columns(table: list[QuotableUnit]) -> set[int]:
    """The value columns of a table that print a dollar sign in any of its rows: they hold amounts."""
    return {j for other in table for j, cell in enumerate(other.text.split("|")[1:]) if "$" in cell}


def _columns(row: QuotableUnit, asked: _Asked, question: str) -> tuple[str, list[tuple[int, list[str]]]] | None:
    """(the period, the value columns to read with their heads): the column of the year wanted in a table with a
    column a year; every column in a table without one, read as the filing's own year. None when the row is
    another period's."""
    values = row.text.split("|")[1:]
    own = str(row.source.fiscal_year or "")
    year = asked.year or own
    company = set(tokens(row.source.company or "")) | ({row.source.ticker.lower()} if row.source.ticker else set())
    found = year_column(row, year, set(tokens(question)), company) if year else None
    if found is not None:
        return year, [found]
    printed = set(YEAR.findall(row.header))
    if any(year_column(row, other, set(), company) is not None for other in printed):
        return None  # a column a year, and none for the year wanted
    if year != own:
        return None  # an undated table speaks for its filing's date
    lines = [column_heads(line) for line in row.header.splitlines() if line.strip()]
    return year, [(j, _spread_heads(lines, j, len(values))) for j in range(len(values))]


def lead_in(row: QuotableUnit) -> str:
    """The sentence that introduces the row's table, when the passage prints one right above its header and ends
    it with a colon ("The following table shows the number of stores we operated outside the United States:"): it
    says what the table counts, which its row labels and column heads often leave out."""
    first = row.header.splitlines()[0].strip() if row.header else ""
    lines = [line.strip() for line in (row.source.text or "").splitlines()]
    if not first or first not in lines:
        return ""
    before = [line for line in lines[:lines.index(first)] if line]
    last = before[-1] if before else ""
    return last if last.endswith(":") and not last.count("|") and len(last.split()) > 6 else ""


def short_forms(texts: list[str]) -> dict[str, str]:
    """The short forms the passages define, with the words they stand for: a name followed by its initials in
    brackets, quoted or not ("revenue passenger miles (“RPM”)", "annual recurring revenue (ARR)"). A head or a clause
    that prints the short form is read with its words."""
    out: dict[str, str] = {}
    for text in texts:
        start = text.find("(")
        while start >= 0:
            end = text.find(")", start)
            short = text[start + 1:end].strip("“”\"'‘’ ") if end > start else ""
            if 2 <= len(short) <= 6 and short.isalpha() and short.isupper():
                words = _spelled_by(text[:start].split(), short)
                if words:
                    out.setdefault(short, words)
            start = text.find("(", start + 1)
    return out


def _spelled_by(before: list[str], short: str) -> str:
    """The last words before a short form whose initials, little words aside, spell it; "" when none do."""
    initials: list[str] = []
    for i in range(len(before) - 1, max(-1, len(before) - 2 * len(short) - 1), -1):
        word = before[i].strip("“”\"'‘’,;:")
        if not word or not word[0].isalpha():
            return ""
        if word.lower() not in STOP_WORDS:
            initials.insert(0, word[0].upper())
        if "".join(initials) == short:
            return " ".join(w.strip("“”\"'‘’,;:") for w in before[i:])
        if len(initials) >= len(short):
            return ""
    return ""


def _spelled_out(words: str, forms: dict[str, str]) -> str:
    """The words with each short form the passages define followed by what it stands for."""
    return " ".join(f"{w} {forms[w.strip('()“”,.')]}" if w.strip("()“”,.") in forms else w for w in words.split())


def _cells(row: QuotableUnit, rows: list[QuotableUnit], asked: _Asked, question: str) -> list[Candidate]:
    """The row's figures that could answer: the cells of the period wanted, of the kind asked (a count is no
    amount of money)."""
    label = row.text.split("|")[0].strip()
    columns = _columns(row, asked, question) if label else None
    if not columns:
        return []
    period, chosen = columns
    values = row.text.split("|")[1:]
    money = _money_columns(_table(row, rows))
    out = []
    for j, heads in chosen:
        figure = _cell_figure(values[j]) if j < len(values) else None
        if figure is None or (asked.counted and (figure.money or j in money)):
            continue
        if j in money and not figure.money:  # a statement prints "$" on a column's first and total rows only
            figure = replace(figure, raw=f"${figure.raw}", money=True)
        named = [h for h in heads if not YEAR.fullmatch(h.strip())]
        words = " ".join(w for w in (row.caption, row.title, row.group, label, *named) if w)
        # A head over the column may give its own unit ("Volume (in billions)" beside "Accounts (in millions)").
        note = next((key for h in reversed(named) for key in _SCALES if key in h.lower()), row.note)
        out.append(Candidate(row, figure, words, period, heads, note=note,
                             magnitude=figure.value * _SCALES.get(note, 1.0)))
    return out


def names_unasked(clause: str, u: QuotableUnit, asked: _Asked) -> bool:
    """Does the clause name something the question does not: a proper name (a capitalised word past the
    sentence's first, not a month, nor the filer's own name) none of whose words the question holds? Such a clause
    counts another thing, or a larger one ("1,512 stores located throughout the U.S., Canada, and Mexico" for the
    stores in the U.S.)."""
    first = u.text.split(maxsplit=1)[0] if u.text.strip() else ""
    own = set(tokens(f"{u.source.company or ''} {u.source.ticker or ''}"))
    for word in clause.split():
        bare = word.strip("()[],.;:“”\"'’")
        if not bare[:1].isupper() or word == first or bare.lower() in MONTH_WORDS:
            continue
        if any(not (is_covered(t, asked.vocab) or t in own) for t in tokens(bare)):
            return True
    return False


def _clauses(u: QuotableUnit, asked: _Asked) -> list[Candidate]:
    """The sentence's figures that could answer: of the year wanted (a sentence of another year's filing must
    name it), not an amount something changed by or another period's figure set beside it, nor one whose clause
    names what the question does not (see names_unasked), of the kind asked."""
    own = str(u.source.fiscal_year or "")
    year = asked.year or own
    named = set(YEAR.findall(u.text))
    if year != own and year not in named:
        return []
    out = []
    for money in (False,) if asked.counted else (False, True):
        every, kept = figures_of_the_year(u, {year} if year else set(), money)
        # Figures listed with their years and "respectively": quoted with the list, the other years' elided.
        runs = {n.start: run for run in listed_runs(u.text, every) if respective_years(u.text, run) for n in run}
        for n in kept:
            if change_amount(u.text, n) or compared_figure(u.text, n, year):
                continue
            words = clause_quote(u.text, n, every, lead_words=8)
            if names_unasked(words, u, asked):
                continue
            run = runs.get(n.start)
            quote = respective_quote(u.text, run, n) if run else clause_quote(u.text, n, every, lead_words=12)
            out.append(Candidate(u, n, words, year, quote=quote, magnitude=n.value * n.scale))
    return out


def candidates(units: list[QuotableUnit], asked: _Asked, question: str) -> list[Candidate]:
    """Every figure of the units that could answer, each described in the filing's words, short forms spelled out."""
    rows = [u for u in units if u.kind == "row"]
    found = [c for u in units for c in (_cells(u, rows, asked, question) if u.kind == "row" else _clauses(u, asked))]
    forms = short_forms(list(dict.fromkeys(u.source.text for u in units)))
    for c in found:
        c.words = _spelled_out(c.words, forms)
    return found


def _overlap(content: list[str], words: str) -> float:
    vocab = set(tokens(words))
    return sum(1 for t in content if is_covered(t, vocab)) / len(content)


def score(found: list[Candidate], asked: _Asked, embed_model) -> list[Candidate]:
    """The candidates that hold a fair share of the question's words (at most _EMBEDDED of them, most words first),
    each with its semantic and word scores; the rest say too little of what is asked, and are not embedded. A
    sentence's figure is described by its clause and by the whole sentence, as its subject may sit outside the
    clause ("our plants shipped 4.1 million and 3.8 million crates in 2024 and 2023, respectively")."""
    for c in found:
        if c.heads is None:
            c.overlap = (_overlap(asked.content, c.words) + _overlap(asked.content, c.unit.text)) / 2
        else:
            c.overlap = _overlap(asked.content, f"{c.words} {c.unit.note} {lead_in(c.unit)}")
    kept = sorted((c for c in found if c.overlap >= MIN_OVERLAP / 2), key=lambda c: -c.overlap)[:_EMBEDDED]
    if not any(c.overlap >= MIN_OVERLAP for c in kept):
        return []
    texts = [asked.text] + [c.words for c in kept] + [c.unit.text for c in kept if c.heads is None]
    vectors = text_vectors(embed_model, texts)
    cosines = vectors[1:] @ vectors[0]
    whole = iter(cosines[len(kept):])
    for i, c in enumerate(kept):
        c.semantic = (float(cosines[i]) + float(next(whole))) / 2 if c.heads is None else float(cosines[i])
        c.score = c.semantic + OVERLAP_WEIGHT * c.overlap
    return kept


def _same(a: Candidate, b: Candidate) -> bool:
    top = max(abs(a.magnitude), abs(b.magnitude))
    return top == 0 or abs(a.magnitude - b.magnitude) <= _SAME_FIGURE * top


def _context(c: Candidate, with_lead_in: bool) -> set[str]:
    u = c.unit
    return set(tokens(f"{u.caption} {u.title} {u.group} {lead_in(u) if with_lead_in else ''}"))


def parts(found: list[Candidate], asked: _Asked) -> tuple[set[int], set[int]]:
    """The cells (by id) of a row label the passages print in several tables, or under several group headings,
    told apart by the words of each one's caption, group heading and lead-in that the others do not print
    ("outside the United States" against "in the United States"): (the siblings of a part the question names, which
    are other parts and no rivals to it; the cells of a label none of whose parts the question names, where which
    part, or the whole, is asked is a guess)."""
    by_label: dict[frozenset, list[Candidate]] = {}
    for c in found:
        if c.heads is not None:
            by_label.setdefault(frozenset(tokens(c.unit.text.split("|")[0])), []).append(c)
    siblings: set[int] = set()
    unnamed: set[int] = set()
    for cells in by_label.values():
        # The sentences that introduce the tables tell them apart only when every one of them has its own in
        # the passages: one cut off by the passage's start would make the others' words look distinctive.
        with_lead_ins = all(lead_in(c.unit) for c in cells)
        contexts = [_context(c, with_lead_ins) for c in cells]
        if len({frozenset(x) for x in contexts}) < 2:
            continue
        named = [bool((x - _others(i, contexts)) & asked.vocab) for i, x in enumerate(contexts)]
        if any(named):
            siblings.update(id(c) for c, n in zip(cells, named) if not n)
        else:
            unnamed.update(id(c) for c in cells)
    return siblings, unnamed


def _others(at: int, contexts: list[set[str]]) -> set[str]:
    """The words of the other tables' contexts: a word they print too does not tell this one apart."""
    return set().union(*(x for i, x in enumerate(contexts) if i != at))


def lacking(found: list[Candidate], asked: _Asked) -> set[int]:
    """The cells (by id) that lack a word of the question, in their row label, heads and table context, that
    another cell's row label holds: the question names a line they are not ("<brand A> and <brand B> stores" is
    neither brand's row alone, and their total row names neither)."""
    cells = [c for c in found if c.heads is not None]
    labels = [set(tokens(c.unit.text.split("|")[0])) for c in cells]
    # The question's own words, the company's name among them: a brand may be both ("<Company> and <brand> stores").
    named = set(asked.content) | {t for t in asked.vocab if t not in GENERIC_TERMS and not t[0].isdigit()}
    out: set[int] = set()
    for c, label in zip(cells, labels):
        held = label | set(tokens(f"{c.words} {lead_in(c.unit)}"))
        missing = [t for t in named if not is_covered(t, held)]
        if any(is_covered(t, other) for t in missing for other in labels if other is not label):
            out.add(id(c))
    return out


def confident(found: list[Candidate], asked: _Asked) -> Candidate | None:
    """The best candidate, when it clears the floors and leads every candidate that states another figure. Of a
    label printed in several tables (see parts), the part the question names is read; a part when it names none, and
    a cell that lacks a line the question names (see lacking), is never the best: nothing is read when one ranks
    first."""
    siblings, unnamed = parts(found, asked)
    ranked = sorted((c for c in found if id(c) not in siblings), key=lambda c: -c.score)
    if not ranked or id(ranked[0]) in unnamed | lacking(found, asked):
        return None
    best = ranked[0]
    if best.score < MIN_SCORE or best.overlap < MIN_OVERLAP:
        return None
    rival = next((c for c in ranked[1:] if not _same(c, best)), None)
    if rival is not None and best.score - rival.score < MIN_LEAD:
        return None
    # Among the candidates that state the best figure, a table's cell says it with its heads and unit note.
    agreeing = [c for c in ranked if _same(c, best) and best.score - c.score < MIN_LEAD]
    return next((c for c in agreeing if c.heads is not None), best)


def _render(best: Candidate, analysis: QuestionPlan, counted: bool) -> str:
    u = best.unit
    if best.heads is not None:
        label = u.text.split("|")[0].strip()
        stated = stated_cell(best.figure, replace(u, note=best.note), counted, scaled=True, percent_row=False)
        return (f"Figure read from the table: {stated} for {best.period}: {cell_place(u, label, best.heads)}. "
                f"{untagged(analysis)}; the whole table is in the cited passage.")
    quote = TRAILING_CHANGE.sub("", best.quote).rstrip(" ,")  # "... during fiscal 2024", not "... increased by"
    return (f"Figure read from prose: **{best.figure.raw}** for {best.period}, as {u.source.label()} states it: "
            f"\"{quote}\" [{u.source.number}]. {untagged(analysis)}: the whole passage is under Sources.")


def stated_figure(units: list[QuotableUnit], analysis: QuestionPlan | None, question: str, sources,
                  embed_model) -> str | None:
    """The answer that reads one figure the filer states in a table cell or a sentence, or None (see the module's
    docstring): the figure in bold, its period, its unit and the passage it is read from, cited."""
    if embed_model is None or not units:
        return None
    asked = asked_for(analysis, question, sources)
    if asked is None or not one_company(analysis, units):
        return None
    found = candidates(units, asked, question)
    if not found:
        return None
    best = confident(score(found, asked, embed_model), asked)
    return _render(best, analysis, asked.counted) if best is not None else None
