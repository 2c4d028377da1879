"""Numbers as a filing or an answer writes them: "$52.4 billion", "(1,234)", "10.8%", "1,448 million". One reader
for every layer: the facts layer reads counts in prose and checks an answer's figures with it, the answer layer
quotes and checks figures with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class WrittenNumber:
    """A number as written in an answer or a source: its value, scale word, unit and precision, and where it is."""

    value: float  # absolute value as written (before scale)
    ulp: float  # one unit in the last written place
    scale: float  # 1e6 for "million", 1 when none is written
    scaled: bool  # a scale word was written
    pct: bool
    money: bool
    raw: str
    start: int
    end: int
    negative: bool = False  # written with a minus sign or in parentheses


_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "bn": 1e9, "mn": 1e6, "mm": 1e6,
           "tn": 1e12, "k": 1e3, "m": 1e6, "b": 1e9}
# The scale words a statement's unit note spells out ("(In millions, except per share amounts)").
SCALE_WORDS = {word: scale for word, scale in _SCALES.items() if len(word) > 2}
_NUM_RE = re.compile(
    r"""
    (?<![\w.,/])
    (?P<open>\()?
    (?P<sign>[-−–])?
    (?:(?P<cur>\$|US\$|USD)\s?)?
    (?P<int>\d{1,3}(?:,\d{3})+|\d+)
    (?P<dec>\.\d+)?
    (?P<close>\))?
    (?:\s*(?P<pct>%|percent\b|per\s?cent\b)
      |\s*(?P<scale>thousand|million|billion|trillion|bn|mn|tn)\b
      |(?P<scale2>[KkMmBb])\b)?
    (?![A-Za-z\d]|-[A-Za-z])
    """,
    re.VERBOSE,
)


def parse_numbers(text: str) -> list[WrittenNumber]:
    """Every number in the text, as written: "$52.4 billion", "(1,234)", "10.8%", "12M"."""
    out = []
    for m in _NUM_RE.finditer(text or ""):
        digits = m.group("int").replace(",", "")
        dec = m.group("dec") or ""
        try:
            value = float(digits + dec)
        except ValueError:
            continue
        ulp = 10.0 ** -(len(dec) - 1) if dec else 1.0
        word = (m.group("scale") or m.group("scale2") or "").lower()
        scale = _SCALES.get(word, 1.0)
        raw, start = m.group(0), m.start()
        if m.group("open") and not m.group("close"):  # "((52,418 - ...": the bracket is not the number's
            raw, start = raw[1:], start + 1
        elif m.group("close") and not m.group("open"):
            raw = raw.replace(")", "", 1)
        negative = bool(m.group("sign") or (m.group("open") and m.group("close")))
        out.append(WrittenNumber(value, ulp, scale, bool(word), bool(m.group("pct")), bool(m.group("cur")),
                                 raw.strip(), start, m.end(), negative))
    return out


def worth_checking(n: WrittenNumber) -> bool:
    """Not a year, and not a small bare count or list number: a figure a source should hold."""
    plain = not (n.pct or n.scaled or n.money) and n.ulp == 1.0 and "," not in n.raw
    if plain and 1900 <= n.value <= 2100:
        return False  # a year
    if plain and n.value < 10:
        return False  # small counts and list numbers
    return True


# Figures written as one list: "58,300 and 61,900", "1,448 million, 1,323 million and 1,232 million".
_LIST_LINK = re.compile(r"\s*(?:,\s*and|,|and)\s*")
YEAR = re.compile(r"\b(?:19|20)\d\d\b")  # a year as written in a filing's text
_YEAR_LIST = re.compile(r"\b(?:19|20)\d\d(?:\s*(?:,\s*and|,|and)\s*(?:19|20)\d\d)+\b")
_RESPECTIVELY = re.compile(r"\brespectively\b", re.I)


def listed_runs(text: str, numbers: list[WrittenNumber]) -> list[list[WrittenNumber]]:
    """The numbers in runs written as one list, in order; a number alone is a run of its own."""
    runs: list[list[WrittenNumber]] = []
    for n in numbers:
        if runs and _LIST_LINK.fullmatch(text, runs[-1][-1].end, n.start):
            runs[-1].append(n)
        else:
            runs.append([n])
    return runs


def respectively_end(text: str, run: list[WrittenNumber]) -> int | None:
    """Where the "respectively" that closes a list of figures' clause ends in the text (the list pairs each figure
    with one of a list of things: years, classes of stock, segments); None for a single figure or when no such word
    follows before the clause ends."""
    if len(run) < 2:
        return None
    word = _RESPECTIVELY.search(text, run[-1].end)
    if word is None or re.search(r"[;.]\s", text[run[-1].end:word.start()]):
        return None
    return word.end()


def listed_respectively(text: str, run: list[WrittenNumber]) -> bool:
    """A list of figures that "respectively" pairs with a list of things in the same clause (years, classes of
    stock, segments): each figure is only the one of its place in that list."""
    return respectively_end(text, run) is not None


def respective_years(text: str, run: list[WrittenNumber]) -> list[int]:
    """The fiscal years a list of figures is stated for, in order, when "respectively" closes its clause: the years
    named between the figures and that word ("1,448 million and 1,323 million processed claims in 2024 and 2023,
    respectively"), else the list of years named last before the figures ("As of December 31, 2024 and 2023, we
    had approximately 58,300 and 61,900 employees, respectively"). [] when no such word follows, or when the years
    are not as many as the figures."""
    end = respectively_end(text, run)
    if end is None:
        return []
    years = [int(y) for y in YEAR.findall(text, run[-1].end, end)]
    if not years:
        lists = _YEAR_LIST.findall(text[:run[0].start])
        years = [int(y) for y in YEAR.findall(lists[-1])] if lists else []
    return years if len(years) == len(run) else []
