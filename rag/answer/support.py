"""Claims and the passages they cite: a sentence of an answer that cites a source should share at least one of its
content words (a name, a figure, a key noun) with that source, and every name it gives (two or more capitalised
words in a row, as a person's or an organisation's is written) should be there, in a sentence or table line that
also says what the claim says of it (one of its other key words). One that shares none ("The chief
financial officer is <a name> [1]" citing an income statement), or names someone its source does not ("The chief
financial officer is <another officer's name> [1]" citing the passage that names the right one), is a claim the
citation does not support, flagged as an unverified figure is. A line holding only citation markers cites the
sentence before it, as a model that puts its markers on a line of their own means them.

Content words are the sentence's word stems (rag.words.tokens: no stop words) less the generic words of questions,
the words that never narrow a metric and the words of amounts (all lists of rag/data/lexicon.toml), less years and
one-letter words, and less the words every passage of the cited filing carries in its header (company, ticker,
form, Item). A word also counts as shared when one of its synonyms (rag.answer.terms) is there whole.
"""

from __future__ import annotations

from functools import lru_cache

from ..dates import MONTH_WORDS
from ..lexicon import word_set
from ..schema import Citation
from ..words import split_sentences, stem, tokens
from .citations import CITATION_MARKER, citation_numbers, placeholder_spans
from .terms import synonym_phrases

MAX_CLAIMS = 40  # claim sentences checked per answer: a runaway answer's later ones are not read
MAX_CLAIM_CHARS = 5000  # nor is its text past this (an answer of ANSWER_TOKENS runs to some 4,000 characters)


@lru_cache(maxsize=1)
def _not_content() -> frozenset[str]:
    words = word_set("generic") | word_set("metric_core_stop") | word_set("amount_words")
    return frozenset(stem(w) for w in words) | words


def _is_year(token: str) -> bool:
    return token.isdigit() and len(token) == 4 and 1900 <= int(token) <= 2100


def content_words(text: str) -> set[str]:
    """The stems of a text's names, figures and key nouns (see the module docstring)."""
    skip = _not_content()
    out = set()
    for t in tokens(text):
        digits = t.replace(".", "")
        if t[0].isdigit() and (_is_year(t) or len(digits) < 2):
            continue
        if not t[0].isdigit() and (len(t) < 2 or t in skip):
            continue
        out.add(t)
    return out


def _body(c: Citation) -> str:
    """A source's text without its one-line header (company · form · year · Item), which every passage of the
    filing repeats."""
    first, _, rest = (c.text or "").partition("\n")
    return rest if rest and first.count("·") >= 2 else (c.text or "")


def _label_words(c: Citation) -> set[str]:
    first, _, rest = (c.text or "").partition("\n")
    header = first if rest and first.count("·") >= 2 else ""
    parts = [c.company, c.ticker, c.form, c.section, c.section_title, header]
    return set(tokens(" ".join(str(p) for p in parts if p)))


def _supported(word: str, evidence: set[str]) -> bool:
    return any(all(t in evidence for t in phrase) for phrase in synonym_phrases(word))


def _names(sentence: str) -> list[str]:
    """The names a sentence gives as written: two or more capitalised words in a row ("Jane Q. Example"), initials
    allowed between them."""
    names, run = [], []
    for word in sentence.split() + [""]:
        word = word.strip(",;:()\"'’.")
        if len(word) >= 3 and word[0].isupper() and word[1:].isalpha() and word[1:].islower():
            run.append(word)
        elif not (run and len(word) == 1 and word.isupper()):  # an initial continues a name
            if len(run) >= 2:
                names.append(" ".join(run))
            run = []
    return names


def _only_markers(line: str) -> bool:
    return not CITATION_MARKER.sub("", line).strip(" .,;:")


def _bare(sentence: str) -> str:
    """A sentence without its citation markers and placeholders."""
    bare = CITATION_MARKER.sub(" ", sentence)
    for start, end in reversed(placeholder_spans(bare)):
        bare = bare[:start] + bare[end:]
    return " ".join(bare.split()).replace(" .", ".")


