"""Counts stated in passages: which figures of a sentence count the thing a "how many" question asks about, and
whether any sentence or table row of the retrieved passages states such a count at all. Shared by the extractive
answer (which reads the count) and the refusals (which say when none is stated).
"""

from __future__ import annotations

import re

from ..numbers import (
    YEAR,
    WrittenNumber,
    listed_respectively,
    listed_runs,
    parse_numbers,
    respective_years,
    worth_checking,
)
from ..phrasing import PhraseList, follows
from ..words import COUNT_AFTER_NOUN_LINK, STOP_WORDS
from .figures import answer_figures
from .quotable import QuotableUnit
from .terms import is_covered, tokens

_CLAUSE = re.compile(r"[^,;:.()]*")  # from a figure to the next punctuation
# "13,559 of our employees": a part of what is counted.
_PARTITIVE = PhraseList("partitive")
# A capitalised word right before a number, as a product's or model's name carries it ("<Product> 17").
_NAME_BEFORE = re.compile(r"\b([A-Za-z]*[A-Z][\w-]*)\s+$")
# The count stated after its noun: "our employee headcount worldwide was 131,407", "a workforce of about 212,000".
_CLAUSE_BEFORE = re.compile(r"(?P<subject>[^,;:.()]*?)\b" + COUNT_AFTER_NOUN_LINK + "$", re.I)


def names_another_year(words: list[str], years: set[str]) -> bool:
    """The words after a figure name a year, and not one asked: "27,324 in fiscal 2023" when 2024 is asked."""
    return bool(years) and any(YEAR.fullmatch(t) and t not in years for t in words)


def counted_stems(counted: list[str]) -> set[str]:
    """The stems of what is counted, without the little words of its phrase ("holders of record")."""
    return {t for t in tokens(" ".join(counted)) if t not in STOP_WORDS}


def names_counted(stems: set[str], words: set[str]) -> bool:
    return any(is_covered(s, words) for s in stems)


def counts_named(u: QuotableUnit, counted: list[str], years: set[str]) -> list[WrittenNumber]:
    """The figures a sentence gives as counts of what is counted: the noun follows its figure within the clause
    ("approximately 412,600 associates", "42,300 full-time employees"), so "of whom approximately 52,800 were
    salaried" and "employees in 59 countries" are not counts of employees; nor is a count whose clause names only
    a year not asked, nor a number that is part of the thing's own name ("<product> 17, <product> 16 and ...": a
    count comes before its noun, not after it)."""
    stems = counted_stems(counted)
    out = []
    # Counts listed before one noun ("58,300 and 61,900 employees") all count it: the list's last figure is read.
    counts = [n for n in answer_figures(u.text) if not (n.pct or n.money)]
    parts = listed_parts(u.text, counts)
    for run in listed_runs(u.text, counts):
        n = run[-1]
        if n.start in parts:
            continue  # "426, 186 and 97 holders of record of our class X, Y and Z stock, respectively": parts
        if u.text[n.end:n.end + 1].isspace() and follows(_PARTITIVE.book.phrasings, u.text.lower(), n.end):
            continue  # "13,559 of our employees took part": some of them, not how many there are
        name = _NAME_BEFORE.search(u.text, 0, run[0].start)
        if name and names_counted(stems, set(tokens(name.group(1)))):
            continue  # the thing's name with its number, not a count of it
        # Four words: "171,500 full-time equivalent employees" counts employees.
        clause = _CLAUSE.match(u.text, n.end).group(0)
        after = tokens(clause)[:4]
        if names_another_year(after, years):
            continue
        before = _CLAUSE_BEFORE.search(u.text[:run[0].start])
        # The noun as the filing words it: "426 registered shareholders" counts holders of record; in the plural,
        # as a count of more than one is written ("the 848 factory", "a 929 airplane": a model's designation).
        if _plural_named(stems, clause) or _named_by_its_of_phrase(counted, clause) or (
                before and names_counted(stems, set(tokens(before.group("subject"))[-5:]))):
            out.extend(run)
    return out


def counts_all_of_it(text: str, n: WrittenNumber, counted: list[str]) -> bool:
    """Do the first words after a count name every word of what is counted ("96,400 holders of record" for
    "holders of record"), not only its noun ("4,912,000 additional street name holders")?"""
    after = set(tokens(_CLAUSE.match(text, n.end).group(0))[:4])
    return all(is_covered(s, after) for s in counted_stems(counted))


