"""The question, understood once: `plan_question(question, catalog)` -> QuestionPlan.

The plan holds everything the later stages need from the question's words: the companies it names (tickers, names,
short forms, proper nouns one company owns) and those it names that are not indexed, fiscal years, "latest", full
dates, forms, Items, statements, the figures it asks for (in the facts layer's vocabulary) and the calculation over
them. Retrieval turns the plan into filters, the facts layer answers from it, the refusals read it; none of them
reads the question again.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .catalog import STOP_CAPS, Catalog, find_companies, unknown_companies
from .companies import WORD_PATTERN
from .dates import FISCAL_YEAR_MENTION, dates_named, mentioned_year
from .facts import (
    CHANGE_WORDS,
    MONTH_WORDS,
    STOP_WORDS,
    deductions,
    exclusions,
    find_mentions,
    metric,
    metric_statements,
    normalize,
    plain_word,
)
from .item_topics import BUSINESS_WORDS, CUSTOMER_WORDS, HEADCOUNT_WORDS, ITEM_CONTENT, ITEM_TITLES, PRODUCT_WORDS
from .lexicon import word_set
from .named_parts import first_word, part_as_subject, parts_said, sources_after
from .parse.items import TENK_ITEMS, TENQ_ITEMS, section_scheme
from .periods import fiscal_year_of_date, read_periods
from .phrasing import PhraseList
from .schema import Calculation, MetricMention, QuestionPlan
from .words import GENERIC_TERMS, HEADCOUNT_NOUNS, tokens
from .words import STOP_WORDS as FUNCTION_WORDS

# A headcount asked in other words ("how many people", "the bigger headcount", "the size of its workforce") counts
# the persons employed as filings name them (HEADCOUNT_NOUNS): "31.4 million people" served is not a headcount.
_GENERIC_COUNT = {"people", "individuals"}
_SIZE_ASKED = PhraseList("size_asked")
_DEFINED_TERM = re.compile(r"^\s*(?i:what)\s+(?i:is|are)\s+([A-Z][\w&-]*(?:\s+[A-Z][\w&-]*)*)(?![\w'’])")
# "What kind of company is XYZ, and when did Acme buy it": the kind asked of a business beside the company
# named; the filer's own Item 1 describes only the filer, so that business is described elsewhere (where the
# filing tells of acquiring or investing in it).
_KIND_OF_NAMED = re.compile(r"\b(?:kind|type|sort)s?\s+of\s+(?:company|business)\s+(?:is|was|are|were)\s+"
                            r"(?:the\s+)?([A-Z][\w&.-]*)")
_ITEM_NUMBER = re.compile(r"\b(?:part\s+(i{1,2}|iv|iii)\s*[,.:;-]?\s*)?item\s+(1[0-6]|[1-9])([abc])?\b")
_STATEMENT_WORDS = [
    (r"\bincome\s+statements?\b|\bstatements?\s+of\s+(?:operations|income|earnings)\b|\bp\s*&\s*l\b|"
     r"\bprofit\s+and\s+loss\s+statement", "income statement"),
    (r"\bbalance\s+sheets?\b|\bstatements?\s+of\s+financial\s+position\b", "balance sheet"),
    (r"\bcash\s+flows?\s+statements?\b|\bstatements?\s+of\s+cash\s+flows?\b", "cash flow statement"),
]
_FORM_WORDS = [
    (r"\b10-?k\b|\bannual\s+report\b", "10-K"),
    (r"\b10-?q\b|\bquarterly\s+report\b|\bquarterly\b", "10-Q"),
]
_LATEST = re.compile(
    r"\b(?:latest|most\s+recent|last|current)\s+(?:full\s+)?(?:fiscal\s+)?(?:year|annual|10-?k|filing|report|fy)\b"
)
# "What weighed on ...", "what caused ...": a question whose subject is the cause asks for prose, unless the verb
# says an amount ("what remained under the program"); "how is Acme working off its inventory": an action under
# way, told in prose. Both forms hold for any verb, so no list of verbs is written here.
_CAUSE_OR_ACTION = (
    r"\bwhat\s+(?!(?:remained|totall?ed|amounted|exceeded)\b)\w{3,}ed\s+(?:on|in|to|up|down|off)?\b"
    # An irregular past tense too short for the rule above: "what led to", "what fed into".
    r"|\bwhat\s+(?:led|fed)\s+(?:to|in(?:to)?)\b"
    r"|\bhow\s+(?:is|are)\s+(?:[\w.&'’-]+\s+){1,4}?\w{3,}ing\b"
    # "What's behind the slump", "what lay behind its growth": the cause asked by where it sits.
    r"|\bwhat(?:['’]s|\s+is|\s+was|\s+were|\s+are|\s+lies|\s+lay)?\s+behind\b"
    # Whether something can happen ("Can bad weather hurt its sales?") is the risk factors' to say; "can you
    # give me ..." is only a polite way to ask.
    r"|^\s*(?:can|could|might|may)\s+(?!(?:you|u|i|we)\b)"
    # What a filing says or comments on about a topic ("what did it say about demand") is its prose on the topic.
    r"|\b(?:sa(?:y|ys|id)|comment(?:s|ed)?)\s+(?:about|on|regarding)\b"
)
_CAUSE_OR_ACTION_RE = re.compile(_CAUSE_OR_ACTION)
_EFFECT = PhraseList("effect")
_NARRATIVE_WORDS = PhraseList("narrative")
_PROSE_WORDS = PhraseList("prose_intent")


def _narrative(text: str) -> list:
    """Where the question asks about prose, quarters or adjusted figures (rag/data/lexicon.toml's narrative words),
    an effect on a figure, or a cause or an action: a consolidated annual fact does not answer it."""
    found = _NARRATIVE_WORDS.finditer(text) + _EFFECT.finditer(text) + list(_CAUSE_OR_ACTION_RE.finditer(text))
    return sorted(found, key=lambda m: m.start())


def _asks_prose(text: str) -> bool:
    """Does the question ask for prose about a figure rather than the figure ("what drove gross margin")?"""
    return bool(_PROSE_WORDS.search(text) or _EFFECT.search(text) or _CAUSE_OR_ACTION_RE.search(text))


# A part of the company (a segment, a region): its figure is a dimension member's, answered only when the question
# names a member the filing tags (rag.facts.members), never with the consolidated figure.
_PART_WORDS = PhraseList("part_words")
# Quarter words: a quarterly figure is the facts layer's when the plan reads the period (plan.periods or
# latest_quarters); otherwise the question is left to retrieval.
_QUARTER_WORDS = re.compile(r"\b(?:quarter\w*|q[1-4]|three\s+months|six\s+months|nine\s+months)\b")
# "How much of its revenue did it put into R&D" asks for a share as surely as "what share of".
_SHARE_OF = PhraseList("share_of")
# One line over another ("medical costs over premiums", "R&D divided by revenue") is a share too, unless it
# defines a computed metric the question names ("net margin, taking net income over net sales"); see
# rag/data/lexicon.toml's line_over_line for the "over" that is none.
_LINE_OVER_LINE = PhraseList("line_over_line")
# "The ratio of A to B", and the same written "A to B ratio" (a ratio an analyst names by its two lines); "led to a
# higher ratio" names no second line.
_RATIO_OF = re.compile(r"\bratio\s+(?:of|between)\b|"
                       r"\bto\s+(?!(?:a|an|the|its|their|our|this|that)\b)(?:[a-z][\w'’&-]*\s+){1,4}?ratios?\b")
# "The difference between A and B", "A minus B": the first less the second.
_DIFFERENCE = PhraseList("difference")
_COMPARED = PhraseList("compared")
# A count asked: the (up to five) words after "how many", the company's name left out ("how many <Company> class A
# holders of record"), name what is counted, unless they count money. They end
# where the question's verb or a preposition of place or time starts ("how many employees does it have", "how many
# stores in"); "of" stays inside what is counted ("holders of record").
_COUNT_ENDS = r"(?:do|does|did|is|are|was|were|has|have|had|will|would|can|could|may|might|must|should|in|at|for|on|by|to)\b"
_HOW_MANY = re.compile(r"\bhow\s+many\s+(?!times\b)(?:of\s+)?((?:(?!" + _COUNT_ENDS + r")[a-z][\w'’-]*\s+){0,6}(?!" + _COUNT_ENDS
                       + r")[a-z][\w'’-]*)")
# "Which has more holders of record", "the most stores": counts compared, asked without "how many"; the words
# after "more" name what is counted, as after "how many" (an amount compared, "more revenue", is a metric's).
_MORE_OF = re.compile(r"\b(?:more|fewer|most|fewest)\s+((?:(?!" + _COUNT_ENDS + r"|than\b)[a-z][\w'’-]*\s+){0,6}(?!"
                      + _COUNT_ENDS + r"|than\b)[a-z][\w'’-]*)")
# "The number of shareholders of record", "its number of stores": a count asked without "how many".
_NUMBER_OF = re.compile(r"\bnumber\s+of\s+((?:[a-z][\w'’-]*\s+){0,2}[a-z][\w'’-]*)")
# What such a count counts, read as after "how many" (see _HOW_MANY), up to the companies it is compared across.
_NUMBER_OF_COUNTED = re.compile(r"\bnumber\s+of\s+((?:(?!" + _COUNT_ENDS + r"|and\b|between\b|than\b)[a-z][\w'’-]*\s+)"
                                r"{0,6}(?!" + _COUNT_ENDS + r"|and\b|between\b|than\b)[a-z][\w'’-]*)")
# What money is counted in ("how many dollars", "how many millions"): no count of things.
_MONEY_COUNTED = word_set("money_counted")
# An amount asked: the (up to five) words between "how much" and the question's verb name what is measured ("how much
# free cash flow did it generate"), unless they only say it is money ("how much cash", "how much money in total").
# "How much of" asks for a share (see _SHARE_OF), "how much more" or "bigger" a difference, and a leading "in" only says
# the amount is money ("how much in dividends").
_HOW_MUCH = re.compile(r"\bhow\s+much\s+(?!of\b|more\b|less\b|fewer\b|[a-z]+er\b)(?:in\s+)?((?:(?!" + _COUNT_ENDS + r")[a-z][\w'’&-]*\s+){0,4}(?!"
                       + _COUNT_ENDS + r")[a-z][\w'’&-]*)\s+" + _COUNT_ENDS)
_ONLY_MONEY = word_set("only_money")
# A word written as a name: capitalised ("Model", "XYZ") or with a capital inside ("eWidget").
_NAME_WORD = re.compile(r"(?<![\w.'’-])(?:[A-Z][\w&'’.-]*|[a-z]+[A-Z][\w&-]*)")
# The titles of the financial statements and of a filing's parts, which questions capitalise: they say where a
# figure is printed, not which part of the company it is.
_TITLE_WORDS = {
    "consolidated", "statement", "statements", "balance", "sheet", "sheets", "operations", "income", "earnings",
    "comprehensive", "cash", "flows", "flow", "equity", "shareholders", "stockholders", "financial", "position",
    "management's", "discussion", "analysis", "results", "condition", "risk", "factors", "business", "properties",
    "legal", "proceedings", "market", "selected", "data", "supplementary", "quarterly", "md&a", "10-k", "10-q",
}
# Reporting abbreviations and accounting standards ("FYE May 31", "under ASC 606", "non-GAAP"): they say how a figure
# is reported, not which part of the company it is.
_REPORTING_TERMS = {"fye", "ye", "asc", "asu", "ifrs", "gaap", "non-gaap", "ttm", "ltm", "yoy", "usd", "eps"}
_RANKS = PhraseList("ranks")
_BY_HOW_MUCH = PhraseList("by_how_much")
# The period before, as a comparison names it: "compared with a year earlier / the prior year / last year's".
_PRIOR_PERIOD = re.compile(r"\b(?:(?:a|the)\s+year\s+(?:earlier|ago|before)|(?:the\s+)?(?:prior|previous|preceding)\s+"
                           r"(?:fiscal\s+)?(?:year|quarter|period)|last\s+year)\b")
# A year named relative to the latest one, with no year given: "the prior fiscal year", "the year before", "two years
# ago". Not "last year", which names the latest year itself.
_YEARS_BACK = re.compile(r"\b(?:(?:the\s+)?(?:prior|previous|preceding)\s+(?:fiscal\s+)?year|(?:a|one)\s+year\s+(?:earlier|"
                         r"ago|before)|the\s+year\s+before|(two|2|three|3)\s+(?:fiscal\s+)?years\s+(?:ago|earlier|before|prior))\b")
# How many years "two years ago" / "two years before FY25" count back; one when no number is written.
_YEARS_COUNTED = {"two": 2, "2": 2, "three": 3, "3": 3}
# Years counted back from a year named right after ("the year before FY25"): see _fiscal_years.
_YEARS_BEFORE = re.compile(r"\b(?:the|a|one|(two|2|three|3))\s+(?:fiscal\s+)?years?\s+(?:before|prior\s+to|preceding)"
                           r"\s+(?:the\s+)?$")
_COMPOUND = PhraseList("compound")
_MULTIPLE = PhraseList("multiple")
_TOTAL = PhraseList("total")
_TOTAL_OVER = re.compile(r"\btotal\b.*\b(?:over|across)\b")
_FROM_TO = re.compile(
    r"\bfrom\s+(?:fiscal\s+(?:year\s+)?|fy\s*)?'?(\d{2,4})\b.{0,40}?\bto\s+(?:fiscal\s+(?:year\s+)?|fy\s*)?'?(\d{2,4})\b"
)
# ==============================================================================================================
# The plan


def plan_question(question: str, catalog: Catalog) -> QuestionPlan:
    """Everything the later stages need from the question's words, read once."""
    plan = QuestionPlan(question=question)
    low = question.lower()
    spans = find_companies(question, low, catalog, plan)
    plan.unknown_companies = unknown_companies(question, spans, catalog)
    plan.latest = bool(_LATEST.search(normalize(question)))
    plan.dates = [iso for _s, _e, iso in dates_named(question)]
    plan.fiscal_years = _fiscal_years(low, catalog, plan)
    _periods(low, catalog, plan)
    plan.forms = _forms(low, catalog, plan)
    norm = normalize(question)
    quarter_words = bool(_QUARTER_WORDS.search(norm))
    plan.names_part = bool(_PART_WORDS.search(norm))
    plan.annual = bool(plan.fiscal_years) and not (quarter_words or plan.periods or plan.latest_quarters
                                                   or "10-Q" in plan.forms)
    # A company named by the initials of its name ("A&B", "S&J") is no qualifier of a metric after it; a name that
    # runs on into a part ("<Brand> Cloud revenue") still may be.
    named = {w for start, end in spans for w in WORD_PATTERN.findall(low[start:end]) if "&" in w}
    plan.metrics = _without_restated_inputs(find_mentions(question, catalog.words | named))
    # The question with its metrics' own names blanked: a change word or an effect word inside one ("the effect of
    # exchange rate changes on cash", "how much did currency moves drag down its cash") asks for that figure, not
    # for a change or for prose.
    named = "".join(" " if any(m.start <= i < m.end for m in plan.metrics if not m.vetoed) else ch
                    for i, ch in enumerate(norm))
    plan.narrative_words = [m.group(0) for m in _narrative(named)]
    plan.prose_intent = _asks_prose(named)
    if quarter_words and not (plan.periods or plan.latest_quarters):
        plan.narrative_words += [m.group(0) for m in _QUARTER_WORDS.finditer(norm)]
    defines = any(metric(m.metric_key).derive for m in plan.metrics)
    # A hypothetical change is the premise of a sensitivity (Item 305's "a hypothetical 10% adverse change", "a
    # 100 basis point increase in rates"), not a change the question asks the figure's.
    premise = _blanked(named, _HYPOTHETICAL.finditer(named))
    plan.calculation = replace(_calculation(norm, defines), growth=_calculation(premise).growth)
    if plan.calculation.multiple and len(plan.fiscal_years) >= 2:  # one figure's years: the later over the earlier
        plan.calculation = replace(plan.calculation, growth=True)
    back = _YEARS_BACK.search(norm)
    if back and not (plan.calculation.growth or plan.calculation.compares):
        years_back = _YEARS_COUNTED.get(back.group(1) or "", 1)
        if not plan.fiscal_years:
            plan.years_back = years_back
        elif plan.document_years and set(plan.fiscal_years) == set(plan.document_years):
            # "Looking at its FY25 10-K, what was capex in the prior year": the year before the report's own.
            plan.fiscal_years = [y - years_back for y in plan.document_years]
    for start, end, words in exclusions(norm, figure_asked=any(not m.vetoed for m in plan.metrics)):
        plan.excluded.append(words)
        plan.spans.append((start, end, "excluded", words))
    for start, end, words in deductions(norm):
        plan.deducted.append(words)
        plan.spans.append((start, end, "deducted", words))
    per_start, per_end, plan.per_item = _per_item(norm, plan.metrics, catalog.words)
    if plan.per_item:
        # The item's own words ask nothing of their own: "per adjusted claim" is no adjusted figure.
        inside = {m.group(0) for m in _narrative(norm) if per_start <= m.start() < per_end}
        plan.narrative_words = [w for w in plan.narrative_words if w not in inside]
    plan.unread_names = _unread_names(question, plan, catalog)
    plan.name_phrases = _name_phrases(question, plan.unread_names)
    plan.follow_ups = follow_ups(question)
    plan.counted = _counted(norm, plan, catalog)
    number_of = _NUMBER_OF.search(norm)
    plan.number_of = number_of.group(1).split() if number_of else []
    amount = _HOW_MUCH.search(norm)
    if amount and not set(amount.group(1).split()) <= _ONLY_MONEY:
        plan.amount_named = amount.span(1)
    _amount_margin(norm, plan)
    plan.share_part = _share_part(norm, plan, catalog)
    plan.source_part = _source_part(norm, plan, catalog)
    if _asks_what_is_left(plan, norm):
        plan.calculation = replace(plan.calculation, share_of_end=None, amount_of=False)
    plan.year_of_company = _year_of_company(question, plan, catalog)
    plan.statements = _statements(low, plan.prose_intent, plan.metrics)
    plan.sections = _sections(low, plan, catalog)
    if not plan.sections:
        _topic_items(question, low, plan, spans, catalog)
    plan.whole_item = _whole_item(plan)
    if HEADCOUNT_WORDS in plan.topic_words and (plan.calculation.ranks or _SIZE_ASKED.search(norm)) and (
            not plan.counted or _GENERIC_COUNT & set(plan.counted)):
        plan.counted = list(HEADCOUNT_NOUNS)
    return plan


# A figure asked per item: "per" and the words naming the item, up to the first word that names none (a
# preposition, a verb, a year). "Percent" is not one.
_PER = re.compile(r"\bper\s+(?!cent\b)")
_ITEM_WORD = re.compile(r"[a-z][a-z'-]*")


def _counted(norm: str, plan: QuestionPlan, catalog: Catalog) -> list[str]:
    """plan.counted: what a count asked counts, in the question's words without the company's name, read after
    "how many"; else after "more" or "most" when no metric is compared ("which has more holders of record"); else
    after "the number of" when companies are compared ("compare the number of holders of record at <A> and <B>";
    one company's number over years keeps its words for retrieval alone, plan.number_of). [] when none, or when
    what is counted is money."""
    found = [_HOW_MANY.search(norm)]
    if not plan.metrics:
        found += [_MORE_OF.search(norm)] + ([_NUMBER_OF_COUNTED.search(norm)] if len(plan.tickers) >= 2 else [])
    for m in found:
        if m and m.group(1).split()[0] not in _MONEY_COUNTED:
            words = [w for w in m.group(1).split() if w.removesuffix("'s").removesuffix("’s") not in catalog.words]
            if words:
                return words[:5]
    return []


def _per_item(norm: str, metrics: list[MetricMention], company_words: set[str]) -> tuple[int, int, list[str]]:
    """plan.per_item, with the span of its words: the item the question asks a figure per, outside the metric
    phrases that hold their own "per" ("earnings per share"). "Per" before a company's name says whose account
    is read ("per Acme's fiscal 2025 10-K"), not what a figure is divided by."""
    for m in _PER.finditer(norm):
        if any(mt.start <= m.start() < mt.end for mt in metrics):
            continue
        following = WORD_PATTERN.findall(norm[m.end():m.end() + 40])
        if following and following[0].removesuffix("'s").removesuffix("’s") in company_words:
            continue
        words, end = [], m.end()
        for w in re.finditer(r"\S+", norm[m.end():]):
            word = _ITEM_WORD.fullmatch(w.group().rstrip("?.,;:!)"))
            if word is None or word.group() in FUNCTION_WORDS or len(words) == 4:
                break
            words.append(word.group())
            end = m.end() + w.start() + len(word.group())
            if w.group() != word.group():
                break  # punctuation ends the item
        if words:
            return m.end(), end, words
    return 0, 0, []


def _unread_names(question: str, plan: QuestionPlan, catalog: Catalog) -> list[str]:
    """plan.unread_names: the question's words written as names that no other reading of the plan took, leaving
    out each sentence's first word, the words questions capitalise anyway, months, and the companies' own words."""
    taken = [(start, end) for start, end, _dimension, _value in plan.spans]
    taken += [(m.start, m.end) for m in plan.metrics]
    out: list[str] = []
    for m in _NAME_WORD.finditer(question):
        if any(start <= m.start() < end for start, end in taken):
            continue
        if not question[:m.start()].strip() or question[:m.start()].rstrip()[-1] in ".?!:":
            continue  # a sentence's first word
        word = re.sub(r"(?:'s|’s|'|’)$", "", m.group())
        word = word if word in STOP_CAPS else word.rstrip(".,;:")
        # A name joined to an ordinary word ("US-sourced", "EU-based") is the name alone; the word describes it.
        word = re.sub(r"(?<=[A-Za-z])-[a-z][\w-]*$", "", word)
        low = normalize(word)
        if word in STOP_CAPS or not re.search(r"[a-z]", low) or low in catalog.words or low in STOP_WORDS or (
                low in _TITLE_WORDS or low in _REPORTING_TERMS or low in MONTH_WORDS):
            continue  # a month, spelt out or abbreviated ("Dec 31, 2024"), names a date, not a thing
        out.append(word)
    return out


# A class or series of the filer's stock ("Class A", "Series B-1"): its capital structure, printed on the cover,
# in Item 5 and through the equity notes alike, so it singles out no passage the way a product's name does.
_SHARE_CLASS = re.compile(r"^(?:Class|Series)\s+[A-Z0-9]{1,2}(?:-\d)?$")


# A second question joined to the first by a comma or semicolon and "and" (or by nothing but the semicolon, or after
# a question mark): one of rag/data/lexicon.toml's question openers opens it ("..., and how does that affect ...",
# "...; what reserve ...").
_FOLLOW_UP_JOIN = re.compile(r"[,;]\s*and\s+|;\s*|\?\s+(?:and\s+)?", re.I)
_QUESTION_OPENERS = word_set("question_openers")
# "and why did it sell it?" names nothing of its own to search (its one word, "sell", is the first question's
# subject again): a later question is searched only when it holds this many words beyond function words.
_FOLLOW_UP_MIN_WORDS = 2


def follow_ups(question: str) -> list[str]:
    """The later questions of a compound question, as written (see QuestionPlan.follow_ups)."""
    question = question or ""
    joins = [m.span() for m in _FOLLOW_UP_JOIN.finditer(question) if _opens_question(question, m.end())]
    pieces = [question[end:start].strip(" ,;") for (_, end), (start, _) in zip(joins, joins[1:] + [(len(question), 0)])]
    return [p for p in pieces
            if sum(1 for w in re.findall(r"[a-z][\w'-]*", p.lower()) if w not in FUNCTION_WORDS) >= _FOLLOW_UP_MIN_WORDS]


def _opens_question(text: str, at: int) -> bool:
    return first_word(text, at).lower() in _QUESTION_OPENERS


def _name_phrases(question: str, unread: list[str]) -> list[str]:
    """plan.name_phrases: names of two or more capitalised words in a row ("Future Labs", "Acme Direct",
    "Risk Insight Pro") holding a word the plan reads as nothing else. The question words that open a
    run ("Does", "The") are not the name's; a possessive or a punctuation mark ends it ("Acme's Widget" is two
    names)."""
    phrases: list[str] = []
    run: list[re.Match] = []

    def close() -> None:
        words = list(run)
        while words and words[0].group() in STOP_CAPS:
            words.pop(0)
        names = [re.sub(r"(?:'s|’s|'|’)$", "", w.group()).rstrip(".,;:") for w in words]
        if len(names) >= 2 and any(n in unread for n in names) and not _SHARE_CLASS.match(" ".join(names)):
            phrases.append(" ".join(names))
        run.clear()

    for m in _NAME_WORD.finditer(question):
        if run and (question[run[-1].end():m.start()] != " " or re.search(r"(?:'s|’s|[.,;:])$", run[-1].group())):
            close()
        run.append(m)
    if run:
        close()
    return list(dict.fromkeys(phrases))


def _topic_items(question: str, low: str, plan: QuestionPlan, company_spans: list[tuple[int, int]],
                 catalog: Catalog) -> None:
    """plan.topic_sections and plan.topic_words: the Items whose required content the question asks about, and the
    regulation's words for that content."""
    asks_figure = plan.asks_figure
    # Only beside a company the question does name: alone, the name may be the filer's own in words the
    # catalog does not know.
    other = [m for m in _KIND_OF_NAMED.finditer(question)
             if company_spans and not any(start <= m.start(1) < end for start, end in company_spans)]
    found = [(f"Item {n}", words) for pattern, n, words in ITEM_CONTENT
             if any(not (n == "2" and _named_part(question, m)) for m in re.finditer(pattern, low))
             and not (words == BUSINESS_WORDS and (asks_figure or other))
             and not (words == CUSTOMER_WORDS and asks_figure)]
    term = _DEFINED_TERM.match(question)
    # A brand or product the catalog learned from one company's text names that company too ("What is <brand>?"),
    # but it is still a term that company's Item 1 describes; only the company's own name is no such term.
    own_names = [(start, end) for start, end in company_spans if catalog.is_own_name(question[start:end])]
    if term and not asks_figure and not any(
            start < term.end(1) and term.start(1) < end for start, end in own_names):
        found.append(("Item 1", PRODUCT_WORDS))
    plan.topic_sections = list(dict.fromkeys(item for item, _words in found))
    plan.topic_words = list(dict.fromkeys(words for _item, words in found))


def _item_title(section: str) -> str:
    """The SEC's title of an Item as the plan labels it: "Item 1A" of Form 10-K, "Part II Item 1A" of Form 10-Q."""
    labels, titles, _ranks = section_scheme("10-Q" if section.startswith("Part ") else "10-K")
    return dict(zip(labels, titles)).get(section, "")


def _whole_item(plan: QuestionPlan) -> str:
    """plan.whole_item: the one Item a question in prose is about, when it says nothing else: its words, past the
    company, year, period and form it names, are all the Item's title's, the regulation's words for what the Item
    discloses (plan.topic_words) or generic ones ("What are the main risk factors?", "What are Acme's key
    risks?"). A question with words of its own ("what supply risks does Acme name") is about those."""
    items = set(plan.sections or plan.topic_sections)
    if not plan.prose_intent or plan.asks_figure or len(items) != 1:
        return ""
    item = items.pop()
    allowed = set(tokens(" ".join([_item_title(item), *plan.topic_words]))) | GENERIC_TERMS
    rest = tokens(plan.question_without(lambda dimension, _v: dimension in ("ticker", "fiscal_year", "period", "form")))
    words = [t for t in rest if not t[0].isdigit() and len(t) > 2 and t not in allowed]
    return "" if words or not rest else item


def _named_part(question: str, m: re.Match) -> bool:
    """A facilities word written as a name inside the question ("Acme's Distribution Centers segment", "the Stores
    business"): every word capitalised, not opening the question. It names a segment or product line, not the
    company's properties (Item 2)."""
    written = question[m.start():m.end()]
    return m.start() > 0 and all(w[:1].isupper() for w in written.split())


# A year that names an annual report ("its fiscal 2024 10-K", "the 2025 annual report") rather than a period.
_NAMES_REPORT = re.compile(r"\s+(?:form\s+)?(?:10-?k|annual\s+report)\b")


# "Full-year 2025", "for the full year 2025": a company's whole fiscal year, as its annual report names it.
_WHOLE_YEAR_BEFORE = re.compile(r"\bfull[\s-]year\s+$")


def _fiscal_years(low: str, catalog: Catalog, plan: QuestionPlan) -> list[int]:
    """Years named ("2023", "FY23", "fiscal 2024"), a period-end date (the filing whose period ends then), or the
    latest indexed year when the question asks for the latest and names none."""
    years: list[int] = []
    date_spans = []
    for start, end, iso in dates_named(low):  # a date names a filing, or a fiscal year in the companies' calendar
        year = fiscal_year_of_date(iso, catalog.filings, plan.tickers)
        date_spans.append((start, end))  # kept in the search text: "as of January 31, 2025" is worded so in filings
        if year not in years:
            years.append(year)
    for m in FISCAL_YEAR_MENTION.finditer(low):
        if any(s <= m.start() < e for s, e in date_spans):
            continue
        year = mentioned_year(m)
        # "The year before FY25", "two years prior to fiscal 2025": the year asked counts back from the one named.
        before = _YEARS_BEFORE.search(low, 0, m.start())
        if before:
            year -= _YEARS_COUNTED.get(before.group(1) or "", 1)
        elif (m.group(1) and not m.group(0).startswith("ye") or _WHOLE_YEAR_BEFORE.search(low, 0, m.start())) \
                and year not in plan.fiscal_written:
            # "fiscal 2026", "FY26", "full-year 2025": a company's fiscal year; not "ye24", a year's end
            plan.fiscal_written.append(year)
        plan.spans.append((m.start(), m.end(), "fiscal_year", year))
        if _NAMES_REPORT.match(low, m.end()):
            plan.document_years.append(year)
        elif year not in years:
            years.append(year)
    years = _years_of_the_question_sentence(low, plan, years)
    # The annual report named as the source is also the year asked about when no other year is named.
    years += [y for y in plan.document_years if not years and y not in years]
    if not years and plan.latest:
        pool = plan.tickers or list(catalog.years_by_ticker)
        latest = [max(catalog.years_by_ticker[t]) for t in pool if catalog.years_by_ticker.get(t)]
        if plan.tickers:
            years = sorted(set(latest))
        elif latest:
            years = [max(latest)]
    return years


# Where a sentence ends: not after an abbreviation's single letters ("u.s.", "e.g.") or a company's suffix ("inc.").
_SENTENCE_END = re.compile(r"(?<![.\s][a-z])(?<!\binc)(?<!\bco)(?<!\bcorp)(?<!\bltd)[.!?]\s+(?=\S)")


def _years_of_the_question_sentence(low: str, plan: QuestionPlan, years: list[int]) -> list[int]:
    """A question that sets the scene in a sentence of its own before it asks ("Its tax rate fell sharply in fiscal
    2025. What was the rate the year before, in fiscal 2024?"): the years the asking sentence names are those asked,
    and a year only the scene names is not; both stay when the asking sentence compares or adds figures across
    years, or names no year."""
    ends = [m.end() for m in _SENTENCE_END.finditer(low.rstrip())]
    if not ends:
        return years
    last = low[ends[-1]:]
    calc = _calculation(last)
    if calc.growth or calc.compares or calc.difference or calc.ranks or calc.total or calc.total_over or calc.year_range:
        return years
    named = [year for start, _end, dimension, year in plan.spans if dimension == "fiscal_year" and start >= ends[-1]]
    asked = [y for y in years if y in named]
    return asked or years


def _periods(low: str, catalog: Catalog, plan: QuestionPlan) -> None:
    """Quarters, halves, year-to-date and trailing periods; a period without its own year takes the one fiscal
    year the question names (else the latest the index holds, resolved at retrieval)."""
    # A period-end date or month names the filing of the companies asked about (fiscal calendars differ).
    own = [f for f in catalog.filings if not plan.tickers or str(f.get("ticker") or "").upper() in plan.tickers]
    reading = read_periods(low, own)
    only_year = plan.fiscal_years[0] if len(plan.fiscal_years) == 1 else None
    plan.periods = [p if p.fiscal_year or only_year is None else replace(p, fiscal_year=only_year)
                    for p in reading.periods]
    plan.latest_quarters = reading.latest_quarters
    plan.spans.extend((start, end, "period", None) for start, end in reading.spans)
    for p in plan.periods:
        if p.fiscal_year and p.fiscal_year not in plan.fiscal_years:
            plan.fiscal_years.append(p.fiscal_year)


def _forms(low: str, catalog: Catalog, plan: QuestionPlan) -> list[str]:
    """Forms the question names, when the index holds filings of that form."""
    indexed = {f.get("form") for f in catalog.filings}
    out: list[str] = []
    for pattern, form in _FORM_WORDS:
        for m in re.finditer(pattern, low):
            if form not in indexed:
                break
            plan.spans.append((m.start(), m.end(), "form", form))
            if form not in out:
                out.append(form)
    return out


def _statements(low: str, prose_intent: bool, mentions: list[MetricMention]) -> list[str]:
    """The primary statements the question names; when it names none, those that print the figures it asks for
    ("days payable outstanding: accounts payable / COGS" -> balance sheet, income statement), in the order the
    question names the metrics. None for a question about prose (drivers, risks, policies), whose answer sits in
    MD&A or the notes."""
    named = []
    for pattern, statement in _STATEMENT_WORDS:
        if re.search(pattern, low) and statement not in named:
            named.append(statement)
    if named or prose_intent:
        return named
    out: list[str] = []
    for mention in mentions:
        if mention.vetoed:
            continue
        for name in metric_statements(metric(mention.metric_key)):
            if name not in out:
                out.append(name)
    return out


def _sections(low: str, plan: QuestionPlan, catalog: Catalog) -> list[str]:
    """The Items the question names, as each form in scope labels them: a 10-K's "Item 3", a 10-Q's "Part II Item
    1". The forms in scope are those the question names or implies (a quarter is a 10-Q), else those indexed."""
    forms = set(plan.forms)
    if not forms and (any(p.quarter in (1, 2, 3) for p in plan.periods) or plan.latest_quarters):
        forms = {"10-Q"}
    if not forms:  # the forms indexed for the companies named (for any company when none is named)
        forms = {"10-Q" if "10-Q" in str(f.get("form") or "").upper() else "10-K" for f in catalog.filings
                 if not plan.tickers or str(f.get("ticker") or "").upper() in plan.tickers}
    tenk, tenq = "10-K" in forms or not forms, "10-Q" in forms
    out: list[str] = []

    def add(label: str) -> None:
        if label not in out:
            out.append(label)

    for m in _ITEM_NUMBER.finditer(low):
        part, number = (m.group(1) or "").upper(), m.group(2) + (m.group(3) or "").upper()
        if tenk and any(n == number for n, _ in TENK_ITEMS):
            add(f"Item {number}")
        for p, n, _title in TENQ_ITEMS if tenq else ():
            if n == number and part in ("", p):
                add(f"Part {p} Item {n}")
    for pattern, title in ITEM_TITLES:
        if re.search(pattern, low):
            for n, t in TENK_ITEMS if tenk else ():
                if t == title:
                    add(f"Item {n}")
            for p, n, t in TENQ_ITEMS if tenq else ():
                if t == title:
                    add(f"Part {p} Item {n}")
    return out


def _without_restated_inputs(mentions: list[MetricMention]) -> list[MetricMention]:
    """"What net margin did it earn, taking net earnings over sales?", "how many times did its operating income
    cover its interest expense?": a computed metric and the figures it is computed from, named before or after it
    as its definition. The computed line cites both inputs with their values; listing them again as figures of
    their own would read as further answers."""
    # A computed metric vetoed as no figure ("returned to shareholders through buybacks") defines nothing: the one
    # input it names is the figure asked.
    derived = [m for m in mentions if metric(m.metric_key).derive and not m.vetoed]
    if len(derived) != 1:
        return mentions
    inputs = set(metric(derived[0].metric_key).derive[1:])
    # A phrase vetoed as no figure ("cash" in "how much cash did it hand back") is none of the inputs either.
    rest = [m for m in mentions if m is not derived[0] and not m.vetoed]
    if rest and all(m.metric_key in inputs for m in rest):
        return [m for m in mentions if m is derived[0] or m.vetoed]
    return mentions


# What is left of a figure: "... did it have left", "... remains", "... still unused".
_REMAINDER = re.compile(r"\b(?:left|remain\w*|unused|outstanding)\b")


# "<amount> margin" ("operating cash flow margin", "SG&A margin"): the amount as a share of total revenue, which is
# what a margin is; one the metric vocabulary defines itself ("gross margin", "EBITDA margin") is read as that.
_MARGIN_AFTER = re.compile(r"\s+margins?\b")


def _amount_margin(norm: str, plan: QuestionPlan) -> None:
    """plan.metrics and plan.calculation for an amount asked as a margin: total revenue joins as the whole."""
    if plan.calculation.share_of_end is not None:
        return
    for mention in plan.metrics:
        after = _MARGIN_AFTER.match(norm, mention.end)
        asked = metric(mention.metric_key)
        if mention.vetoed or after is None or asked.kind != "money" or asked.period != "duration" or (
                mention.metric_key == "revenue"):
            continue
        plan.metrics = plan.metrics + [MetricMention("revenue", after.end(), after.end(), ["revenue"])]
        plan.calculation = replace(plan.calculation, share_of_end=after.end())
        return


def _asks_what_is_left(plan: QuestionPlan, norm: str) -> bool:
    """"How much of its buyback authorization did it have left": "how much of" one figure, then what is left of it,
    with no part of it named (no member, no source, nothing left out, no second figure): the remainder is the
    figure's own amount, not a share of it. A part said otherwise ("comes due within the next year") stays one."""
    asked = [m for m in plan.metrics if not m.vetoed]
    return (plan.calculation.amount_of and len(asked) == 1 and not asked[0].qualified and not plan.share_part
            and not plan.source_part and not plan.excluded and bool(_REMAINDER.search(norm, asked[0].end)))
# A hypothetical change is the premise of a sensitivity, not a change asked (rag/data/lexicon.toml).
_HYPOTHETICAL = PhraseList("hypothetical_change")


def _blanked(text: str, found) -> str:
    """The text with each found phrase written as spaces, so that offsets stay the text's."""
    chars = list(text)
    for m in found:
        chars[m.start():m.end()] = " " * (m.end() - m.start())
    return "".join(chars)


def _calculation(norm: str, defines_metric: bool = False) -> Calculation:
    """`defines_metric`: the question names a computed metric, which a line over another defines."""
    share = _SHARE_OF.search(norm) or (None if defines_metric else _LINE_OVER_LINE.search(norm))
    span = _FROM_TO.search(norm)
    year_range = None
    if span:
        first, last = (int(g) + (2000 if len(g) == 2 else 0) for g in span.groups())
        year_range = (first, last)
    compound = bool(_COMPOUND.search(norm))  # a compound rate is a change over the years as well
    return Calculation(
        growth=bool(CHANGE_WORDS.search(norm) or (_COMPARED.search(norm) and _PRIOR_PERIOD.search(norm))) or compound,
        compares=bool(_COMPARED.search(norm)),
        share_of_end=share.end() if share else None,
        amount_of=bool(share and share.group().startswith("how")),
        ratio=bool(_RATIO_OF.search(norm)),
        difference=bool(_DIFFERENCE.search(norm)),
        ranks=bool(_RANKS.search(norm) or _COMPARED.search(norm)),
        by_how_much=bool(_BY_HOW_MUCH.search(norm)),
        total=bool(_TOTAL.search(norm)),
        total_over=bool(_TOTAL_OVER.search(norm)),
        year_range=year_range,
        compound=compound,
        multiple=bool(_MULTIPLE.search(norm)),
    )


def _left_out_spans(plan: QuestionPlan) -> list[tuple[int, int]]:
    """Where the question's exclusions sit ("outside the U.S.", "other than from <product>")."""
    return [(start, end) for start, end, dimension, _v in plan.spans if dimension == "excluded"]


def _share_part(norm: str, plan: QuestionPlan, catalog: Catalog) -> MetricMention | None:
    """'What percentage of revenue came from <region>?': the part, as the whole's metric narrowed by the
    words after 'from' (or after 'was', or before 'accounted for what share': see rag.named_parts),
    resolved later to a dimension member, or not at all. Only for one metric asked, no change
    asked, and a metric that dimension members can narrow."""
    calc = plan.calculation
    distinct = {m.spec() for m in plan.metrics}
    if calc.share_of_end is None or calc.growth or len(distinct) != 1:
        return None
    whole = plan.metrics[0]
    if not metric(whole.metric_key).members:
        return None
    left_out = _left_out_spans(plan)
    # A part's name may hold a bracket ("Northern Europe (including Iceland)"): read without it, at the same places.
    unbracketed = re.sub(r"[()]", " ", norm)
    after = max(calc.share_of_end, whole.end)
    subject = part_as_subject(unbracketed)
    said = ([(0, *subject)] if subject else []) + sorted(
        parts_said(unbracketed, after),
        key=lambda found: found[1])
    for said_at, start, end in said:
        if any(left <= start < right for left, right in left_out):
            continue  # "came from outside the U.S.": the part is the whole less what is left out
        if re.search(r"\bnot\s*$", unbracketed[:said_at]):
            return None  # "was not from <product>": the rest of the whole, which no part named here is
        found = WORD_PATTERN.findall(unbracketed[start:end])
        while found and found[0] in ("the", "its", "their", "our", "a", "an"):
            found = found[1:]
        words = [plain_word(w) for w in found]
        if words and not all(w in STOP_WORDS or w in catalog.words or w in MONTH_WORDS or w.isdigit() for w in found):
            return MetricMention(whole.metric_key, start, end, list(whole.words), after=words)
    return None


# Where a figure is read or when, not what it comes from: "from its 10-K", "from the income statement", "from the
# prior year".
_NOT_A_SOURCE = {"filing", "filings", "report", "reports", "10-k", "10-q", "annual", "quarterly", "prior", "previous",
                 "last", "year", "years", "quarter", "quarters", "period", "periods", "xbrl", "data", "table", "note",
                 "notes", "page", "item", "section", "md&a"}


def _source_part(norm: str, plan: QuestionPlan, catalog: Catalog) -> list[str]:
    """plan.source_part: the words naming what a figure is asked as coming from ("how much revenue did it earn
    from data processing", "sales from wearables"), a part of the whole figure; [] when none. Not for a share,
    whose part is plan.share_part, and only after a metric that dimension members can narrow."""
    if plan.calculation.share_of_end is not None:
        return []
    # "Other than from <product>" leaves the source out (plan.excluded): what is asked is the rest of the figure.
    left_out = _left_out_spans(plan)
    for mention in plan.metrics:
        if mention.vetoed or not metric(mention.metric_key).members:
            continue
        span = next((span for said_at, *span in sources_after(norm, mention.end)
                     if not any(start <= said_at < end for start, end in left_out)), None)
        if span is None:
            continue
        found = WORD_PATTERN.findall(norm[span[0]:span[1]])
        if found and not all(w in STOP_WORDS or w in catalog.words or w in MONTH_WORDS or w.isdigit()
                             or w in _NOT_A_SOURCE or w in _TITLE_WORDS for w in found):
            return found
    return []


def _year_of_company(question: str, plan: QuestionPlan, catalog: Catalog) -> dict[str, int]:
    """'Acme (fiscal 2024) or Globex (fiscal 2025)': each company with the year named right after it, when
    every named company gets its own year. A date is read in the calendar of the company named before it."""
    if len(plan.tickers) < 2 or len(set(plan.fiscal_years)) != len(plan.tickers):
        return {}
    marks = [(start, dimension, value) for start, _end, dimension, value in plan.spans
             if dimension in ("ticker", "fiscal_year")]
    marks += [(start, "date", iso) for start, _end, iso in dates_named(question)]
    pairs: dict[str, int] = {}
    current = None
    for _, kind, value in sorted(marks):
        if kind == "ticker":
            current = value
        elif current is not None and current not in pairs:
            pairs[current] = value if kind == "fiscal_year" else fiscal_year_of_date(value, catalog.filings, [current])
    if set(pairs) == set(plan.tickers) and set(pairs.values()) == set(plan.fiscal_years):
        return pairs
    return {}
