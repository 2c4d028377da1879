"""The words of a question and of a passage, as the extractive answer compares them: stop words, stemming,
tokens, synonyms, the question's content terms, and which of them no retrieved passage holds.
"""

from __future__ import annotations

import re

from ..schema import Citation, QuestionPlan
from ..words import GENERIC_TERMS, HEADCOUNT_NOUNS, SPELLED_OUT, STOP_WORDS, TOKEN_RE, stem, tokens

__all__ = ["GENERIC_TERMS", "STOP_WORDS", "TOKEN_RE", "stem", "tokens"]  # re-exported: the answer package's callers use them here

# Plain words; keys are stemmed below, values go through tokens (which stems them).
_SYNONYMS_PLAIN = {
    # What an asset was written down by is booked as its impairment (ASC 350, 360).
    "write": ["impairment", "impaired"],
    "revenue": ["sales"],
    "sales": ["revenue"],
    "profit": ["income", "earnings"],
    "earnings": ["income", "profit"],
    "income": ["earnings", "profit"],
    # Regulation S-K Item 101(c)(2)(ii) asks for the "number of persons employed", and filings count them so, by
    # whatever noun the filer gives its people (HEADCOUNT_NOUNS: "associates", "colleagues").
    "employees": ["headcount", "workforce", "staff", "personnel", "people", *HEADCOUNT_NOUNS],
    "people": ["headcount", "workforce", "staff", *HEADCOUNT_NOUNS],
    "staff": ["headcount", "workforce", *HEADCOUNT_NOUNS],
    "workers": ["headcount", "workforce", *HEADCOUNT_NOUNS],
    "headcount": ["workforce", *HEADCOUNT_NOUNS],
    "workforce": ["headcount", *HEADCOUNT_NOUNS],
    "employer": ["headcount", "workforce", *HEADCOUNT_NOUNS],
    "ceo": ["chief executive officer"],
    "cfo": ["chief financial officer"],
    "work": ["employees", "employed"],
    "spend": ["cost", "expenses", "expenditures"],
    "spent": ["cost", "expenses", "expenditures"],
    "buyback": ["repurchase"],
    # How much something grew is printed as its growth.
    "grow": ["growth"],
    # What is left of a repurchase program: the SEC's issuer-purchases table (Reg. S-K Item 703) heads that column
    # "... that may yet be purchased under the plans or programs".
    "remain": ["may yet be purchased", "remaining", "available"],
    "left": ["may yet be purchased", "remaining", "available"],
    # A repurchase program's room ("buyback capacity") is what the board has authorized and not yet used.
    "capacity": ["authorized", "authorization"],
    "repurchase": ["buyback"],
    # Regulation S-K Item 201(b) asks for the number of "holders of record"; filings also write "stockholders of
    # record", "shareholders of record", "shareowners of record" and "registered shareholders".
    "holders": ["shareholders", "stockholders", "shareowners"],
    "record": ["registered"],
    "debt": ["borrowings", "notes"],
    "headquarters": ["principal executive offices"],
    # Regulation S-K Item 102 asks for the "location and general character" of the principal "plants" and other
    # "physical properties", and whether they are owned or leased: filings answer in those words.
    "sites": ["properties", "facilities", "plants", "locations"],
    "rent": ["lease", "leased"],
    # Suing is what filings describe as a lawsuit, a suit or a complaint filed.
    "sue": ["lawsuit", "suit", "complaint"],
    "sued": ["lawsuit", "suit", "complaint"],
    "suing": ["lawsuit", "suit", "complaint"],
}


# The short forms' spelled-out words count as the short form (rag.words.SPELLED_OUT).
SYNONYMS = {stem(k): v for k, v in (_SYNONYMS_PLAIN | SPELLED_OUT).items()}