# Nouns whose plural is the word itself or not made with -s.
_IRREGULAR_PLURALS = {"people", "personnel", "staff", "aircraft", "children", "men", "women", "sheep", "fish"}


def _plural_named(stems: set[str], clause: str) -> bool:
    """Do the first four words of a figure's clause name what is counted, in the plural?"""
    words = re.findall(r"[A-Za-z][\w'-]*", clause)[:4]
    plural = [w.lower().endswith("s") or w.lower() in _IRREGULAR_PLURALS for w in words]
    # The noun or a plural after it ("151 office locations": the word names the kind of thing counted).
    return any(names_counted(stems, set(tokens(w))) and any(plural[i:]) for i, w in enumerate(words))


def _named_by_its_of_phrase(counted: list[str], clause: str) -> bool:
    """Is a thing counted by a phrase with "of" ("holders of record") named in a figure's first words by the same
    "of" phrase after a plural head noun ("183,517 member accounts of record", "96,400 holders of record")? The
    head noun is the filer's own word for the holder; the "of" phrase says which count it is (Item 201(b))."""
    asked = [w.lower() for w in counted]
    if "of" not in asked[:-1]:
        return False
    phrase = asked[asked.index("of"):asked.index("of") + 2]
    words = [w.lower() for w in re.findall(r"[A-Za-z][\w'-]*", clause)[:5]]
    return any(words[i:i + 2] == phrase and any(w.endswith("s") for w in words[:i]) for i in range(1, len(words)))


def listed_parts(text: str, figures: list[WrittenNumber]) -> set[int]:
    """The starts of figures listed with "respectively" beside anything but years ("426, 186 and 97 holders of
    record of our class X, Y and Z common stock, respectively"): each is a part's, by its place in the list."""
    return {n.start for run in listed_runs(text, figures) if len(run) > 1 and listed_respectively(text, run)
            and not respective_years(text, run) for n in run}


def row_figures(row: str) -> list[WrittenNumber]:
    """The figures of a table row's cells, its label left out."""
    return [n for cell in row.split("|")[1:] for n in parse_numbers(cell) if worth_checking(n)]


def only_amounts(figures: list[WrittenNumber]) -> bool:
    """Figures that are all money or percentages (at least one): they count nothing."""
    return bool(figures) and all(n.money or n.pct for n in figures)


def amounts_only(row: str) -> bool:
    """A table row whose figures are all money or percentages ("Revenue per subscriber | $14.14 | 6%")."""
    return only_amounts(row_figures(row))


# A row label that says it counts: "Number of stores", "Store count", "# of locations".
_COUNT_LABEL = re.compile(r"\b(?:number|count|headcount)\b|#", re.I)


def labelled_as_count(label: str, counted: list[str]) -> bool:
    """Does a row's label say it holds a count of what is counted, in a table of dollar amounts? It says "number
    of" or "count", or names the thing in the plural as a count is labelled ("Paid memberships", "Stores"), where
    a line of revenue is labelled by the thing's own name ("<product>", "<model>")."""
    if _COUNT_LABEL.search(label):
        return True
    stems = counted_stems(counted)
    return any(word.lower().endswith("s") and names_counted(stems, set(tokens(word)))
               for word in re.findall(r"[A-Za-z][\w'-]*", label))


def states_count(u: QuotableUnit, counted: list[str], years: set[str], asked: set[str] = frozenset()) -> bool:
    """Does a sentence or table row state a count of what is counted? A sentence, when one of its figures counts
    it (counts_named); a row, when its label, its group, its table's title or caption or its column heads name the
    thing and its cells hold a figure that is neither an amount nor a percentage ("Number of stores | 2,146"). A
    row of a table of dollar amounts counts too: a table of a segment's results lists its deliveries among its
    amounts under a label of their own ("Deliveries"), which may name the thing no more than the question's verb
    does (see `asked`: the question's own words)."""
    if u.kind == "sentence":
        return bool(counts_named(u, counted, years))
    figures = row_figures(u.text)
    if not figures or only_amounts(figures):
        return False
    labels = " ".join((u.text.split("|")[0], u.group, u.title, u.caption, u.header))
    # A label may name the count by the question's verb rather than its noun ("how many ... did it deliver" over a
    # row of "Deliveries"): a plural noun of the label that begins with a word of the question.
    plurals = [w.lower() for w in re.findall(r"[A-Za-z]+s\b", labels)]
    return names_counted(counted_stems(counted), set(tokens(labels))) or any(
        word.startswith(a) for word in plurals for a in asked if len(a) >= 4)
