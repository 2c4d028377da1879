"""The words of a question and of a passage, as the extractive answer compares them: stop words, stemming,
tokens, synonyms, the question's content terms, and which of them no retrieved passage holds.
"""

from __future__ import annotations

import re

from ..schema import Citation, QuestionPlan

STOP_WORDS = set(
    """a an the of in on at to for from by with about as and or but if then than that this these those is are was
    were be been being do does did done has have had having what which who whom whose when where why how much many
    any some all each per it its it's itself their them they he she his her our we us you your i me my can could
    would should will shall may might must not no nor so such there here into over under between during through up
    down out off again further once more most other own same too very just also only both either neither s t vs via
    tell show give list describe explain according say says said please mention mentioned regarding""".split()
)
# Words of a question that say what kind of answer is wanted, or that every filing uses: they count little in
# scoring and a passage need not contain them.
_GENERIC_PLAIN = """total amount number value figure overall primary main reason type kind percent percentage
    change changed changes compare compared big large small size level state states stated report reports reported
    company companies filing filings annual form fiscal year years fy quarter quarterly disclose disclosed discuss
    discussed note noted provide provided related relating current currently latest last recent period ended
    end as of name named names identify identified include includes including january february march april may
    june july august september october november december""".split()
# Plain words; keys are stemmed below, values go through tokens (which stems them).
_SYNONYMS_PLAIN = {
    "revenue": ["sales"],
    "sales": ["revenue"],
    "profit": ["income", "earnings"],
    "earnings": ["income", "profit"],
    "income": ["earnings", "profit"],
    "employees": ["headcount", "workforce", "staff", "personnel"],
    "people": ["employees", "headcount", "workforce", "staff"],
    "staff": ["employees", "headcount", "workforce"],
    "workers": ["employees", "headcount", "workforce"],
    "headcount": ["employees", "workforce"],
    "workforce": ["employees", "headcount"],
    "ceo": ["chief executive officer"],
    "cfo": ["chief financial officer"],
    "work": ["employees", "employed"],
    "spend": ["cost", "expenses", "expenditures"],
    "spent": ["cost", "expenses", "expenditures"],
    "buyback": ["repurchase"],
    "repurchase": ["buyback"],
    "debt": ["borrowings", "notes"],
    "headquarters": ["principal executive offices"],
    "hq": ["headquarters", "principal executive offices"],
    "capex": ["capital expenditures", "property and equipment"],
    "r&d": ["research and development"],
}


def stem(word: str) -> str:
    """A crude English stem, the same for a question word and a passage word: "companies" -> "company"."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) <= 3 or w[0].isdigit():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            w = w[: -len(suffix)]
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    return w


GENERIC_TERMS = {stem(w) for w in _GENERIC_PLAIN}
SYNONYMS = {stem(k): v for k, v in _SYNONYMS_PLAIN.items()}

TOKEN_RE = re.compile(r"\d[\d,]*(?:\.\d+)?|[a-z][a-z&'’-]*[a-z]|[a-z]", re.IGNORECASE)


def tokens(text: str) -> list[str]:
    """The stems of the text's words (no stop words) and its numbers without thousands separators."""
    out = []
    for t in TOKEN_RE.findall(text or ""):
        if t[0].isdigit():
            out.append(t.replace(",", "").rstrip("."))
            continue
        for part in re.split(r"[-]", t.lower()):
            if part and part not in STOP_WORDS:
                out.append(stem(part))
    return out


def question_terms(question: str, sources: list[Citation], analysis: QuestionPlan | None) -> list[str]:
    """Content terms of the question: not company names or tickers (retrieval already chose the companies)."""
    names: set[str] = set()
    for c in sources:
        for value in (c.company, c.ticker):
            for t in tokens(value or ""):
                names.add(t)
    for t in (analysis.tickers if analysis else []):
        names.add(stem(t.lower()))
    names |= {"inc", "corp", "corporation", "co", "ltd", "plc", "holding", "group", "company"}
    terms = []
    for t in tokens(question):
        if t in names or t in terms:
            continue
        terms.append(t)
    return terms


def weighted_synonyms(term: str) -> list[tuple[str, float]]:
    """The term and the words of its synonyms, with weights for scoring."""
    return [(term, 1.0)] + [(t, 0.7) for phrase in synonym_phrases(term)[1:] for t in phrase]


def synonym_phrases(term: str) -> list[tuple[str, ...]]:
    """The term and its synonyms as token tuples: ('ceo',), ('chief', 'executiv', 'officer')."""
    return [(term,)] + [tuple(tokens(syn)) for syn in SYNONYMS.get(term, []) if tokens(syn)]


def content_terms(question: str, sources: list[Citation], analysis: QuestionPlan | None) -> list[str]:
    """The question's words that say what it is about: no company names, figures, or generic words."""
    return [t for t in question_terms(question, sources, analysis)
            if not (t[0].isdigit() or t in GENERIC_TERMS or len(t) < 3)]


def is_covered(term: str, vocab: set[str]) -> bool:
    """The term, or every word of one of its synonyms, is in the vocabulary."""
    return any(all(t in vocab for t in phrase) for phrase in synonym_phrases(term))


def coverage_gap(question: str, sources: list[Citation], analysis: QuestionPlan | None) -> list[str]:
    """Content words of the question that no retrieved passage contains (nor a synonym of them)."""
    vocab: set[str] = set()
    for c in sources:
        vocab.update(tokens(c.text))
        vocab.update(section_tokens(c))
    raw_words = {}
    for w in TOKEN_RE.findall(question or ""):
        if w[0].isdigit():
            continue
        for part in w.lower().split("-"):
            if part and part not in STOP_WORDS:
                raw_words.setdefault(stem(part), part.strip("'’"))
    return [raw_words.get(t, t) for t in content_terms(question, sources, analysis) if not is_covered(t, vocab)]


def section_tokens(c: Citation) -> set[str]:
    """The tokens of the source's Item and its title ("Item 1A Risk Factors")."""
    return set(tokens(f"{c.section or ''} {c.section_title or ''}"))
