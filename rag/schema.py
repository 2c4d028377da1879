"""The data that crosses stages: filters, the question plan, retrieval results, citations and answer results.

Everything above (index, facts, retrieve, answer, the engine, the UI) reads these types from here, so no stage
imports another only for a type. Imports nothing from rag but config.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: the UI imports this module without loading LlamaIndex
    from llama_index.core.schema import NodeWithScore

MODES = ("hybrid", "dense", "keyword")


@dataclass
class Filters:
    """Exact filters on the indexed chunks; an empty list means no filter on that field."""

    tickers: list[str] = field(default_factory=list)
    fiscal_years: list[int] = field(default_factory=list)
    forms: list[str] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)
    fiscal_periods: list[str] = field(default_factory=list)  # "Q1", "Q2", "Q3", "FY"


@dataclass
class MetricMention:
    """A figure the question asks for, in the facts layer's vocabulary: the metric's key, where its phrase sits in
    the (normalised) question, and the words that qualify it ("<product> revenue", "revenue from services")."""

    metric_key: str
    start: int
    end: int
    words: list[str]  # the metric phrase's words
    before: list[str] = field(default_factory=list)  # content words just before it (a qualifier)
    after: list[str] = field(default_factory=list)  # content words after "from/in/by ..." (a qualifier)
    excluded: list[str] = field(default_factory=list)  # words after "excluding"
    vetoed: bool = False  # the words right after the phrase give it another meaning: not this metric
    # "Current deferred revenue", "non-current lease liabilities": the portion of a balance named right before it,
    # "current" or "noncurrent"; empty when none.
    portion: str = ""

    @property
    def qualified(self) -> bool:
        return bool(self.before or self.after)

    def spec(self) -> tuple:
        return (self.metric_key, tuple(self.before), tuple(self.after))


@dataclass(frozen=True)
class PeriodAsk:
    """A fiscal period the question asks about. Fiscal, not calendar: a company's second quarter of fiscal 2026 may
    have ended in July 2025."""

    quarter: int | None  # 1-4; None for a whole fiscal year
    fiscal_year: int | None = None  # None: the latest the index holds
    months: int = 3  # the length asked: 3 the quarter alone, 6 or 9 the year to date, 12 a year or trailing year
    trailing: bool = False  # the twelve months ending with this quarter

    @property
    def fiscal_period(self) -> str:
        """The DocumentFiscalPeriodFocus of the filing that reports it: a 10-Q's "Q1".."Q3", or "FY" (the 10-K) for
        a fiscal year and for a fourth quarter, which is not filed on its own."""
        return f"Q{self.quarter}" if self.quarter in (1, 2, 3) else "FY"

    def label(self) -> str:
        """'Q2 FY2025', 'H1 FY2025' (six months), '9M FY2025', 'TTM to Q2 FY2025', 'FY2025'."""
        year = f" FY{self.fiscal_year}" if self.fiscal_year else ""
        if self.trailing:
            return f"TTM to Q{self.quarter}{year}" if self.quarter else f"TTM{year}"
        if self.quarter is None:
            return year.strip() or "FY"
        if self.months == 3:
            return f"Q{self.quarter}{year}"
        return ("H1" if self.months == 6 and self.quarter == 2 else f"{self.months}M") + year


@dataclass
class Calculation:
    """What the question asks to compute over its figures, read from its wording."""

    growth: bool = False  # change words: grew, increase, decline, year over year
    compares: bool = False  # "compared", "versus", "vs"
    share_of_end: int | None = None  # where "percentage / share / portion of" ends: the whole follows it
    amount_of: bool = False  # the share asked as "how much of": an amount of the part, as surely as its share
    ratio: bool = False  # "ratio of / between"
    difference: bool = False  # "difference between"
    ranks: bool = False  # which is larger or smaller, or by how much: "more", "fewer", "bigger", "the difference"
    by_how_much: bool = False  # "by how much did ...": an amount of change or effect, never a balance's level
    total: bool = False  # combined, sum, cumulative, in total
    total_over: bool = False  # "total ... over / across" (a sum when several years are asked)
    year_range: tuple[int, int] | None = None  # "from 2022 to 2024": first and last year
    compound: bool = False  # "compound annual growth rate", "CAGR": the yearly rate that compounds to the change
    multiple: bool = False  # "how many times", "by what multiple", "-fold": the later figure over the earlier


@dataclass(frozen=True)
class Intent:
    """What a question asks, as the intent model (rag.intent) reads it from labelled examples: `label` the most
    probable kind (figure, count, calculation, prose, list; advice, market_data, forecast, off_topic), `share` its
    probability, `in_scope` the probability that the filings can answer it, and `refused_as` the out-of-scope kind
    when that probability is too low to answer, else None."""

    label: str
    share: float
    in_scope: float
    refused_as: str | None = None


@dataclass
class QuestionPlan:
    """What the question asks, read once (rag.question.plan_question) and shared by retrieval, the facts layer and
    the refusals. Detected companies, years, forms and Items are applied as filters unless the user's own filters
    say otherwise."""

    question: str = ""
    tickers: list[str] = field(default_factory=list)
    # The fact store could not be read for this question (rag.engine): a figure read from the text is then not
    # said to be untagged, as nobody could tell.
    facts_unreadable: bool = False
    # The fiscal years the figures or passages asked about belong to.
    fiscal_years: list[int] = field(default_factory=list)
    # Those of them the question writes as fiscal years ("fiscal 2026", "FY26"), not as bare years ("2026", which may
    # be the calendar year a fiscal year's report is filed in).
    fiscal_written: list[int] = field(default_factory=list)
    # The fiscal years of the annual reports the question names as its source ("per its fiscal 2025 10-K, what
    # was net income in fiscal 2024": 2025 here, 2024 above): the filings to read, not the years asked about.
    document_years: list[int] = field(default_factory=list)
    forms: list[str] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)  # "Item 1A", "Item 7", ...
    # Names the question treats as a company that match no indexed filing (e.g. "Globex" with no GBX indexed).
    unknown_companies: list[str] = field(default_factory=list)
    # Names, as the question writes them, that several indexed filers go by ("Northwind" with Northwind Holdings and
    # Northwind Energy indexed) -> those filers' tickers: the question is asked back which one it means.
    ambiguous_companies: dict[str, list[str]] = field(default_factory=dict)
    # A figure question that names no company while several are indexed and no filter or earlier turn sets one:
    # when they are few, every one is asked (`tickers` holds them all and each one's figure is given); when they are
    # many, ticker -> company name of those to choose from, and the answer asks which one is meant.
    every_company: bool = False
    which_company: dict[str, str] = field(default_factory=dict)
    # Primary statements the question names ("income statement", "balance sheet", "cash flow statement"), or that
    # print the figures it asks for: their pages are searched as a list of their own, ranked first.
    statements: list[str] = field(default_factory=list)
    # 10-K Items whose required content the question asks about without naming an Item (Regulation S-K: the number
    # of employees in Item 1, the principal physical properties in Item 2, holders of record and what may yet be
    # repurchased in Item 5): their best passage per company joins the results, near the top.
    topic_sections: list[str] = field(default_factory=list)
    # The regulation's words for what those Items must disclose, as asked (rag.item_topics.ITEM_CONTENT): the Items'
    # passages are searched by them as well as by the question.
    topic_words: list[str] = field(default_factory=list)
    # The one Item a question in prose asks about as a whole ("What are the main risk factors?"): it says nothing
    # beyond the Item's title and what the regulation says the Item discloses. Answered by each company's outline of
    # that Item (its headlines), not by the sentences sharing the title's words. "" for any other question.
    whole_item: str = ""
    # Where each detection sits in the question: (start, end, dimension, value), dimension one of "ticker",
    # "fiscal_year", "form", "period" (its value None: `periods` holds what was read), "excluded" (the whole
    # phrase, "not counting cash"; its value the words ruled out), "deducted" (likewise, "before X is deducted"). Not part of the label.
    spans: list[tuple[int, int, str, object]] = field(default_factory=list, repr=False)
    # Fiscal periods asked for ("Q2 FY2025", "first half", "three months ended June 28, 2025"), in question order.
    periods: list[PeriodAsk] = field(default_factory=list)
    # "the latest quarter" (1), "the last four quarters" (4): the newest quarters the index holds per company.
    latest_quarters: int = 0
    # "the latest / most recent / last fiscal year": the newest indexed filing per company when no year is named.
    latest: bool = False
    # "The prior fiscal year" (1), "two years ago" (2), with no year named and nothing compared: that many years
    # before each company's latest indexed 10-K.
    years_back: int = 0
    # Full dates the question names ("as of September 28, 2024"), ISO, in question order.
    dates: list[str] = field(default_factory=list)
    # "Acme (fiscal 2024) or Globex (fiscal 2025)": each company with the one year named right after it, when
    # every named company has its own year; empty otherwise.
    year_of_company: dict[str, int] = field(default_factory=dict)
    # The figures asked for, in the facts layer's vocabulary, in question order (repeats included).
    metrics: list[MetricMention] = field(default_factory=list)
    # "What percentage of revenue came from <region>?": the part (the whole's metric narrowed by the words
    # after "from"), beside the whole in `metrics`.
    share_part: MetricMention | None = None
    # What a figure is asked as coming from, in the question's words ("revenue ... from data processing": "data",
    # "processing"): a part of the whole, whose figure is a member's or none. Empty when none.
    source_part: list[str] = field(default_factory=list)
    # The question names a fiscal year as a whole: no quarter, half, year to date or quarterly form. Its
    # document of record is the annual report, where the index holds one.
    annual: bool = False
    # The words that make the question ask about prose, quarters or adjusted figures rather than a consolidated
    # annual figure ("why", "customers", a quarter word no period was read from), in question order.
    narrative_words: list[str] = field(default_factory=list)
    # The question asks why or how a figure came about, or about risks, policies, drivers, guidance: an answer
    # told in prose (MD&A, risk factors, notes), not a table's figure.
    prose_intent: bool = False
    # The question names a part of the company (a segment, a region, a breakdown): the facts answer it only with a
    # dimension member the question names, never with the consolidated figure.
    names_part: bool = False
    calculation: Calculation = field(default_factory=lambda: Calculation())
    # "How many employees / holders of record": the words after "how many" up to the question's verb; empty when
    # the question counts nothing, or counts money ("how many dollars").
    counted: list[str] = field(default_factory=list)
    # "The number of shareholders of record": the (up to three) words after "number of", what a question counts
    # without saying "how many".
    number_of: list[str] = field(default_factory=list)
    # "How much favorable warranty adjustment did it book in cost of sales": the span (in the normalized question)
    # of the words between "how much" and the question's verb, which name the amount asked; None when there are
    # none ("how much did it spend on R&D") or they name money only ("how much cash", "how much money").
    amount_named: tuple[int, int] | None = None
    # The item a figure is asked per, in the question's words ("net sales per selling square foot": "selling square
    # foot"; "revenue per billed visit": "billed visit"): the figure is a rate, and the total it divides is no
    # answer. Empty when none; a per-share figure the metric vocabulary names (EPS, dividends per share) is not one.
    per_item: list[str] = field(default_factory=list)
    # What the question rules out of what it asks, in its own words ("not counting cash": "cash"; "excluding the
    # impact of foreign currency": "impact of foreign currency"): a passage about that alone is not the answer.
    excluded: list[str] = field(default_factory=list)
    # What the question says the figure asked is before, as taken off it ("revenue before client incentives are
    # deducted": "client incentives"): an adjustment, whose own line or passage is not the answer.
    deducted: list[str] = field(default_factory=list)
    # Capitalised words the plan reads as nothing else: no company, period, form, metric or exclusion ("Widget Pro",
    # "XYZ" in "how much revenue did its XYZ business contribute"). A name may be a part of the company that the
    # filing does not tag, so the company's total is no answer to it.
    unread_names: list[str] = field(default_factory=list)
    # Names of several capitalised words in a row holding an unread one ("Future Labs", "Acme Direct"): a
    # product, a program, a business bought, found by its words in a row.
    name_phrases: list[str] = field(default_factory=list)
    # The later questions of a compound one ("What does it say about the dispute, and what reserve does it carry?":
    # "what reserve does it carry"): each is searched as well, so the passage answering it is not outranked by
    # those that answer the first.
    follow_ups: list[str] = field(default_factory=list)
    # What the question intends, classified from labelled examples (rag.intent); None where no model read it.
    intent: Intent | None = None
    # A follow-up's plan merged with the conversation's (rag.followup): what came from the earlier turns, as the
    # label shows it ("ACME", "FY2024", "revenue"), and the dimensions ("ticker", "fiscal_year", "period", "form")
    # whose words in the question text belong to an earlier turn and were replaced by the follow-up's.
    carried: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    # A follow-up its conversation's plans could not complete, rewritten by the model into this standalone question
    # (rag.answer.condense), which the plan is read from; "" otherwise.
    rewritten: str = ""

    @property
    def narrative(self) -> bool:
        """The question asks about prose, quarters or adjusted figures: the facts layer leaves it to retrieval."""
        return bool(self.narrative_words)

    @property
    def asks_figure(self) -> bool:
        """The question asks for an amount, a count or a figure per item: its answer is a number, which tables
        print as often as sentences."""
        return bool(self.metrics or self.counted or self.per_item or self.number_of or self.amount_named
                    or re.search(r"\bhow\s+much\b", self.question.lower()))

    def question_without(self, drop) -> str:
        """The question with the detections `drop(dimension, value)` picks cut out (overlapping ones once), the
        pieces joined by a space: what is left once the words that became filters are set aside."""
        out, last = [], 0
        for start, end, dimension, value in sorted(self.spans):
            if start < last or not drop(dimension, value):
                continue
            out.append(self.question[last:start])
            last = end
        out.append(self.question[last:])
        return " ".join(out)

    def label(self) -> str:
        """'ACME · FY2024 · Item 8' for the UI; a follow-up's says what came from the conversation."""
        if self.periods:
            periods = [p.label() for p in self.periods]
            years = [f"FY{y}" for y in self.fiscal_years if not any(p.fiscal_year == y for p in self.periods)]
        else:
            periods = [f"latest {self.latest_quarters} quarters" if self.latest_quarters > 1 else "latest quarter"] \
                if self.latest_quarters else []
            years = [f"FY{y}" for y in self.fiscal_years]
        parts = list(self.tickers) + years + periods + list(self.forms) + list(self.sections)
        label = " · ".join(parts + list(self.statements))
        if self.every_company:  # 'ACME · BOLT · income statement (no company named: each indexed one)'
            label = f"{label} (no company named: each indexed one)"
        if self.carried:  # 'ACME · FY2023 · income statement (ACME · revenue, from the conversation)'
            label = f"{label} ({' · '.join(self.carried)}, from the conversation)".strip()
        if self.rewritten:  # 'ACME · FY2024 (asked as "...": the model's rewrite of the follow-up)'
            label = f"{label} (asked as \"{self.rewritten}\": the model's rewrite of the follow-up)".strip()
        return label

    def detected(self) -> dict:
        """What the question names, as an answer result reports it."""
        return {
            "tickers": list(self.tickers),
            "fiscal_years": list(self.fiscal_years),
            "forms": list(self.forms),
            "sections": list(self.sections),
            "periods": [p.label() for p in self.periods],
            "unknown_companies": list(self.unknown_companies),
            "carried": list(self.carried),
            "rewritten": self.rewritten,
            "every_company": self.every_company,
            "which_company": dict(self.which_company),
            "label": self.label(),
        }


