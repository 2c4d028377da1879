"""A figure asked per item that the filing counts only in prose ("revenue per processed claim", "revenue per
employee"): the statements tag the amount and the text states the count ("<Segment> processed 1,448 million and
1,323 million claims in 2024 and 2023, respectively"). The rate is the tagged amount over the count the
text gives for the same fiscal year, both cited; a count the text does not tie to that year gives no rate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ..lexicon import word_set
from ..numbers import YEAR, WrittenNumber, listed_runs, parse_numbers, respective_years
from ..phrasing import PhraseList
from ..words import HEADCOUNT_NOUNS

# Nothing before a count but words of size: the count is its sentence's subject.
_SIZE_WORDS = word_set("size_words")
# A count of a change or of a part, not of what there is: "opened 12 stores", "repurchased 50 million shares".
_CHANGE_BEFORE = PhraseList("change_before_count")
_SENTENCE_END = re.compile(r"(?<=[.;])\s+(?=[A-Z(])|\n+")


@dataclass(frozen=True)
class StatedCount:
    value: float  # the count, scaled ("1,448 million": 1.448e9)
    raw: str  # as written, with the item: "1,448 million processed claims"
    sentence: str


def _item_pattern(item: list[str]) -> str:
    """The item's words in order, each singular or plural; before a one-word item, up to three words of a kind of
    work ("full-time employees" for "employee")."""
    words = [re.escape(w) + r"(?:s|es)?" for w in item]
    if len(words) > 1:
        return r"\s+".join(words) + r"\b"
    # Only words of a kind of work between ("full-time and part-time employees", "full-time equivalent
    # employees"): any other word before the noun makes a part of them ("12 new stores", "10,000 Acme
    # employees").
    filler = r"(?-i:(?:(?:[a-z]+-[a-z-]+(?:\s+equivalent)?|and)\s+){0,3}?)"
    noun = words[0]
    if f"{item[0].lower().rstrip('s')}s" in HEADCOUNT_NOUNS:
        # A rate per employee divides by the workforce, however the filer names it ("412,600 associates").
        noun = "(?:" + "|".join(re.escape(n.removesuffix("s")) for n in HEADCOUNT_NOUNS) + r")(?:s|es)?"
    return filler + noun + r"\b"


def stated_count(text: str, item: list[str], year: int, filing_year: int,
                 another_part: Callable[[str], bool] = lambda _sentence: False) -> StatedCount | None:
    """The one count of `item` the text ties to fiscal `year`: a single count in a sentence that names that year
    (or none, in the filing of that year), or one of counts listed with "respectively" beside as many years. None
    when no sentence, or two different ones, give it. A sentence `another_part` says is about another part of the
    company than the amount's ("<Company> Domestic, our largest segment, operates 3,534 stores") is passed over."""
    # Shares are counted in the XBRL data (the cover, the balance sheet), and prose counts shares repurchased,
    # issued or reserved far more often than those outstanding: no rate per share is read from prose.
    if not item or item[-1] in ("share", "shares"):
        return None
    noun = re.compile(r"\s+" + _item_pattern(item), re.I)
    found: dict[float, StatedCount] = {}
    for sentence in _SENTENCE_END.split(text or ""):
        if another_part(sentence):
            continue
        for listed, named in _listed_counts(sentence, noun):
            counts = [(n.value * n.scale, n.raw) for n in listed]
            start = listed[0].start
            if any(YEAR.fullmatch(raw) for _, raw in counts):
                continue  # a year read as a count ("in 2024 employees")
            if all(w in _SIZE_WORDS for w in sentence[:start].lower().split()):
                continue  # the count opens its sentence: a group doing something ("Over 215,000 employees have ...")
            if _CHANGE_BEFORE.ends(sentence[:start]):
                continue
            after = sentence[named.end():]
            if len(counts) == 1:
                stated = {int(y) for y in YEAR.findall(after[:60])} or {int(y) for y in YEAR.findall(sentence)}
                if (stated and stated != {year}) or (not stated and filing_year != year):
                    continue
                value, raw = counts[0]
            else:
                years = respective_years(sentence, listed)
                if year not in years:
                    continue
                value, raw = counts[years.index(year)]
            found.setdefault(value, StatedCount(value, f"{raw} {named.group(0).strip()}", sentence.strip()))
    return next(iter(found.values())) if len(found) == 1 else None


def _listed_counts(sentence: str, noun: re.Pattern) -> list[tuple[list[WrittenNumber], re.Match]]:
    """Each run of counts that the item's noun follows, with the noun's match: "1,448 million and 1,323 million
    processed claims" gives both counts. Money and percentages count no item."""
    counts = [n for n in parse_numbers(sentence) if not (n.money or n.pct)]
    out = []
    for run in listed_runs(sentence, counts):
        for i, n in enumerate(run):
            named = noun.match(sentence, n.end)
            if named:
                out.append((run[:i + 1], named))
    return out
