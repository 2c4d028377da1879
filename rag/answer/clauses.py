"""The clauses of a sentence that states figures: which of its figures belong to the year wanted, the words that
state one of them, and whether an amount is a change or another period's figure set beside the one stated. Shared
by the extractive answer's readings of prose (rag.answer.extractive) and of figures only a filer states
(rag.answer.stated).
"""

from __future__ import annotations

import re

from ..numbers import WrittenNumber, listed_respectively, listed_runs, respective_years, respectively_end
from ..phrasing import PhraseList
from .counts import YEAR
from .figures import answer_figures
from .quotable import QuotableUnit
from .terms import tokens


def figures_of_the_year(u: QuotableUnit, years: set[str], money: bool = False
                         ) -> tuple[list[WrittenNumber], list[WrittenNumber]]:
    """(every count a sentence states, or every amount with `money`; those whose own clause does not name only
    another year). A clause runs from its figure to the next one: in "93 million people as of December 31, 2024
    compared to 97 million people as of December 31, 2023" the second names 2023 alone. The year wanted is the one
    asked, else the filing's own."""
    figures = [n for n in answer_figures(u.text) if not n.pct and n.money == money]
    wanted = years or ({str(u.source.fiscal_year)} if u.source.fiscal_year else set())
    # Counts listed with "respectively" (invented: "1,200 and 1,100 employees, respectively", after "As of June 30, 2031 and
    # 2030"): each is the count of its year in the list of years.
    stated_for: dict[int, str] = {}
    paired_otherwise: set[int] = set()
    for run in listed_runs(u.text, figures):
        years = respective_years(u.text, run)
        if years:
            stated_for.update((n.start, str(year)) for n, year in zip(run, years))
        elif listed_respectively(u.text, run):
            # Listed with "respectively" beside anything else (invented: "40, 20 and 10 holders of record of our class
            # X, Y and Z common stock, respectively"): which figure is which part is the list's order, not a
            # clause's words, so none of them is read as the one asked.
            paired_otherwise.update(n.start for n in run)
    kept = []
    for i, n in enumerate(figures):
        if n.start in paired_otherwise:
            continue
        if n.start in stated_for:
            if not wanted or stated_for[n.start] in wanted:
                kept.append(n)
            continue
        named = set(YEAR.findall(u.text[n.start:figures[i + 1].start if i + 1 < len(figures) else len(u.text)]))
        if not (named and wanted and not named & wanted):
            kept.append(n)
    return figures, kept


def respective_quote(text: str, run: list[WrittenNumber], figure: WrittenNumber) -> str:
    """The sentence up to the "respectively" that closes a list of figures, which pairs each with its year (invented: "As
    of June 30, 2031 and 2030, the company had approximately 1,200 […] employees, respectively"), with the other
    years' figures elided: quoted, they would read as further answers, and the years and the figure's place in the
    list still show which year it is. Its opening cut to the 30 words before the list."""
    stop = respectively_end(text, run) or len(text)
    head = text[:run[0].start].split()
    lead = ("… " if len(head) > 30 else "") + " ".join(head[-30:])
    at = run.index(figure)
    listed = ("[…] " if at > 0 else "") + figure.raw + (" […]" if at < len(run) - 1 else "")
    tail = " ".join(text[run[-1].end:stop].split())
    return f"{lead} {listed}{'' if tail.startswith(',') else ' '}{tail}".strip()


# A verb of change: "increased", "grew", "declined", "dropped".
_CHANGE_VERB = r"\b(?:increas|decreas|grew|grow|rose|rise|fell|fall|declin|drop)\w*"
# The words before an amount a figure changed by ("increased by $5 million", "down $1.5 billion"): a change, not
# the level asked.
_CHANGED_BY = re.compile(r"(?:" + _CHANGE_VERB + r"|\b(?:up|down))\s+(?:by\s+)?(?:approximately\s+|about\s+|"
                         r"nearly\s+)?$", re.I)
# The amount written as a change by its noun: "a $7 million increase from prices", "an increase of $3.5 billion",
# "a decrease in net income of $9 million" (invented).
_CHANGE_NOUN = r"(?:increase|decrease|rise|decline|drop|reduction|growth)s?"
_CHANGE_NOUN_AFTER = re.compile(r"\s*" + _CHANGE_NOUN + r"\b", re.I)
_CHANGE_NOUN_BEFORE = re.compile(r"\b" + _CHANGE_NOUN + r"\s+(?:in\s+(?:[\w,&'’-]+\s+){1,5}?)?of\s+"
                                 r"(?:approximately\s+|about\s+|nearly\s+)?$", re.I)