EMPTY_DETECTED = QuestionPlan().detected()


@dataclass
class RetrievalResult:
    query: str
    mode: str
    # Each node's metadata holds: doc_id, ticker, company, form, fiscal_year, period_end, filing_date, accession,
    # section, section_title, page_start, page_end, char_start, char_end, source, url. node.node_id is the chunk id.
    nodes: list[NodeWithScore]
    plan: QuestionPlan
    filters: Filters  # what was actually applied
    retrieval_ms: float = 0.0
    generated_queries: list[str] = field(default_factory=list)  # what the LLM wrote, searched beside the question
    warnings: list[str] = field(default_factory=list)
    # Periods the question names that no indexed filing covers, per company ("ACME Q2 FY2025"): when nothing it asks
    # for is indexed, nothing is retrieved and the answer says which reports are missing.
    unavailable: list[str] = field(default_factory=list)
    # How many of `nodes` the Sources list shows (None: all). The rest were retrieved for the model to read.
    shown: int | None = None


@dataclass
class Citation:
    number: int
    chunk_id: str | None = None
    doc_id: str | None = None
    ticker: str | None = None
    company: str | None = None
    form: str | None = None
    fiscal_year: int | None = None
    section: str | None = None
    section_title: str | None = None
    page_start: int | None = None
    page_end: int | None = None
    score: float = 0.0
    text: str = ""
    char_start: int | None = None
    char_end: int | None = None
    source: str | None = None
    url: str | None = None
    # "chunk" (a retrieved passage), "fact" (an exact figure from the facts layer) or "passage" (a retrieved
    # passage the facts layer read an untagged figure from, such as a count stated in prose).
    kind: str = "chunk"
    # The filing's fiscal period: "Q1".."Q3" for a 10-Q, "FY" for an annual report; None when not recorded.
    fiscal_period: str | None = None
    # The filing's period end ("2025-06-30"), when recorded: a table's period heading is matched against it.
    period_end: str | None = None
    # The filing's EDGAR keys, when known: with both, the citation links to the filing on sec.gov.
    cik: str | None = None
    accession: str | None = None
    # The line of `text` that supports the answer (an exact figure's table row), for the panel to highlight.
    quote: str | None = None
    # A figure not read from XBRL data: where it was read instead ("the PDF's statement table"); None for XBRL.
    origin: str | None = None

    @classmethod
    def from_chunk(cls, number: int, chunk_id: str | None, text: str, meta: dict, *, score: float = 0.0,
                   kind: str = "chunk") -> "Citation":
        """The citation of an indexed chunk, from its id, text and metadata (values as stored, blanks as None)."""
        return cls(
            number=number, chunk_id=chunk_id, doc_id=_str_or_none(meta.get("doc_id")),
            ticker=_str_or_none(meta.get("ticker")), company=_str_or_none(meta.get("company")),
            form=_str_or_none(meta.get("form")), fiscal_year=_int_or_none(meta.get("fiscal_year")),
            # A chunk indexed before periods were recorded has none: its label shows the fiscal year alone.
            fiscal_period=_str_or_none(str(meta.get("fiscal_period") or "").strip().upper()),
            period_end=_str_or_none(meta.get("period_end")),
            section=_str_or_none(meta.get("section")), section_title=_str_or_none(meta.get("section_title")),
            page_start=_int_or_none(meta.get("page_start")), page_end=_int_or_none(meta.get("page_end")),
            score=score, text=text, char_start=_int_or_none(meta.get("char_start")),
            char_end=_int_or_none(meta.get("char_end")), source=_str_or_none(meta.get("source")),
            url=_str_or_none(meta.get("url")), kind=kind, cik=_str_or_none(meta.get("cik")),
            accession=_str_or_none(meta.get("accession")),
        )

    def label(self) -> str:
        """'Acme Inc. (ACME) · 10-Q · Q3 FY2025 · Part I Item 2 … · p. 21'"""
        label = citation_label(vars(self))
        return f"{label} · XBRL fact" if self.kind == "fact" else label


