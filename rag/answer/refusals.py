"""Refusals decided before any LLM is called: from the question alone (what the intent model reads as a
prediction, investment advice, market data or something unrelated to filings; companies that are not indexed), and
from what retrieval found (a disclosure left to the proxy statement, a name no passage mentions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from ..companies import reader_name
from ..facts.metrics import STATEMENT_BY_METRIC, metric, prints_metric
from ..numbers import parse_numbers
from ..phrasing import PhraseList
from ..schema import Citation, Filters, QuestionPlan
from ..words import HEADCOUNT_NOUNS, split_sentences
from .citations import CITATION_MARKER
from .counts import counted_stems, names_counted, states_count
from .figures import answer_figures
from .quotable import quotable_units
from .terms import GENERIC_TERMS, is_covered, passage_words, stem, tokens


@dataclass
class Refusal:
    """Why a question is not answered, and the message that says so."""

    # forecast / advice / market_data / unknown_company / ambiguous_company / which_company / off_topic /
    # incorporated_by_reference / name_not_found
    kind: str
    message: str


def _future_years(question: str) -> list[int]:
    limit = date.today().year + 1  # fiscal years run ahead of the calendar by up to one year
    return sorted({int(y) for y in re.findall(r"\b(20\d\d)\b", question) if int(y) > limit})


def add_filings_hint(audience: str, whose: str = "its") -> str:
    """How a reader adds filings, in the words of the front end that shows the message (Settings.audience): the
    CLI's commands, or the app's Library page."""
    if audience == "cli":
        return f"Download or index {whose} filings (`python -m rag download TICKER`, `python -m rag index PATH`)"
    return f"Download or upload {whose} filings on the Library page"


def where_filings_are_listed(audience: str) -> str:
    """Where a reader sees which filings are indexed (Settings.audience as above)."""
    return "`python -m rag list`" if audience == "cli" else "Library page"


# Part III of Form 10-K may be left out and incorporated by reference from the proxy statement (General Instruction
# G(3)); most filers do, and then the 10-K holds only a pointer. Titles as Form 10-K gives them.
PROXY_ITEM_TITLES = {
    "Item 11": "Executive Compensation",
    "Item 12": "Security Ownership of Certain Beneficial Owners and Management",
    "Item 14": "Principal Accountant Fees and Services",
}
_PROXY_POINTER = re.compile(r"proxy\s+statement", re.I)
_INCORPORATED = re.compile(r"\bincorporated\b[^.]{0,80}\breference\b|\brefer\s+to\b", re.I)


def incorporated_by_reference(analysis: QuestionPlan | None, sources: list[Citation]) -> Refusal | None:
    """A question on what a 10-K leaves to the proxy statement (executive pay, who owns the shares, the auditor's
    fees), asked without naming the Item: refused when, for every company asked about, the retrieved passage of
    that Item only points to the proxy statement. The refusal says where the answer is instead, and cites
    nothing. A filing that prints the Item in full, or a question naming the Item, is answered as usual."""
    if analysis is None or analysis.sections:
        return None
    items = [i for i in analysis.topic_sections if i in PROXY_ITEM_TITLES]
    if not items:
        return None
    chunks = [c for c in sources if c.kind != "fact"]
    tickers = analysis.tickers or list(dict.fromkeys(c.ticker for c in chunks[:1] if c.ticker))
    pointers = []
    for ticker in tickers:
        pointer = next((c for c in chunks if c.ticker == ticker and c.section in items
                        and _PROXY_POINTER.search(c.text) and _INCORPORATED.search(c.text)), None)
        if pointer is None:
            return None
        pointers.append(pointer)
    if not pointers:
        return None
    where = " and ".join(
        f"{c.section} ({PROXY_ITEM_TITLES[c.section]}{f', p. {c.page_start}' if c.page_start else ''}) of the "
        f"{c.form or '10-K'} for FY{c.fiscal_year} of {reader_name(c.company) or c.ticker} ({c.ticker})" for c in pointers)
    return Refusal(
        "incorporated_by_reference",
        "The indexed filings do not state this. Form 10-K lets a company leave this disclosure to its proxy "
        "statement (Schedule 14A), which is not among the indexed filings, and here it does: "
        f"{where} only incorporate{'s' if len(pointers) == 1 else ''} the information by reference from the proxy "
        "statement. Nothing is cited, since no indexed passage gives the answer.",
    )


# How a passage names a fourth quarter on its own: "fourth quarter", "Q4", "three months ended".
_FOURTH_QUARTER = re.compile(r"\bfourth[\s-]+(?:fiscal\s+)?quarter\b|\bq4\b|\bthree\s+months\s+ended\b", re.I)


def _tells_fourth_quarter(text: str, analysis: QuestionPlan) -> bool:
    """A sentence of the passage speaks of the fourth quarter and, when the question asks for a figure, of that
    figure ("<segment> revenue"): "we began shipping <product> in the fourth quarter" tells nothing of the
    quarter's revenue."""
    asked = [set(tokens(" ".join(m.before + m.words))) for m in analysis.metrics if not m.vetoed]
    for sentence in re.split(r"(?<=[.!?])\s+|\n", text):
        if _FOURTH_QUARTER.search(sentence):
            words = set(tokens(sentence))
            if not asked or any(want and want <= words for want in asked):
                return True
    return False