def question_terms(question: str, sources: list[Citation], analysis: QuestionPlan | None, *,
                   topic_only: bool = False, regulation_words: bool = True) -> list[str]:
    """Terms of the question: not company names or tickers (retrieval already chose the companies). With
    `topic_only`, not the words the plan read as a period, year or form either (see topic_words). A question
    that says nothing beyond its company ("What does Acme do?") asks what the Items its topic points to must
    disclose: with `regulation_words`, the regulation's words for that content (QuestionPlan.topic_words) are
    its terms then."""
    names: set[str] = set()
    for c in sources:
        for value in (c.company, c.ticker):
            for t in tokens(value or ""):
                names.add(t)
    for t in (analysis.tickers if analysis else []):
        names.add(stem(t.lower()))
    names |= {"inc", "corp", "corporation", "co", "ltd", "plc", "holding", "group", "company"}
    if topic_only:
        text = topic_words(question, analysis)
    elif analysis is not None and analysis.question == question:
        # "Not counting cash": neither the words ruled out nor the phrase that rules them out are what to match.
        text = analysis.question_without(lambda dimension, _value: dimension == "excluded")
    else:
        text = question
    terms = []
    for t in tokens(text):
        if t in names or t in terms:
            continue
        terms.append(t)
    if regulation_words and analysis is not None and analysis.topic_words and not any(
            _says_something(t) for t in terms):
        terms += [t for t in dict.fromkeys(tokens(" ".join(analysis.topic_words))) if t not in names and t not in terms]
    return terms


def _says_something(term: str) -> bool:
    """A term that tells what a question is about: no figure, no generic word, no two-letter fragment."""
    return not (term[0].isdigit() or term in GENERIC_TERMS or len(term) < 3)


def topic_words(question: str, analysis: QuestionPlan | None) -> str:
    """The question without the words its plan read as filters: "the second quarter of fiscal 2026", "10-Q",
    "year to date" choose which filing and column answer, so a passage need not repeat them ("second", "alone"
    in "Q2 alone, not year to date" are not what the question is about), nor what it rules out ("not counting
    cash")."""
    if analysis is None or analysis.question != question:
        return question
    return analysis.question_without(lambda dimension, _value: dimension in ("period", "fiscal_year", "form",
                                                                             "excluded"))


_ORDINAL_WORDS = {1: "first", 2: "second", 3: "third", 4: "fourth"}
_LENGTH_WORDS = {6: "six months first half", 9: "nine months"}


def period_terms(analysis: QuestionPlan | None) -> list[str]:
    """The words filings print for the periods the plan read: a question's "Q2" is a table's "second quarter" or
    "three months ended", its "H1" the "six months ended" (10-Q tables and MD&A write periods out in words)."""
    words: list[str] = []
    for p in (analysis.periods if analysis else []):
        if p.trailing or p.quarter is None:
            continue
        if p.months == 3:
            words.append(f"{_ORDINAL_WORDS.get(p.quarter, '')} quarter three months")
        else:
            words.append(_LENGTH_WORDS.get(p.months, ""))
    return list(dict.fromkeys(tokens(" ".join(words))))


def weighted_synonyms(term: str) -> list[tuple[str, float]]:
    """The term and the words of its synonyms, with weights for scoring."""
    return [(term, 1.0)] + [(t, 0.7) for phrase in synonym_phrases(term)[1:] for t in phrase]


def synonym_phrases(term: str) -> list[tuple[str, ...]]:
    """The term and its synonyms as token tuples: ('ceo',), ('chief', 'executiv', 'officer')."""
    return [(term,)] + [tuple(tokens(syn)) for syn in SYNONYMS.get(term, []) if tokens(syn)]


# A verb in -ing with its particle ("working off", "paying down", "ramping up"): how the question phrases an action
# under way, which a filing tells in its own verbs ("liquidating inventory"). Not "back": "buying back" is a buyback.
_PHRASAL_ING = re.compile(r"\b(\w{3,}ing)\s+(?:off|down|through|out|up)\b", re.I)


