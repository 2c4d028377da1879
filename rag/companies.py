"""Company names as questions and answers write them: the forms of a filer's name (with and without its legal
form, by its leading words), every name of the indexed filers in one vocabulary read longest match first, and the
words and aliases of the indexed companies. Shared by the question plan (which company a question names) and the
facts layer's answer checks (which company an answer sentence talks about). The closed lists (legal forms,
joiners) are data: rag/data/company_names.json. Imports nothing from rag."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

# A word as the question plan and the facts layer tokenise lower-case text (a company's words are then never read
# as a metric's qualifier).
WORD_PATTERN = re.compile(r"[a-z0-9][a-z0-9&'’.-]*[a-z0-9&]|[a-z0-9]")

# Exchange tickers: letters and digits, with a share-class suffix after "." or "-" ("ABC-B", "XY.A").
_TICKER = re.compile(r"^[A-Z][A-Z0-9]{0,5}(?:[.-][A-Z0-9]{1,3})?$")
TICKER_FORM = "1-6 letters or digits starting with a letter, with an optional share class after '.' or '-' (e.g. BRK-B)"


def checked_ticker(value) -> str | None:
    """A ticker as exchanges write it, upper-cased ("brk-b" -> "BRK-B"); None for anything else. The one rule for
    a ticker, whether a user typed it (`rag edit`) or a filing's dei:TradingSymbol says it."""
    ticker = str(value if value is not None else "").strip().upper()
    return ticker if _TICKER.match(ticker) else None


_NAME_DATA = json.loads((Path(__file__).parent / "data" / "company_names.json").read_text(encoding="utf-8"))
LEGAL_FORMS = frozenset(_NAME_DATA["legal_forms"])
_ORGANISATION_WORDS = frozenset(_NAME_DATA["organisation_words"])
_ARTICLES = frozenset(_NAME_DATA["articles"])
_JOINERS = frozenset(_NAME_DATA["joiners"])
# The legal forms written as abbreviations with a dot ('Inc.'): the others are words ('Company') or capitals ('LLC').
_ABBREVIATED_FORMS = frozenset(_NAME_DATA["abbreviated_forms"])
_WEB_SUFFIXES = tuple("." + suffix for suffix in _NAME_DATA["web_suffixes"])
# A word of a name as written: letters and digits, joined inside by an apostrophe, a dot or "&" (invented: "o'hara's",
# "example.com", "l.p", "a&b"), or "&" alone. A hyphen or a comma parts words ("Alpha-Beta" is "alpha beta").
_NAME_WORD = re.compile(r"[a-z0-9]+(?:['’.&][a-z0-9]+)*|&", re.I)


def name_words(text: str) -> list[tuple[str, int, int]]:
    """(word, start, end) for each word of a name or a question, in lower case, the possessive left off the word
    and its span ("Acme's" is "acme"), "and" read as "&"."""
    out = []
    for m in _NAME_WORD.finditer(text or ""):
        word, end = m.group().lower(), m.end()
        if len(word) > 2 and word[-2] in "'’" and word[-1] == "s":
            word, end = word[:-2], end - 2
        out.append(("&" if word == "and" else word, m.start(), end))
    return out


def _plain(word: str) -> str:
    return word.replace(".", "")


def name_forms(company: str) -> list[tuple[str, ...]]:
    """The full names a registrant name stands for, as word tuples: as written, then without its legal form one
    word at a time ("Acme Widget Co., Inc." -> acme widget co inc, acme widget co, acme widget), each also without
    a leading "the", and a name that is a web address also without its suffix ("acme.com" -> acme)."""
    text = re.sub(r"\s*/[a-z]{2}/?\s*$", "", (company or "").strip(), flags=re.I)  # EDGAR's state tags: '/MN'
    words = [w for w, _start, _end in name_words(text)]
    forms = [tuple(words)]
    while words and (_plain(words[-1]) in LEGAL_FORMS or words[-1] in _JOINERS or words[-1] in _ARTICLES):
        words = words[:-1]
        if words and words[-1] not in _JOINERS:
            forms.append(tuple(words))
    if words and words[-1].endswith(_WEB_SUFFIXES):
        forms.append(tuple(words[:-1]) + (words[-1].rsplit(".", 1)[0],))
    forms += [form[1:] for form in forms if form[:1] and form[0] in _ARTICLES]
    return [form for form in dict.fromkeys(forms) if len(" ".join(form)) >= 3]


def short_names(company: str) -> set[str]:
    """'Acme Inc.' -> {'acme inc', 'acme'}; 'ACME WIDGET HOLDINGS, INC.' -> {'acme widget holdings inc', 'acme widget
    holdings', 'acme widget'}: its full names, and each without the words that only say it is a group of companies,
    as one string each. Two filings' names share one when they name one company."""
    names = set()
    for form in name_forms(company):
        names.add(" ".join(form))
        while form and form[-1] in _ORGANISATION_WORDS and len(form) > 1:
            form = form[:-1]
            names.add(" ".join(form))
    return names