def period_not_covered(analysis: QuestionPlan | None, unavailable: list[str], sources: list[Citation]
                       ) -> Refusal | None:
    """A period retrieval lists as not covered (`unavailable`) that none of the retrieved passages speaks of: their
    own periods' figures would answer another question."""
    if analysis is None or not sources:
        return None
    return _fourth_quarter_not_told(analysis, unavailable, sources) or _year_not_mentioned(analysis, unavailable,
                                                                                            sources)


def _fourth_quarter_not_told(analysis: QuestionPlan, unavailable: list[str], sources: list[Citation]
                             ) -> Refusal | None:
    """A fourth quarter no filing gives alone ("ACME Q4 FY2025", with no Q3 10-Q indexed) that no passage of the
    annual report states: the year's figures are not the quarter's."""
    fourth = [label for label in unavailable if " Q4 " in f" {label} "]
    if not fourth or any(_tells_fourth_quarter(c.text or "", analysis) for c in sources):
        return None
    return Refusal(
        "period_not_covered",
        f"These filings do not give {', '.join(fourth)} on its own: the annual report states the fiscal year as a "
        "whole, and no 10-Q for that year's third quarter is indexed to take its nine months from. None of the "
        f"{len(sources)} passages states it for the fourth quarter alone, so nothing is cited. Add the Q3 10-Q "
        "and ask again.",
    )


def _year_not_mentioned(analysis: QuestionPlan, unavailable: list[str], sources: list[Citation]) -> Refusal | None:
    """A fiscal year after every indexed report ("ACME FY2026"), or before all they report ("ACME FY2019"), that
    none of the passages so much as mentions: they say nothing of that year."""
    later = [y for y in analysis.fiscal_years if any(label.endswith(f"FY{y}") for label in unavailable)]
    if not later or any(_speaks_of_year(analysis, c.text or "", str(y)) for c in sources for y in later):
        return None
    return Refusal(
        "period_not_covered",
        f"These filings do not include {', '.join(unavailable)}: no indexed report covers that period, and none of "
        f"the {len(sources)} passages retrieved from the indexed reports speaks of {', '.join(map(str, later))} "
        "for what is asked. "
        "Nothing is cited, since no indexed passage speaks of that year.",
    )