def content_terms(question: str, sources: list[Citation], analysis: QuestionPlan | None, *,
                  regulation_words: bool = True) -> list[str]:
    """The question's words that say what it is about: no company names, figures, generic words, or the verb of
    a phrasal verb (see _PHRASAL_ING); for a question that says nothing beyond its company, the regulation's
    words for what its topic's Items disclose (see question_terms)."""
    phrasal = {stem(m.group(1)) for m in _PHRASAL_ING.finditer(question or "")}
    return [t for t in question_terms(question, sources, analysis, topic_only=True, regulation_words=regulation_words)
            if _says_something(t) and t not in phrasal]


def content_words(question: str, sources: list[Citation], analysis: QuestionPlan | None) -> list[tuple[str, ...]]:
    """The content terms grouped by the question's word they come from: a hyphenated compound ("full-time",
    "U.S.-based") is one word of the question, though it makes several terms."""
    content = content_terms(question, sources, analysis)
    groups: list[tuple[str, ...]] = []
    for word in topic_words(question, analysis).split():
        group = tuple(t for t in dict.fromkeys(tokens(word)) if t in content)
        if group and group not in groups:
            groups.append(group)
    return groups


def is_covered(term: str, vocab: set[str]) -> bool:
    """The term, or every word of one of its synonyms, or the adjective of a place it names is in the
    vocabulary."""
    return any(all(t in vocab for t in phrase) for phrase in synonym_phrases(term)) or _adjective_of(term, vocab)


# The suffixes English makes an adjective of a place with, as stems read them: American, Mexican, Canadian,
# European, Japanese (stem "japanes"), Israeli; Germany -> German drops the y alone.
_ADJECTIVE_SUFFIXES = ("", "n", "an", "ian", "ean", "es", "ese", "i")


def _adjective_of(name_word: str, vocab: set[str]) -> bool:
    """A passage word that is the adjective of a place the question names: "South America" printed as "South
    American markets", "China" as "Chinese regulators", "Germany" as "German", where the name's final vowel or y
    may give way to the suffix."""
    if len(name_word) < 4:
        return False
    roots = {name_word, name_word[:-1]} if name_word[-1] in "aeiouy" else {name_word}
    return any(root + suffix in vocab for root in roots for suffix in _ADJECTIVE_SUFFIXES
               if root + suffix != name_word)


def coverage_gap(question: str, sources: list[Citation], analysis: QuestionPlan | None) -> list[str]:
    """Content words of the question that no retrieved passage contains (nor a synonym of them)."""
    vocab = passage_words(sources)
    raw_words = {}
    for w in TOKEN_RE.findall(topic_words(question, analysis) or ""):
        if w[0].isdigit():
            continue
        for part in w.lower().split("-"):
            if part and part not in STOP_WORDS:
                raw_words.setdefault(stem(part), part.strip("'’"))
    # The words that named a company (a brand for its company) chose the filings searched: no passage need hold them.
    named_by = {t for start, end, dimension, _value in (analysis.spans if analysis and analysis.question == question
                                                        else []) if dimension == "ticker"
                for t in tokens(question[start:end])}
    # Only the question's own words: a passage need not print the regulation's ("revenue-generating activities").
    # A class's letter ("class-a", see tokens) is said by its word already ("class"), and is no word to show.
    return [raw_words.get(t, t) for t in content_terms(question, sources, analysis, regulation_words=False)
            if not is_covered(t, vocab) and t not in named_by and "-" not in t]


def passage_words(sources: list[Citation]) -> set[str]:
    """Every token of the sources' text and of their Items' titles: what "no passage mentions" is judged by."""
    vocab: set[str] = set()
    for c in sources:
        vocab.update(tokens(c.text))
        vocab.update(section_tokens(c))
    return vocab


def section_tokens(c: Citation) -> set[str]:
    """The tokens of the source's Item and its title ("Item 1A Risk Factors")."""
    return set(tokens(f"{c.section or ''} {c.section_title or ''}"))