def _int_or_none(value) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _str_or_none(value) -> str | None:
    return None if value in (None, "") else str(value)


def citation_label(c: dict, *, page_dash: str = "-") -> str:
    """A citation's source as one line, from a Citation's fields or their saved dict:
    'Acme Inc. (ACME) · 10-K · FY2024 · Item 8 Financial Statements · p. 28-29',
    'Acme Inc. (ACME) · 10-Q · Q3 FY2025 · Part I Item 2 … · p. 21'."""
    who = c.get("company") or c.get("ticker") or "Unknown company"
    if c.get("company") and c.get("ticker"):
        who = f"{c['company']} ({c['ticker']})"
    parts = [who]
    if c.get("form"):
        parts.append(str(c["form"]))
    period = period_label(c.get("fiscal_year"), c.get("fiscal_period"))
    if period:
        parts.append(period)
    if c.get("section"):
        title = c.get("section_title")
        parts.append(f"{c['section']} {title}".strip() if title else str(c["section"]))
    pages = pages_label(c.get("page_start"), c.get("page_end"), page_dash)
    if pages:
        parts.append(pages)
    return " · ".join(parts)


QUARTERS = ("Q1", "Q2", "Q3", "Q4")


def period_label(fiscal_year, fiscal_period=None) -> str:
    """A filing's fiscal period as labels show it: 'Q3 FY2025' for a quarterly report, 'FY2025' for an annual
    one (period "FY") or when the period is not recorded (indexes built before periods were), '' for neither."""
    quarter = str(fiscal_period or "").strip().upper()
    quarter = quarter if quarter in QUARTERS else ""
    if fiscal_year in (None, "", 0):
        return quarter
    return f"{quarter} FY{fiscal_year}" if quarter else f"FY{fiscal_year}"