def _speaks_of_year(analysis: QuestionPlan, text: str, year: str) -> bool:
    """Does a passage speak of the year for what is asked? With a statement line asked ("revenue in <year>"), a
    sentence or row must print the year beside one of the line's names: a year named in passing ("since <year>",
    a note's effective date) states no figure of it."""
    if year not in text:
        return False
    asked = [metric(m.metric_key) for m in analysis.metrics if not m.vetoed]
    counted = counted_stems(analysis.counted)
    if not asked and not counted:
        return True
    pieces = (" ".join(piece.split()).lower() for piece in re.split(r"(?<=[.!?])\s+|\n", text))
    if not asked:
        # A count asked ("employees in <year>"): a sentence that gives the year beside what is counted, not a
        # year named in passing (a note due that year, a plan adopted then).
        return any(year in low and names_counted(counted, set(tokens(low))) for low in pieces)
    return any(year in low and prints_metric(low, asked) for low in pieces)


def figure_not_printed(analysis: QuestionPlan | None, sources: list[Citation]) -> Refusal | None:
    """A statement line one company's filings would tag and print under its standard name ("net interest income"), which
    the facts layer found no value for and none of the retrieved passages prints by any of its names: the filings
    indexed do not state it (a 10-K that leaves its financial statements to the annual report to shareholders, a
    figure the company does not report). The passages that share its words state other figures. Only a figure
    read directly, never one computed from others (a margin, a ratio), whose inputs the passages may print."""
    if analysis is None or len(analysis.tickers) != 1 or analysis.narrative or not sources:
        return None
    # A primary statement's line only: its caption is the standard one the metric's names cover, where other
    # figures (a program's remaining authorization, a count) are worded by each filer its own way.
    asked = [m for m in analysis.metrics if not m.vetoed]
    if not asked or any(m.metric_key not in STATEMENT_BY_METRIC for m in asked):
        return None
    figures = [metric(m.metric_key) for m in asked]
    if any(f.derive or f.fallback or f.formula for f in figures):
        return None
    text = " ".join(" ".join((c.text or "").split()) for c in sources).lower()
    if prints_metric(text, figures):
        return None
    names = ", ".join(dict.fromkeys(f.label.lower() for f in figures))
    return Refusal(
        "figure_not_printed",
        f"The indexed filings of {analysis.tickers[0]} do not appear to state {names}: their XBRL data holds no "
        f"such figure, and none of the {len(sources)} passages retrieved prints it by that name. Nothing is cited, "
        "since the passages that share its words state other figures. The company may report it in a document "
        "the 10-K only refers to (such as its annual report to shareholders), which is not indexed.",
    )


_PERSON_STEMS = {stem(w) for w in (HEADCOUNT_NOUNS + """people individuals members customers clients users
    subscribers consumers patients holders shareholders stockholders shareowners lives""".split())}


def count_not_stated(analysis: QuestionPlan | None, sources: list[Citation]) -> Refusal | None:
    """A count of one company's things asked ("how many <units> did it sell", "how many <sites> does it run") that
    no sentence or table row of the retrieved passages states: the passages name the things but give no number of
    them (their sales in dollars, their models by name, their share of revenue), and a figure quoted from them
    would answer another question. A figure the facts layer reads (shares, a tagged count) is asked through a
    metric and left to it; a count the filings state in a table counts as stated (see states_count)."""
    if analysis is None or not analysis.counted or len(analysis.tickers) != 1 or analysis.narrative or not sources:
        return None
    if any(not m.vetoed for m in analysis.metrics):
        return None
    # People are counted in each filer's own words (members as "people served", holders of record as "shareowner
    # accounts of record", employees as associates): a passage that names no count of them in the question's word
    # may still count them in its own.
    if any(t in _PERSON_STEMS for word in analysis.counted for t in tokens(word)[:1]):
        return None
    asked = {t for t in tokens(analysis.question or "") if t not in GENERIC_TERMS and not t.isdigit()}
    if any(states_count(u, analysis.counted, set(), asked) for c in sources for u in quotable_units(c)):
        return None
    # The count in the question's own words when it asked "how many" of what the plan counts, else in general.
    question = analysis.question or ""
    lead, counted = "how many ", " ".join(analysis.counted)
    at = question.lower().find(lead + counted) + len(lead)
    what = lead + question[at:at + len(counted)] if at >= len(lead) else "the count asked"
    return Refusal(
        "count_not_stated",
        f"The indexed filings of {analysis.tickers[0]} do not appear to state {what}: none of the {len(sources)} "
        "passages retrieved gives a number of them, only other figures about them (amounts, shares, names). "
        "Nothing is cited, since quoting those figures would answer another question.",
    )


