"""How the indexed text writes its words (capitalised per company, in lower case, as the head of another company's
name, at all), which the catalog reads to tell a company's name from an everyday word.

Counted from the chunks in one pass. The served index counts each filing once, when it is written, and keeps the
counts with the filing, so a reader adds a few thousand numbers per filing instead of reading every chunk again
each time the index changes.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable

# A word written in lower case as a word of its own: not a concept's prefix ("adbe:NonCancellable...") or part of
# a web address or a hyphenation.
_LOWERCASE_WORD = re.compile(r"(?<![\w.$&'/-])([a-z]+)(?![\w&'.:/-])")
_ANY_WORD = re.compile(r"[A-Za-z][A-Za-z&]+")
_CAPITALISED_WORD = re.compile(r"(?<![\w.])[A-Z][a-z]+[A-Za-z]*\b")
# A capitalised word opening another company's name ("Globex Beverage Corporation", "Example AG").
_ENTITY_HEAD = re.compile(
    r"(?<![\w.])([A-Z][a-z]+[A-Za-z]*)(?:,? [A-Z][A-Za-z&.]*){0,3},? "
    r"(?:Inc|Corp|Corporation|Company|Co|Ltd|Limited|LLC|plc|PLC|N\.V|S\.A|AG|SE|GmbH|Holdings|L\.P)\b"
)


@dataclass
class WordUses:
    """How the indexed text writes its words."""

    capitalised: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))  # ticker -> word -> uses
    lowercase_uses: Counter = field(default_factory=Counter)  # word written in lower case -> how often
    entity_heads: set[str] = field(default_factory=set)  # capitalised words that open a company's name
    every: set[str] = field(default_factory=set)  # every word of the text, in lower case

    def add_text(self, text: str, ticker: str = "") -> None:
        self.every.update(w.lower() for w in _ANY_WORD.findall(text))
        self.lowercase_uses.update(_LOWERCASE_WORD.findall(text))
        self.entity_heads.update(_ENTITY_HEAD.findall(text))
        if ticker:
            self.capitalised[ticker.upper()].update(_CAPITALISED_WORD.findall(text))

    def add_counts(self, ticker: str, counts: dict) -> None:
        """Add one filing's counts (as `filing_counts` writes them) under the ticker it now has."""
        if ticker:
            self.capitalised[ticker.upper()].update(counts.get("capitalised") or {})
        self.lowercase_uses.update(counts.get("lowercase") or {})
        self.entity_heads.update(counts.get("heads") or ())
        self.every.update(counts.get("every") or ())


def word_uses(nodes: Iterable) -> WordUses:
    """The word uses of chunks, each counted under its own company."""
    uses = WordUses()
    for node in nodes:
        uses.add_text(node.text, node.metadata.get("ticker") or "")
    return uses


def filing_counts(texts: Iterable[str]) -> dict:
    """One filing's word uses as JSON-ready counts, without its company (which a correction may change later)."""
    uses = WordUses()
    for text in texts:
        uses.add_text(text, "-")
    return {"capitalised": dict(uses.capitalised.get("-", {})), "lowercase": dict(uses.lowercase_uses),
            "heads": sorted(uses.entity_heads), "every": sorted(uses.every)}


__all__ = ["WordUses", "filing_counts", "word_uses"]
