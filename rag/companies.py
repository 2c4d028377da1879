"""Company names as questions and answers write them: the short forms of a filer's name, and the words and aliases
of the indexed companies. Shared by the question plan (which company a question names) and the facts layer's
answer checks (which company an answer sentence talks about). Imports nothing from rag."""

from __future__ import annotations

import re

_CORP_SUFFIX = re.compile(
    r"[,.]?\s+(inc|incorporated|corp|corporation|co|company|ltd|limited|plc|llc|l\.?p|n\.?v|s\.?a|holdings?|"
    r"group|platforms|the)\.?$",
    re.I,
)
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


def short_names(company: str) -> set[str]:
    """'Acme Inc.' -> {'acme inc.', 'acme'}; 'ACME WIDGET, INC.' -> {'acme widget, inc.', 'acme widget'}."""
    name = re.sub(r"\s+", " ", (company or "").strip().lower())
    name = re.sub(r"/[a-z]{2}/?$", "", name).strip()  # EDGAR's state tags: 'ACME & COMPANY/MN'
    names = {name} if name else set()
    current = name
    while True:
        stripped = _CORP_SUFFIX.sub("", current).strip(" ,.&")
        if stripped == current or not stripped:
            break
        current = stripped
        names.add(current)
    if current.startswith("the "):
        names.add(current[4:])
    # A filer named after its web address ("Acme.com, Inc.") is called by the name alone.
    domain = re.fullmatch(r"(.+?)\.(?:com|net|org)", current)
    if domain:
        names.add(domain.group(1))
    return {n for n in names if len(n) >= 3}


def company_words(filings: list[dict]) -> tuple[set[str], dict[str, str]]:
    """(every word of the indexed companies' tickers and names, lower-case name or ticker -> ticker)."""
    words: set[str] = set()
    aliases: dict[str, str] = {}
    for f in filings:
        t = (f.get("ticker") or "").upper()
        if not t:
            continue
        aliases[t.lower()] = t
        words.add(t.lower())
        for name in short_names(f.get("company") or ""):
            aliases.setdefault(name, t)
            words.update(WORD_PATTERN.findall(name))
    return words, aliases


def tickers_named(low: str, aliases: dict[str, str]) -> list[str]:
    """The indexed companies a lower-case text names by name or ticker (three letters or more), longest first."""
    out = []
    for name, t in sorted(aliases.items(), key=lambda kv: -len(kv[0])):
        if len(name) <= 2:
            continue
        if re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", low) and t not in out:
            out.append(t)
    return out