def names_not_found(analysis: QuestionPlan | None, sources: list[Citation]) -> Refusal | None:
    """The question names someone or something (a person, a product, a deal: plan.unread_names) that none of the
    retrieved passages mentions. The passages that match its other words are about something else, and a figure
    quoted from them ("sponsorship obligations of $3.1 billion" for what one team was paid) would
    answer another question. A name is written alike in the question and the filing, unlike the ordinary words a
    question may put differently, so its absence says the filings do not discuss it."""
    if analysis is None or not sources:
        return None
    vocab = passage_words(sources)
    # An abbreviation ("DOJ", "FTC") may be spelled out in the filing ("Department of Justice"): only names
    # written in words count.
    named = list(dict.fromkeys(name for name in analysis.unread_names
                               if len(name) >= 3 and any(ch.islower() for ch in name) and tokens(name)))
    absent = [name for name in named if not all(is_covered(w, vocab) for w in tokens(name))]
    # One name among several the passages do mention ("the fine under <a named act> over <product>
    # bundling ... what did <a regulator's city> order") is one word of the question, not what it is about.
    if not absent or len(absent) * 2 < len(named):
        return None
    names = ", ".join(f"'{n}'" for n in dict.fromkeys(absent))
    return Refusal(
        "name_not_found",
        f"The indexed filings do not appear to answer this: the question names {names}, which none of the "
        f"{len(sources)} retrieved passages mentions, so the passages that match its other words are about "
        "something else. Nothing is cited, to avoid quoting figures that answer another question. Check the "
        "spelling, or that the right filings are indexed.",
    )


# One named company paying another ("how much did <A> pay <B>", "what did <B> receive from <A>"): the words between
# the two names, the payer's first.
# (rag/data/lexicon.toml's paid_to and paid_from).
_PAID_TO = PhraseList("paid_to")
_PAID_FROM = PhraseList("paid_from")
_AMOUNT_ASKED = PhraseList("amount_asked")


def _says(phrases: PhraseList, between: str) -> bool:
    """Do the words between two companies' names read one of the phrases, the first name's possessive aside?"""
    between = between.removeprefix("'s").removeprefix("’s")
    return between[:1].isspace() and between[-1:].isspace() and bool(phrases.fullmatch(between.strip()))


def payment_not_stated(analysis: QuestionPlan | None, sources: list[Citation]) -> Refusal | None:
    """An amount one named company paid another ("how much did <A> pay <B> under their deal") that no retrieved
    passage states beside the other's name: filers disclose such payments in aggregate (a cost line, a revenue
    line) or not at all, and a figure quoted from the passages that share the question's words (a commitment, a
    total of many such deals) would answer another question."""
    if analysis is None or len(set(analysis.tickers)) < 2 or not sources:
        return None
    question = analysis.question or ""
    if not _AMOUNT_ASKED.search(question):
        return None
    named = sorted((start, end, ticker) for start, end, dimension, ticker in analysis.spans if dimension == "ticker")
    pair = next(((first, second) for first, second in zip(named, named[1:])
                 if first[2] != second[2] and (_says(_PAID_TO, question[first[1]:second[0]])
                                               or _says(_PAID_FROM, question[first[1]:second[0]]))), None)
    if pair is None:
        return None
    names = {ticker: question[start:end] for start, end, ticker in pair}
    # A filing names the other company in full or by the first word of its name, capitalised ("<Name> Motors" is
    # "<Name>" in the other's filing).
    patterns = {ticker: re.compile(r"(?i:\b" + re.escape(name) + r"\b)|\b" + re.escape(name.split()[0].capitalize())
                                   + r"\b") for ticker, name in names.items()}
    for c in sources:
        others = [pattern for ticker, pattern in patterns.items() if ticker != c.ticker]
        for u in quotable_units(c):
            if any(p.search(u.text) for p in others) and any(n.money for n in parse_numbers(u.text)):
                return None
    payer, payee = (pair[0], pair[1]) if _says(_PAID_TO, question[pair[0][1]:pair[1][0]]) else (pair[1], pair[0])
    return Refusal(
        "payment_not_stated",
        f"The indexed filings do not appear to state how much {names[payer[2]]} paid {names[payee[2]]}: none of the "
        f"{len(sources)} passages retrieved gives an amount beside the other company's name. Companies usually "
        "report such payments only within larger totals, if at all. Nothing is cited, since the amounts in those "
        "passages belong to other arrangements or to totals.",
    )


