"""Words as the extractive answer and the refusals compare a question with a passage: stop words, a crude stem,
a text's tokens and its sentences. Imports nothing from rag, so any stage can read text the same way.
"""

from __future__ import annotations

import re

from .dates import MONTH_WORDS
from .lexicon import word_set

# The adverbs that only hedge or stress what a question asks, and the function words no passage need hold
# (rag/data/lexicon.toml).
HEDGE_WORDS = word_set("hedge")
STOP_WORDS = HEDGE_WORDS | word_set("stop")


# Short forms analysts type and filings spell out: the agencies by their initials, the statement lines by their
# shorthand, clipped words. Keyword search looks for the spelled-out words too, the extractive answer counts them as
# the word, and a printed label is named by them (rag.facts.row_labels).
SPELLED_OUT = {
    # The agencies analysts name by their initials.
    "doj": ["department of justice"],
    "ftc": ["federal trade commission"],
    "irs": ["internal revenue service"],
    "capex": ["capital expenditures", "property and equipment"],
    "r&d": ["research and development"],
    "sbc": ["stock-based compensation"],
    "eps": ["earnings per share", "net income per share"],
    "hq": ["headquarters", "principal executive offices"],
    # The officers by their initials: filings title them in full (the signatures, Item 401's executive officers).
    "ceo": ["chief executive officer"],
    "cfo": ["chief financial officer"],
    "coo": ["chief operating officer"],
    # Retailers' comparable sales, as analysts shorten them.
    "comps": ["comparable sales"],
    # ASC 805 calls a deal's earnout "contingent consideration", and filings book it so.
    "earnout": ["contingent consideration"],
    "opex": ["operating expenses"],
    "cogs": ["cost of sales"],
    "sg&a": ["selling, general and administrative"],
    "tac": ["traffic acquisition costs"],
    "d&a": ["depreciation and amortization"],
    # Words clipped as analysts type them ("accrued exp on the bal sheet").
    "exp": ["expenses"],
    "bal": ["balance"],
    "liab": ["liabilities"],
    "liabs": ["liabilities"],
    "accum": ["accumulated"],
    "amort": ["amortization"],
    "deprec": ["depreciation"],
    "intl": ["international"],
    "govt": ["government"],
    "mgmt": ["management"],
    "rev": ["revenue"],
    "revs": ["revenues"],
    "doc": ["document"],
    "acq": ["acquisition"],
    # A write-down of an asset is what ASC 350 and 360 call an impairment, and filings book it so.
    "write-down": ["impairment"], "write-downs": ["impairment"], "writedown": ["impairment"],
    "writedowns": ["impairment"], "wrote down": ["impairment"], "write down": ["impairment"],
    "writes down": ["impairment"], "written down": ["impairment"],
    # "Stock comp", "comp sales": clipped from either word.
    "comp": ["compensation", "comparable"],
}
_SHORT_FORM = re.compile(r"(?<![\w&])(" + "|".join(map(re.escape, SPELLED_OUT)) + r")(?![\w&])", re.I)


def spelled_out(text: str) -> list[str]:
    """The phrases the short forms a text writes stand for, in text order, each once ("DOJ" -> "department of
    justice")."""
    return list(dict.fromkeys(p for m in _SHORT_FORM.finditer(text or "") for p in SPELLED_OUT[m.group(1).lower()]))


# Irregular past forms of verbs that filings and questions put figures to, so "paid memberships" answers "paying
# memberships" and "shares sold" answers "how many shares did it sell".
_IRREGULAR = {"paid": "pay", "sold": "sell", "spent": "spend", "held": "hold", "bought": "buy", "built": "build",
              "grew": "grow", "grown": "grow", "brought": "bring", "lent": "lend", "owed": "owe", "won": "win",
              "repaid": "repay",
              # "What drove it" is answered "driven by"; "wrote down" by what was written down.
              "drove": "drive", "driven": "drive", "wrote": "write", "written": "write"}