def pages_label(start, end, dash: str = "-") -> str:
    """'p. 5', 'p. 5-6' or '' (the UI passes an en dash)."""
    if start in (None, "") and end in (None, ""):
        return ""
    if end in (None, "") or end == start:
        return f"p. {start}"
    if start in (None, ""):
        return f"p. {end}"
    return f"p. {start}{dash}{end}"


@dataclass
class AnswerResult:
    question: str
    answer: str
    citations: list[Citation]  # only those the answer cites, numbered as in the text
    sources: list[Citation]  # every source that was given (to the model, or to the extractive answer)
    detected: dict  # what the question names: tickers, fiscal_years, forms, sections, unknown_companies, label
    mode: str  # the retrieval mode: hybrid / dense / keyword
    timings: dict  # retrieval_ms, first_token_ms, model_first_token_ms (the model's own first words), total_ms
    warnings: list[str] = field(default_factory=list)
    extractive: bool = False
    refused: bool = False
    cut: bool = False
    # Why a cut answer ended early: deadline (RAG_LLM_DEADLINE), stopped (by the user), connection, length
    cut_reason: str | None = None
    model: str | None = None  # the Ollama model that wrote the answer; None when extractive or refused
    # forecast / advice / market_data / unknown_company / ambiguous_company / which_company / off_topic / no_evidence
    refusal_reason: str | None = None
    unverified_figures: list[str] = field(default_factory=list)  # figures found in none of the cited sources
    generated_queries: list[str] = field(default_factory=list)  # search queries the LLM wrote for the question
    # Claim sentences of a model's answer whose cited sources share none of their content words (rag.answer.support)
    unsupported_claims: list[str] = field(default_factory=list)
    # The prompt sent to the model, estimated in tokens (characters / rag.answer.prompt.CHARS_PER_TOKEN); None when
    # no model was asked
    prompt_tokens: int | None = None
    # A follow-up the model rewrote into a standalone question (rag.answer.condense), as searched; None otherwise
    rewritten_question: str | None = None

    def to_dict(self) -> dict:
        return jsonable(asdict(self))


def jsonable(value: Any) -> Any:
    """A value made of JSON types only (numpy scalars unwrapped, non-finite floats as None)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if hasattr(value, "item"):  # numpy scalars
        try:
            return jsonable(value.item())
        except Exception:  # noqa: BLE001
            pass
    return str(value)