def check_refusal(
    question: str, analysis: QuestionPlan | None = None, filters: Filters | None = None, *, audience: str = "app"
) -> Refusal | None:
    """A refusal decided from the question alone (no LLM), or None: what the intent model (rag.intent) reads as
    investment advice, market data, a forecast or something unrelated to filings, a fiscal year no report can have
    reached yet, and companies that are not indexed. `audience` ("app" or "cli") picks the wording of where to add
    filings. `filters` (what retrieval applied) only keeps a short follow-up about chosen companies from looking
    unrelated."""
    q = " ".join((question or "").split())
    if not q:
        return Refusal("off_topic", "Please type a question about the indexed filings.")
    intent = analysis.intent if analysis else None
    refused_as = intent.refused_as if intent else None
    if refused_as == "advice":
        return Refusal(
            "advice",
            "I can't answer this: it asks for investment advice or a judgement on a stock (whether to buy, sell or "
            "hold, what it is worth, or which will do better). SEC filings report facts about the company, not "
            "recommendations, and this app gives none. Ask what the filings report instead, for example revenue, "
            "margins, cash flow or the risks the company describes.",
        )
    # Market data is what no filing reports: a question naming a figure the facts vocabulary knows (dividends per
    # share, a segment's revenue) asks for a reported one, whatever the model makes of its wording.
    if refused_as == "market_data" and not (analysis and any(not m.vetoed for m in analysis.metrics)):
        return Refusal(
            "market_data",
            "I can't answer this from the filings: stock prices, price movements, valuation multiples and other "
            "market data are not part of 10-K / 10-Q filings (they come from a market-data service). Ask about "
            "what the filings report, for example results, share repurchases or dividends declared.",
        )
    future_years = _future_years(q)
    # A year no report can have reached is a forecast unless the model reads the question as one the filings
    # answer (a debt maturity, an obligation's schedule, what the company says it expects).
    if refused_as == "forecast" or (future_years and (intent is None or intent.in_scope < 0.5)):
        when = f" ({', '.join(map(str, future_years))} has not been reported)" if future_years else ""
        return Refusal(
            "forecast",
            f"I can't answer this: it asks for a prediction of the future{when}. 10-K and 10-Q filings report past "
            "results and what the company itself says it expects; they cannot tell what will happen. You can ask "
            "what a filing says about the outlook (e.g. \"What does the company expect for capital expenditures?\") "
            "or about reported results.",
        )
    unknown = _unknown_companies(analysis)
    if unknown and not analysis.tickers:  # with an indexed company named too, the answer covers that one
        names = ", ".join(dict.fromkeys(unknown))
        plural = len(set(unknown)) > 1
        return Refusal(
            "unknown_company",
            f"The indexed filings do not include {names}, so I can't answer about {'them' if plural else 'it'} "
            f"without guessing. {add_filings_hint(audience, 'their' if plural else 'its')}, then ask again.",
        )
    ambiguous = analysis.ambiguous_companies if analysis else {}
    if ambiguous and not analysis.tickers and not (filters and filters.tickers):
        said = "; ".join(f"“{name}” could be {' or '.join(tickers)}" for name, tickers in ambiguous.items())
        return Refusal(
            "ambiguous_company",
            f"Several indexed companies go by that name: {said}. Which one do you mean? Ask again with its full "
            "name or its ticker, or choose the company as a filter.",
        )
    which = analysis.which_company if analysis else {}
    if which and not analysis.tickers and not (filters and filters.tickers):
        listed = ", ".join(f"{name} ({ticker})" if name and name != ticker else ticker for ticker, name in which.items())
        return Refusal(
            "which_company",
            f"The question names no company, and {len(which)} are indexed, so I would be guessing whose "
            f"{'filing' if analysis.whole_item else 'figure'} you mean. Which company? Choose one, or ask again "
            f"with its name or ticker: {listed}.",
        )
    # Something unrelated, unless the question names what filings hold (a company, an Item, a form) or asks
    # within companies chosen as filters: "can a storm hurt <company>'s sales" is a risk factor.
    about_filings = bool(analysis and (analysis.tickers or analysis.sections or analysis.forms)) or bool(
        filters and filters.tickers)
    if refused_as == "off_topic" and not about_filings:
        return Refusal(
            "off_topic",
            "This question does not seem to be about the indexed SEC filings, so I can't answer it from them. "
            "Ask about what a company's 10-K or 10-Q reports: results, segments, risks, management, and so on.",
        )
    return None


