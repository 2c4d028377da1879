"""Checks of a finished language-model answer against the facts: a figure that contradicts the XBRL fact for the
metric, company and fiscal year its sentence talks about is flagged."""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from typing import Iterable, Iterator

from ..companies import company_words, tickers_named
from ..dates import fiscal_years_named
from ..numbers import parse_numbers, worth_checking
from .labels import lower_label, precision_digits, unit_kind
from .mentions import CHANGE_WORDS, COMPARE_WORDS, find_mentions, normalize
from .render import FactAnswer
from .tables import FactStoreUnavailable
from .views import Value

log = logging.getLogger(__name__)

# A sentence about a quarter or a year to date: its figures are not the fiscal year's, so the annual fact cannot
# judge them (a nine-month figure is near enough to the year's to look like a wrong one).
_PART_OF_YEAR = re.compile(r"\b(?:quarter\w*|q[1-4]|(?:three|six|nine|3|6|9)[\s-]+months?|first\s+half|"
                           r"year[\s-]to[\s-]date|ytd)\b")


class FigureChecker:
    """Reads an answer sentence by sentence: the metric each figure follows, the one company and fiscal year the
    sentence is about, and the fact that should have been stated."""

    def __init__(self, layer):
        self.layer = layer

    def check(self, text: str, tickers: Iterable[str] = (), years: Iterable[int] = ()) -> list[str]:
        try:
            return self._check(text or "", list(tickers), [int(y) for y in years])
        except Exception:  # noqa: BLE001 - a check must never break an answer
            log.exception("fact check failed")
            return []

    def _check(self, text: str, tickers: list[str], years: list[int]) -> list[str]:
        filings = self.layer.filings()
        if not filings or not text.strip():
            return []
        words, aliases = company_words(filings)
        known = {(f.get("ticker") or "").upper() for f in filings}
        context_tickers = [t.upper() for t in tickers if t.upper() in known]
        warnings: list[str] = []
        done: set = set()
        for sentence in _sentences(text):
            low = normalize(sentence)
            if _PART_OF_YEAR.search(low):
                continue
            mentions = [m for m in find_mentions(sentence, words) if not m.qualified]
            if not mentions:
                continue
            named = tickers_named(low, aliases) or context_tickers
            if len(named) != 1:
                continue
            ticker = named[0]
            fys = sorted(self.layer.annual_filings(ticker))
            ys = [y for y in fiscal_years_named(low, filings) if y in fys or y + 1 in fys]
            if not ys:
                ys = years if len(years) == 1 else ([fys[-1]] if not years and fys else [])
            if len(set(ys)) != 1:
                continue
            year = ys[0]
            numbers = _numbers(sentence)
            if not numbers:
                continue
            cues = bool(CHANGE_WORDS.search(low) or COMPARE_WORDS.search(low))
            # Each figure belongs to the metric named closest before it (or, failing that, right after it).
            owned: dict[int, list[tuple[dict, bool]]] = defaultdict(list)
            for n in numbers:
                before = [i for i, m in enumerate(mentions) if m.end <= n["start"]]
                if before:
                    i = before[-1]
                    gap = low[mentions[i].end:n["start"]]
                    gap = re.sub(r"\b(?:19|20)\d{2}\b", "", gap)
                    owned[i].append((n, len(gap) <= 30 and not re.search(r"\d", gap)))
                else:
                    owned[0].append((n, False))
            for i, nums in owned.items():
                mt = mentions[i]
                key = (mt.metric_key, ticker, year)
                if key in done:
                    continue
                v = self.layer.value(mt.metric_key, ticker, year)
                if v is None:
                    continue
                problem = self._contradiction(v, nums, ticker, year, cues)
                if problem:
                    done.add(key)
                    where = (f" ({v.fact.concept}, {v.fact.period_text()})" if v.fact else f" (= {v.metric.formula})")
                    warnings.append(
                        f"Check this figure: the answer gives {lower_label(v.label)} of {v.who()} for FY{year} as "
                        f"{problem}, but the filing's {_provenance(v)} says {v.display()}{where}."
                    )
        return warnings

    def _contradiction(self, v: Value, nums: list[tuple[dict, bool]], ticker: str, year: int,
                       cues: bool) -> str | None:
        """What is wrong with the figures a sentence gives for `v` (None when one states it correctly or none is
        about it)."""
        percent = v.kind in ("percent", "pure")
        expected = v.amount * (100 if percent else 1)
        precision = 0.01 if percent else min(
            (10 ** -precision_digits(leaf.fact.decimals) if precision_digits(leaf.fact.decimals) < 99 else 0.0)
            for leaf in v.reported_leaves()
        ) if v.reported_leaves() else 0.0
        suspects = []
        for n, direct in nums:
            if n["pct"] != percent:
                continue
            if v.kind == "per_share" and n["scale"] not in (None, 1):
                continue
            interps = n["candidates"] if v.kind == "money" else [(n["value"], n["unit"])]
            for c, u in interps:
                tol = 0.5 * u if u <= precision * 1.0001 else u
                if abs(c - expected) <= tol + 1e-9 * abs(expected):
                    return None  # the sentence states the right figure
            best = None
            for c, u in interps:
                if expected == 0 or c == 0 or (c > 0) != (expected > 0):
                    continue
                ratio = c / expected
                if 0.5 <= ratio <= 2.0 and (best is None or abs(ratio - 1) < abs(best[0] / expected - 1)):
                    best = (c, u)
            if best is not None:
                suspects.append((n, direct, best))
        for n, direct, (c, u) in suspects:
            other_year = None
            for y in (year - 1, year + 1):
                w = self.layer.value(v.metric, ticker, y)
                if w is not None and abs(w.amount * (100 if percent else 1) - c) <= u:
                    other_year = y
                    break
            if other_year is not None:
                if cues:
                    continue  # "up from $X in 2023": the other year's figure, named as such
                return f"{n['raw']} (that is the FY{other_year} figure)"
            if not direct and any(abs(c - o) <= 0.5 * u for o in self._company_values(ticker)):
                continue  # another real figure of the company, not tied to this metric in the sentence
            return n["raw"]
        return None

    def _company_values(self, ticker: str) -> list[float]:
        vals = []
        for f in self.layer.filings(ticker):
            for g in self.layer.view(f).groups:
                vals.append(g.value)
                if unit_kind(g.unit) == "pure":
                    vals.append(g.value * 100)
        return vals


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?;])\s+(?=[A-Z(\[$-])|\n+", text) if s.strip()]


def _numbers(sentence: str) -> list[dict]:
    """Figures in a sentence with every plausible reading: (value, rounding unit) pairs. A bare number may be in
    units, thousands or millions; a year, a one-digit list number and a citation marker are no figures."""
    out = []
    for n in parse_numbers(sentence):
        if not worth_checking(n):
            continue
        if sentence[max(0, n.start - 1):n.start] == "[":
            continue
        value = -n.value if n.negative else n.value
        step = n.ulp
        if n.pct:
            out.append({"raw": n.raw, "value": value, "unit": step, "pct": True, "scale": None, "candidates": [],
                        "start": n.start})
            continue
        if n.scaled:
            cands = [(value * n.scale, step * n.scale)]
            scale = n.scale
        else:
            cands = [(value, step), (value * 1e6, step * 1e6), (value * 1e3, step * 1e3)]
            scale = 1 if n.money else None
        out.append({"raw": n.raw, "value": value, "unit": step, "pct": False, "scale": scale, "candidates": cands,
                    "start": n.start})
    return out


# ==============================================================================================================
# The engine's wrapper: check the finished answer against the facts


class CheckedStream:
    """Wraps an AnswerStream: yields its pieces, then (for a language-model answer) adds a warning for every
    figure that contradicts the XBRL fact of the metric and period it talks about. `.facts` is the FactAnswer
    that was given to the answer (None when the question was not answered from facts).

    When the facts answered, the answer leads with their exact figures (rag.answer.stream); a model's text after
    them that states another figure for the same metric and period is then shown as the contradiction it is: a
    last piece says that the model's text disagrees with the exact figure above it, which stands."""

    def __init__(self, inner, layer, tickers=(), years=(), facts: FactAnswer | None = None):
        self.inner = inner
        self.layer = layer
        self.tickers = list(tickers)
        self.years = list(years)
        self.facts = facts
        self._checked = False

    def __iter__(self) -> Iterator[str]:
        yield from self.inner
        note = self.check()
        if note:
            yield note

    def check(self) -> str | None:
        """Adds the warnings; returns the note (already added to the answer's text) for a model's text that
        contradicts the exact figures it follows, else None."""
        res = getattr(self.inner, "result", None)
        if self._checked or res is None:
            return None
        self._checked = True
        if res.refused or res.extractive or not (res.answer or "").strip():
            return None
        try:
            checked = self.layer.check_answer(res.answer, self.tickers, self.years)
        except FactStoreUnavailable:  # the answer already says the facts could not be read (rag.engine)
            return None
        for w in checked:
            if w not in res.warnings:
                res.warnings.append(w)
        if not checked or self.facts is None:
            return None
        note = ("\n\n**Note:** the model's text above disagrees with the exact figure shown first, which is the "
                "filing's own XBRL data (see the warnings): rely on the figure first.")
        res.answer = (res.answer + note).strip()
        return note

    @property
    def result(self):
        return self.inner.result

    def consume(self):
        for _ in self:
            pass
        return self.result

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _provenance(v) -> str:
    """What the checked figure was read from: the XBRL data, or a PDF's statement table or cover page (a PDF has no
    XBRL)."""
    fact = getattr(v, "fact", None)
    return f"{fact.pdf_place()} (read from the PDF)" if fact is not None and fact.from_pdf else "XBRL data"