def claim_sentences(text: str, limit: int = MAX_CLAIMS) -> list[tuple[str, list[int]]]:
    """(sentence without its markers, the source numbers it cites) for each sentence of the text that cites one,
    the first `limit` of them; a line of markers alone cites the sentence before it."""
    out: list[tuple[str, list[int]]] = []
    uncited = ""  # the last sentence that cited nothing
    for line in (text or "")[:MAX_CLAIM_CHARS].splitlines():
        if len(out) >= limit:
            break
        line = line.strip()
        if not line:
            continue
        numbers = [n for m in CITATION_MARKER.finditer(line) for n in citation_numbers(m.group(1))]
        if numbers and _only_markers(line):
            if uncited:
                out.append((uncited, list(dict.fromkeys(numbers))))
                uncited = ""
            continue
        for sentence in split_sentences(line):
            numbers = [n for m in CITATION_MARKER.finditer(sentence) for n in citation_numbers(m.group(1))]
            if numbers:
                out.append((_bare(sentence), list(dict.fromkeys(numbers))))
            uncited = "" if numbers else _bare(sentence)
    return out[:limit]


def unsupported_claims(text: str, sources: list[Citation]) -> list[tuple[str, list[int]]]:
    """(sentence, the source numbers it cites) for each sentence of the text whose cited sources share none of its
    content words, each once, in order."""
    by_number = {c.number: c for c in sources}
    evidence_of: dict[int, set[str]] = {}
    labels_of: dict[int, set[str]] = {}
    units_of: dict[int, list[set[str]]] = {}
    out: list[tuple[str, list[int]]] = []
    for sentence, numbers in claim_sentences(text)[:MAX_CLAIMS]:
        cited = [by_number[n] for n in numbers if n in by_number]
        if not cited:
            continue
        for c in cited:
            if c.number not in labels_of:
                labels_of[c.number] = _label_words(c)
        labels = set().union(*(labels_of[c.number] for c in cited))
        words = content_words(sentence) - labels
        if not words:
            continue  # nothing but the company, the year and generic words: nothing to check
        evidence = set()
        for c in cited:
            if c.number not in evidence_of:
                evidence_of[c.number] = set(tokens(_body(c)))
            evidence |= evidence_of[c.number]
        named = [set(tokens(name)) - labels - _not_content() for name in _names(sentence)]
        unsupported = not any(_supported(w, evidence) for w in words) or any(
            name and not _named_with(name, words - name, cited, units_of) for name in named)
        if unsupported and all(sentence != s for s, _ in out):
            out.append((sentence, [c.number for c in cited]))
    return out


def _named_with(name: set[str], others: set[str], cited: list[Citation], units_of: dict) -> bool:
    """Whether a sentence or table line of the cited passages gives the name together with what the claim says of
    it: one of the claim's other key words, dates and figures aside (a signature line prints every officer with the
    same date), when it has any."""
    said = {w for w in others if not w[0].isdigit() and w not in _MONTHS}
    for c in cited:
        if c.number not in units_of:
            units_of[c.number] = [set(tokens(unit)) for line in _body(c).splitlines()
                                  for unit in split_sentences(line)]
        for unit in units_of[c.number]:
            if name & unit and (not said or any(_supported(w, unit) for w in said)):
                return True
    return False


_MONTHS = frozenset(stem(m) for m in MONTH_WORDS) | frozenset(MONTH_WORDS)


def unsupported_warning(sentence: str, numbers: list[int]) -> str:
    cited = "".join(f"[{n}]" for n in numbers)
    short = sentence if len(sentence) <= 160 else sentence[:157].rstrip() + "..."
    return (f"Check this claim: \"{short}\" shares no name, figure or key word with its cited source {cited}: the "
            "citation does not support it. Verify before use.")