def stem(word: str) -> str:
    """A crude English stem, the same for a question word and a passage word: "companies" -> "company"."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    w = _IRREGULAR.get(w, w)
    if w.endswith("ying") and len(w) == 6 and w[1] in "aeiou":
        return w[:-3]  # "paying", "buying": a three-letter verb in -y keeps its stem
    if len(w) <= 3 or w[0].isdigit():
        return w
    if (w.endswith("eries") and len(w) >= 9) or (w.endswith("ery") and len(w) >= 7):
        w = w[: w.rindex("er") + 2]  # a noun in -ery names its verb's act: "deliveries", "recovery"
    elif w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) in (4, 5) and w.endswith("ed") and w[-3] not in "aeiouy" and w[-4] in "aeiou":
        w = w[:-1]  # a short verb in -e takes -d alone: "fined" is "fine", "used" is "use", "noted" is "note"
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            w = w[: -len(suffix)]
            break
    if w.endswith("ee") and len(w) >= 7:
        w = w[:-2]  # a noun in -ee names whom its verb acts on: "employees" are whom a company "employed"
    elif w.endswith("e") and len(w) > 4:
        w = w[:-1]
    return w


TOKEN_RE = re.compile(r"\d[\d,]*(?:\.\d+)?|[a-z][a-z&'’-]*[a-z]|[a-z]", re.IGNORECASE)


# "U.S." is how filings abbreviate the country a question may spell out (and the other way round): both read as
# "united states", so a table headed "U.S. Retail Stores" answers "stores in the United States".
_US = re.compile(r"\bU\.S\.(?:A\.)?(?![A-Za-z])", re.I)
# "Non-U.S." is the rest of the world, which filings also call "international": it must not read as the U.S.
_NON_US = re.compile(r"\bnon-U\.S\.(?:A\.)?(?![A-Za-z])", re.I)


_LETTERED = ("class", "series")  # what a capital letter after it names: a class of stock, a series of notes


def tokens(text: str) -> list[str]:
    """The stems of the text's words (no stop words) and its numbers without thousands separators."""
    out = []
    text = text or ""
    if "U.S" in text or "u.s" in text:  # a substring test first: tokens() runs over every label a question reads
        text = _US.sub(" united states ", _NON_US.sub(" international ", text))
    before = ""
    for t in TOKEN_RE.findall(text):
        if t[0].isdigit():
            out.append(t.replace(",", "").rstrip("."))
            continue
        if len(t) == 1 and t.isupper() and before in _LETTERED:
            out.append(f"{before}-{t.lower()}")  # "Class A", "Series B": the letter tells one class from another
        before = t.lower()
        for part in re.split(r"[-]", t.lower()):
            part = _unclitic(part)
            if part and part not in STOP_WORDS:
                out.append(stem(part))
    return out


# A contraction's clitic ("what's", "didn't", "they're"): the word it leans on is the word read, so a question
# word stays a stop word however it is written.
_CLITIC = re.compile(r"(?:['’](?:s|re|ve|ll|d|m)|n['’]t)$")
_NEGATED_IRREGULAR = {"wo": "will", "ca": "can", "sha": "shall"}  # "won't", "can't", "shan't"


def _unclitic(word: str) -> str:
    bare = _CLITIC.sub("", word)
    return _NEGATED_IRREGULAR.get(bare, bare) if bare != word and word.endswith(("n't", "n’t")) else bare



# Words of a question that say what kind of answer is wanted, or that every filing uses, and the light verbs a
# question is phrased with (rag/data/lexicon.toml's `generic`), and the months, as stems: they count little in
# scoring, a passage need not contain them, and they say nothing of what a question is about.
GENERIC_TERMS = {stem(w) for w in sorted(word_set("generic")) + sorted(MONTH_WORDS)}

# The nouns filings count their workforce with: Regulation S-K Item 101(c)(2)(ii) asks for the "number of persons
# employed", and filers write employees, associates, colleagues or workers.
HEADCOUNT_NOUNS = ["employees", "persons", "associates", "colleagues", "workers"]

# What joins a count to its noun when the noun comes first ("our headcount was 131,407", "a workforce of about
# 212,000"): a linking verb or "of", and a word of approximation. Retrieval and the extractive answer read it alike.
COUNT_AFTER_NOUN_LINK = (r"(?:was|were|totaled|totalled|numbered|stood\s+at|reached|of)\s+(?:approximately\s+|"
                         r"about\s+|around\s+|roughly\s+|over\s+|nearly\s+|almost\s+|more\s+than\s+)?")

# Where a period does not end a sentence: an abbreviation ("Inc.", "U.S.", "No.") or a person's initial ("Jane A.
# Doe"), though a lone letter that names a class, series or exhibit does ("... of Class B. The ...").
_ABBREVIATION = re.compile(r"\b(?:Inc|Corp|Co|Ltd|No|Nos|U\.S|U\.K|Mr|Mrs|Ms|Dr|Jr|Sr|vs|etc|approx|e\.g|i\.e|St|Fig)\.$")
_INITIAL = re.compile(r"(?:^|[\s(])(?<!Class )(?<!Series )(?<!Schedule )(?<!Exhibit )(?<!Appendix )(?<!Annex )[A-Z]\.$")


def ends_sentence(text_before: str) -> bool:
    """Does a period at the end of `text_before` end a sentence?"""
    tail = text_before.rstrip()[-40:]
    return not (_ABBREVIATION.search(tail) or _INITIAL.search(tail))


_SENTENCE_END = re.compile(r"[.!?][\"”’)]?\s+(?=[A-Z(“\"$\d])")  # a stop, and a capital or figure after it


def sentence_ends(line: str) -> list[int]:
    """Where each sentence of a line of prose but the last ends (the offset after its stop and the space)."""
    return [m.end() for m in _SENTENCE_END.finditer(line)
            if line[m.start()] != "." or ends_sentence(line[: m.start() + 1])]


def split_sentences(line: str) -> list[str]:
    """A line of prose as its sentences, in order; a piece under 25 characters stays with its neighbour ("Inc."
    or a figure's footnote marker is no sentence of its own)."""
    parts = []
    start = 0
    for end in sentence_ends(line):
        candidate = line[start:end].strip()
        if len(candidate) < 25:
            continue
        parts.append(candidate)
        start = end
    tail = line[start:].strip()
    if tail:
        if parts and len(tail) < 25:
            parts[-1] = parts[-1] + " " + tail
        else:
            parts.append(tail)
    return parts
