"""Boilerplate by what it is: a sentence that other companies' filings print too, near word for word.

Every filer prints the same forward-looking-statements caution, the same "consider the following risks" preamble,
the same description of what a 10-K's Items hold. None of it answers a question about one company, yet it shares the
question's words ("risk factors"). Rather than list such phrasings, a sentence is asked of the index itself: keyword
search finds the passages that share its words most, and when passages of several other companies hold most of its
word triples, it recurs across filers and is boilerplate. An index of too few companies cannot tell, and says nothing.
"""

from __future__ import annotations

import threading

from .words import TOKEN_RE

MIN_WORDS = 8  # a shorter sentence ("Not applicable.") recurs by chance; headings are no quotable sentences anyway
OTHER_COMPANIES = 3  # other companies whose filings must print a near-copy
SEARCHED = 30  # passages keyword search returns for a sentence: near-copies share its rarer words, so rank high
NEAR_COPY = 0.6  # share of the sentence's word triples a passage must hold to be a near-copy of it


def triples(text: str) -> set[tuple[str, str, str]]:
    # Words and figures (the index's own tokens): two filers' "there were N holders of record" differ in the
    # figure, which is what such a sentence says.
    words = TOKEN_RE.findall(text.lower())
    return set(zip(words, words[1:], words[2:], strict=False))


def figures(text: str) -> set[str]:
    return {w for w in TOKEN_RE.findall(text) if w[0].isdigit()}


def near_copy(sentence: str, passage: str) -> bool:
    """Does the passage print the sentence near word for word: most of its word triples, and every figure of it?"""
    mine = triples(sentence)
    return bool(mine) and figures(sentence) <= figures(passage) \
        and len(mine & triples(passage)) >= NEAR_COPY * len(mine)


class RecurringSentences:
    """Which sentences of a company's passages other companies' filings print too. One per loaded index; answers
    are kept, since the same passages come back for many questions."""

    def __init__(self, index):
        self.index = index
        self._companies = len({t for t in index.columns["ticker"] if t})
        self._known: dict[tuple[str, str], bool] = {}
        self._lock = threading.Lock()

    def __call__(self, sentences: list[tuple[str, str]]) -> list[bool]:
        """For each (sentence, its company's ticker): does it recur in OTHER_COMPANIES other companies' filings?"""
        if self._companies <= OTHER_COMPANIES:
            return [False] * len(sentences)
        return [self._recurs(text, ticker) for text, ticker in sentences]

    def _recurs(self, text: str, ticker: str) -> bool:
        key = (text, ticker)
        with self._lock:
            if key in self._known:
                return self._known[key]
        others: set[str] = set()
        if len(triples(text)) >= MIN_WORDS - 2:
            for hit in self.index.keyword_search(text, SEARCHED):
                company = hit.node.metadata.get("ticker")
                if company and company != ticker and company not in others \
                        and near_copy(text, hit.node.get_content()):
                    others.add(company)
                    if len(others) >= OTHER_COMPANIES:
                        break
        recurs = len(others) >= OTHER_COMPANIES
        with self._lock:
            if len(self._known) > 20_000:  # bounded: recent questions' sentences
                self._known.clear()
            self._known[key] = recurs
        return recurs