@dataclass
class NameEntry:
    """The filers (tickers, in catalogue order) that go by a name in full, and those whose names start with it."""

    full: dict[str, None] = field(default_factory=dict)
    leading: dict[str, None] = field(default_factory=dict)

    def owners(self) -> list[str]:
        return list(self.full or self.leading)


@dataclass
class NameMatch:
    start: int
    end: int
    words: tuple[str, ...]
    entry: NameEntry
    index: int  # the match's first word among the text's words


class CompanyNames:
    """Every name the indexed filers go by, in full (registrant names with and without their legal form, as each
    filing writes it) and by leading words ("Acme Widget" of "Acme Widget Works Inc"), read from a text longest match
    first."""

    def __init__(self, filings: list[dict]):
        self.entries: dict[tuple[str, ...], NameEntry] = {}
        for f in filings:
            ticker = (f.get("ticker") or "").upper()
            for form in name_forms(f.get("company") or "") if ticker else []:
                self.entries.setdefault(form, NameEntry()).full[ticker] = None
                for k in range(1, len(form)):
                    if form[k - 1] not in _JOINERS and form[k - 1] not in _ARTICLES and len(" ".join(form[:k])) >= 3:
                        self.entries.setdefault(form[:k], NameEntry()).leading[ticker] = None
        self.longest = max((len(key) for key in self.entries), default=0)

    def find(self, text: str, accept) -> list[NameMatch]:
        """The names a text writes, left to right, each the longest at its place that `accept(match, words)` takes
        (`words`: the text's name_words)."""
        words = name_words(text)
        out, i = [], 0
        while i < len(words):
            for n in range(min(self.longest, len(words) - i), 0, -1):
                key = tuple(w for w, _start, _end in words[i:i + n])
                entry = self.entries.get(key)
                match = entry and NameMatch(words[i][1], words[i + n - 1][2], key, entry, i)
                if match and accept(match, words):
                    out.append(match)
                    i += n
                    break
            else:
                i += 1
        return out


def reader_name(company: str | None) -> str:
    """A filer's name as a reader writes it. EDGAR's conformed names are upper case with abbreviated legal forms
    and state tags ('ACME WIDGET CO', 'ACME & COMPANY/MN'); such a name is put in title case, a joiner in lower
    case ('Bank of Acme'), and its closing legal form written as companies abbreviate it ('Co.', 'Corp.', 'Inc.'),
    as a word ('Company'), or in capitals ('LLC', 'PLC', 'N.V.'). Words with digits or '&' in them (invented: '4X', 'A&B')
    stay as they are. A name in mixed case is the filer's own: unchanged."""
    name = " ".join((company or "").split())
    if not name or any(ch.islower() for ch in name):
        return name
    head, slash, state = name.rstrip("/").rpartition("/")
    if slash and len(state) == 2 and state.isalpha():  # EDGAR's state tag
        name = head.strip()
    words = name.split(" ")
    return " ".join(_reader_word(word, i, len(words)) for i, word in enumerate(words))


def _reader_word(word: str, i: int, count: int) -> str:
    core = word.rstrip(".,")
    tail, low = word[len(core):], core.lower()
    if any(ch.isdigit() or ch == "&" for ch in core):
        return word
    if i == count - 1 and _plain(low) in LEGAL_FORMS:
        if _plain(low) in _ABBREVIATED_FORMS:
            return core.capitalize() + "." + tail.lstrip(".")
        return core.capitalize() + tail if len(low) > 4 else core + tail
    if i and low in _JOINERS:
        return low + tail
    return "-".join(part[:1] + part[1:].lower() for part in core.split("-")) + tail


def company_words(filings: list[dict]) -> tuple[set[str], dict[str, str]]:
    """(every word of the indexed companies' tickers and names, lower-case name or ticker -> ticker). A name two
    filers go by ("acme" of Acme Holdings and of Acme Energy) names neither."""
    words: set[str] = set()
    aliases: dict[str, str] = {}
    shared: set[str] = set()
    for f in filings:
        t = (f.get("ticker") or "").upper()
        if not t:
            continue
        aliases[t.lower()] = t
        words.add(t.lower())
        for name in short_names(f.get("company") or ""):
            if aliases.setdefault(name, t) != t:
                shared.add(name)
            words.update(WORD_PATTERN.findall(name))
    return words, {name: t for name, t in aliases.items() if name not in shared}


def tickers_named(low: str, aliases: dict[str, str]) -> list[str]:
    """The indexed companies a lower-case text names by name or ticker (three letters or more), longest first."""
    out = []
    for name, t in sorted(aliases.items(), key=lambda kv: -len(kv[0])):
        if len(name) <= 2:
            continue
        if re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", low) and t not in out:
            out.append(t)
    return out