def _unknown_companies(analysis: QuestionPlan | None) -> list[str]:
    return list(dict.fromkeys(c.strip() for c in (analysis.unknown_companies if analysis else []) if c and c.strip()))


def partial_company_note(analysis: QuestionPlan | None) -> str | None:
    """When the question names indexed companies and others that are not indexed (or a name the analysis took
    for a company), the answer covers the indexed ones and says so first."""
    unknown = _unknown_companies(analysis)
    if not unknown or not analysis or not analysis.tickers:
        return None
    return (f"Note: the indexed filings do not include {', '.join(unknown)}; this answer covers only "
            f"{', '.join(analysis.tickers)}.\n\n")


# ---- a model's own "not found": a refusal only when it is the whole answer

_NOT_FOUND = PhraseList("not_found")


def not_found_sentences(text: str) -> tuple[list[str], list[str]]:
    """(the sentences of a model's answer that say the sources do not hold something, the other sentences); both
    empty when none says so (the text is then not split at all). A sentence is read with its citation markers; the
    phrasings are data (`not_found` in rag/data/lexicon.toml)."""
    anywhere = _NOT_FOUND.search((text or "").lower())
    if anywhere is None:
        return [], []
    sentences = [s for line in (text or "").splitlines() for s in split_sentences(line.strip())]
    said = [s for s in sentences if _NOT_FOUND.search(s.lower()) is not None]
    return said, [s for s in sentences if all(s is not n for n in said)]


def states_content(sentence: str) -> bool:
    """Does a sentence cite a source or state a figure (what makes an answer more than its not-found sentence)?"""
    return CITATION_MARKER.search(sentence) is not None or bool(answer_figures(sentence))


def _is_whole(said: list[str], rest: list[str]) -> bool:
    return bool(said) and not any(states_content(s) for s in rest)


def whole_refusal(text: str) -> bool:
    """Is the model's answer nothing but its not-found sentence ("The provided filings do not contain this
    information.")? Any other sentence that cites a source or states a figure makes it a partial answer, whose
    content stands."""
    return _is_whole(*not_found_sentences(text))


def partial_answer_warning(text: str) -> str | None:
    """The warning for an answer that answers part of the question and says what is missing, in its own words."""
    said, rest = not_found_sentences(text)
    if not said or not rest or _is_whole(said, rest):
        return None
    missing = " ".join(CITATION_MARKER.sub("", s).strip() for s in said)
    missing = missing if len(missing) <= 200 else missing[:197].rstrip() + "..."
    return f"The answer is partial: the model found only part of it in the passages, and says what is missing: " \
           f"\"{missing}\""