def change_amount(text: str, figure: WrittenNumber) -> bool:
    """Is the amount what something changed by, not a level: after a verb of change ("increased by $5 million"),
    or named a change by its noun ("a $7 million increase", "an increase of $7 million")?"""
    before = text[max(0, figure.start - 60):figure.start]
    return bool(_CHANGED_BY.search(before) or _CHANGE_NOUN_BEFORE.search(before)
                or _CHANGE_NOUN_AFTER.match(text, figure.end))


# The same verb left at the end of a clause quoted up to that amount ("... during fiscal 2024 increased by").
TRAILING_CHANGE = re.compile(r"\s*" + _CHANGE_VERB + r"(?:\s+by)?\s*$", re.I)
# The words that set another period's figure beside the one stated: "up from", "compared with", "versus", "than".
_COMPARED_WITH = PhraseList("compared_with")


def compared_figure(text: str, figure: WrittenNumber, year: str) -> bool:
    """A figure a comparison sets beside the one stated, for another year: it follows "from", "compared with",
    "versus" or "than", and the next words name a year, not the one asked ("up from $2.25 billion at the end of
    fiscal 2030", invented). A year named further on belongs to something else ("under the program authorized in 2028")."""
    # An abbreviation's dot ("vs.") is no end of the words before the figure.
    if not _COMPARED_WITH.ends(text[max(0, figure.start - 30):figure.start].rstrip().removesuffix(".")):
        return False
    named = {t for t in tokens(text[figure.end:])[:8] if YEAR.fullmatch(t)}
    return bool(named) and year not in named


# A figure after a word of scope belongs to the clause before it (invented: "900 employees in 12 countries"); any other
# figure starts a clause of its own ("; 300 were engaged in ...", "compared to 8 million").
_SCOPE_WORD = PhraseList("scope_words")
# A comma inside a date ("December 31, 2024") does not end a clause.
_CLAUSE_COMMA = re.compile(r",(?!\s*(?:19|20)\d\d\b)")
_LINK_WORD = re.compile(r"\b(?:and|or|while|but|compared\s+(?:to|with)|versus|than)\b", re.I)
# What a clause cut short at the next one ends with: the word linking them ("... and", "... compared to").
_CLAUSE_LINK = re.compile(r"[\s,;:]*(?:" + _LINK_WORD.pattern + r"|\bfrom\b)?[\s,;:]*$", re.I)


def clause_quote(text: str, figure: WrittenNumber, figures: list[WrittenNumber], lead_words: int = 3) -> str:
    """The words of a sentence that state one of its figures: from the start of the figure's clause (after the last
    semicolon, comma or "and" before it, at most `lead_words` words back) to the next figure that starts a clause of its
    own, cut back to the last comma before that figure, or to the semicolon or the sentence's end."""
    ahead = [n for n in figures if n.start > figure.start and not _SCOPE_WORD.ends(text[:n.start])]
    end = ahead[0].start if ahead else len(text)
    semicolon = text.find(";", figure.end, end)
    if semicolon >= 0:
        end = semicolon
    elif ahead:
        # The next clause starts at the last comma or linking word before its figure ("... stock and
        # approximately 2 million beneficial owners", invented).
        links = [m.start() for m in _CLAUSE_COMMA.finditer(text, figure.end, end)] + [
            m.start() for m in _LINK_WORD.finditer(text, figure.end, end)]
        end = max(links) if links else end
    earlier = [n.end for n in figures if n.end <= figure.start]
    head = text[earlier[-1] if earlier else 0:figure.start]
    cuts = [m.end() for m in re.finditer(r"[;.]|" + _CLAUSE_COMMA.pattern + "|" + _LINK_WORD.pattern, head, re.I)]
    words = (head[cuts[-1]:] if cuts else head).split()
    head = ("… " if len(words) > lead_words else "") + " ".join(words[-lead_words:])  # its subject may run longer
    tail = _CLAUSE_LINK.sub("", " ".join(text[figure.start:end].split())).rstrip(".")
    return f"{head} {tail}".strip()
