"""Phrasings: how an analyst words a figure, written as data (rag/data/metrics.toml) and matched word by word.

The notation is small on purpose, so that a new way of asking is one line of data:
- a word matches itself or its plural ("revenue" matches "revenues"; "liability" matches "liabilities"); a word
  ending in `=` matches itself only ("share=" of "share of" is not the "shares" of "shares of common stock");
- a word ending in `*` matches any word it begins ("repurchas*");
- `a/b/c` is one word of several;
- `[a b]` is an optional run of words (each may be `a/b`);
- `…` is up to four other words (the company in "how much cash did <company> generate"); `……` up to eight;
- `(a/b)` first is a word that must come right before the phrasing, last one that must come right after it,
  neither part of it; `(!a/b)` a word that must not; `(… a/b)` last, a word among the next few;
- `<end>` says the clause ends here (punctuation, the text's end, or a word that opens a time or place).
Words are compared lower-case, with "’" as "'"; commas, hyphens and brackets between words are ignored, so
"selling, general and administrative" and "year-over-year" need no notation of their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Generic, Iterator, TypeVar

from .lexicon import phrase_texts, word_set

T = TypeVar("T")

# A word: letters and digits, joined by "&", "'" or "." inside it ("r&d", "sg&a", "u.s.", "company's"); "&" and
# "%" and "$" on their own.
_TOKEN = re.compile(r"[a-z0-9]+(?:[&'.][a-z0-9]+)*'?|[&%$]")
# What may stand between two words of one phrasing: spaces, commas, hyphens, brackets; a dot only after a short
# word, as an abbreviation's ("op. income").
_JOINER = re.compile(r"[\s,()\-]*")
_ABBREVIATION_DOT = re.compile(r"\.[\s,()\-]*")
_CLAUSE_OPENERS = word_set("clause_openers")
_GAP_WORDS = 4


@dataclass(frozen=True)
class Token:
    start: int
    end: int
    text: str


def tokens(low: str) -> list[Token]:
    """The words of lower-cased text with their offsets; "r & d" is one word, as "r&d" is."""
    raw = [Token(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(low)]
    out: list[Token] = []
    i = 0
    while i < len(raw):
        t = raw[i]
        if (i + 2 < len(raw) and raw[i + 1].text == "&" and len(t.text) <= 2 and len(raw[i + 2].text) <= 2
                and t.text.isalpha() and raw[i + 2].text.isalpha()):
            out.append(Token(t.start, raw[i + 2].end, t.text + "&" + raw[i + 2].text))
            i += 3
            continue
        out.append(t)
        i += 1
    return out


def _is_word(word: str) -> bool:
    """Is a phrasing's word one the text's words can be (a prefix ends in "*")?"""
    return bool(_TOKEN.fullmatch(word.removesuffix("*").removesuffix("=")))


def _word_matches(pattern: str, word: str) -> bool:
    word = word.removesuffix("'s").rstrip("'")
    if pattern.endswith("*"):
        return word.startswith(pattern[:-1])
    return word in _forms(pattern)


@dataclass(frozen=True)
class _Step:
    kind: str  # word | optional | gap | end | before | after
    words: tuple[str, ...] = ()
    negated: bool = False
    reach: int = 1  # how many words a context looks across
    run: tuple["_Step", ...] = ()
    size: int = 0


def _parse(text: str) -> tuple[_Step, ...]:
    steps: list[_Step] = []
    parts = re.findall(r"\[[^\]]*\]|\S+", text.lower().replace("’", "'"))
    for n, part in enumerate(parts):
        if part.startswith("["):
            inner = _parse(part[1:-1])
            if not inner or any(s.kind != "word" for s in inner):
                raise ValueError(f"an optional run holds words only: {text!r}")
            steps.append(_Step("optional", run=inner))
        elif set(part) == {"…"}:
            steps.append(_Step("gap", size=_GAP_WORDS * len(part)))
        elif part == "<end>":
            steps.append(_Step("end"))
        elif part.startswith("(") and part.endswith(")") and n in (0, len(parts) - 1):
            negated = part.startswith("(!")
            words = tuple(part[2 if negated else 1:-1].split("/"))
            steps.append(_Step("before" if n == 0 else "after", words=words, negated=negated))
        elif part == "(…" and n == len(parts) - 2 and parts[-1].endswith(")"):
            steps.append(_Step("after", words=tuple(parts[-1][:-1].split("/")), reach=_GAP_WORDS + 1))
            break
        else:
            words = tuple(part.split("/"))
            if not all(map(_is_word, words)):
                raise ValueError(f"not a word of a phrasing: {part!r} in {text!r}")
            steps.append(_Step("word", words=words))
    if not any(s.kind == "word" for s in steps):
        raise ValueError(f"a phrasing needs a word: {text!r}")
    return tuple(steps)


class _Text:
    """One text's words, and where a phrasing may not run on (between words split by ";", "?", ":" or ". ")."""

    def __init__(self, low: str):
        self.low = low
        self.words = tokens(low)
        self.joined = [True] + [self._joins(a, b) for a, b in zip(self.words, self.words[1:])]
        # A word hyphened to the one before it ("non-operating"): a phrasing neither starts nor ends inside the
        # compound, as "operating income" is not "non-operating income".
        self.hyphened = [False] + [low[a.end:b.start] == "-" for a, b in zip(self.words, self.words[1:])] + [False]

    def _joins(self, a: Token, b: Token) -> bool:
        gap = self.low[a.end:b.start]
        return bool(_JOINER.fullmatch(gap) or (len(a.text) <= 3 and _ABBREVIATION_DOT.fullmatch(gap)))

    def clause_ends(self, i: int) -> bool:
        """Does the clause end before word i (the text's end, punctuation, or a word that opens a time)?"""
        if i >= len(self.words) or i == 0:
            return True
        gap = self.low[self.words[i - 1].end:self.words[i].start]
        return any(ch in gap for ch in ",;:?!.") or self.words[i].text in _CLAUSE_OPENERS


class Phrasing(Generic[T]):
    """One line of data: a phrasing and what it names."""

    def __init__(self, text: str, names: T):
        self.text = text
        self.names = names
        self.steps = _parse(text)

    def example(self, filler: str = "acme") -> str:
        """The phrasing written out once: each word's first form, optional runs included, a gap as one word."""
        out: list[str] = []
        for step in self.steps:
            if step.kind == "word":
                out.append(step.words[0].rstrip("*="))
            elif step.kind == "optional":
                out.extend(sub.words[0].rstrip("*=") for sub in step.run)
            elif step.kind == "gap":
                out.append(filler)
            elif step.kind in ("before", "after") and not step.negated:
                out.append(step.words[0].rstrip("*="))
        return " ".join(out)

    def ends(self, t: _Text, i: int) -> Iterator[int]:
        """Where the phrasing, started at word i, can end (the index after its last word), shortest gaps first."""
        yield from self._walk(t, i, 0, True)

    def _walk(self, t: _Text, i: int, k: int, first: bool) -> Iterator[int]:
        if k == len(self.steps):
            yield i
            return
        step = self.steps[k]
        if step.kind in ("before", "after"):
            there = False
            for at in ([i - 1] if step.kind == "before" else range(i, i + step.reach)):
                if not (0 <= at < len(t.words) and t.joined[max(at, i)]):
                    break
                if any(_word_matches(w, t.words[at].text) for w in step.words):
                    there = True
                    break
            if there != step.negated:
                yield from self._walk(t, i, k + 1, first)
        elif step.kind == "end":
            if t.clause_ends(i):
                yield from self._walk(t, i, k + 1, first)
        elif step.kind == "word":
            if i < len(t.words) and (first or t.joined[i]) and any(_word_matches(w, t.words[i].text)
                                                                    for w in step.words):
                yield from self._walk(t, i + 1, k + 1, False)
        elif step.kind == "optional":
            j, ok = i, True
            for n, sub in enumerate(step.run):
                if not (j < len(t.words) and (first and n == 0 or t.joined[j])
                        and any(_word_matches(w, t.words[j].text) for w in sub.words)):
                    ok = False
                    break
                j += 1
            if ok:
                yield from self._walk(t, j, k + 1, False)
            yield from self._walk(t, i, k + 1, first)
        elif step.kind == "gap":
            for n in range(step.size + 1):
                if n and (i + n - 1 >= len(t.words) or not t.joined[i + n - 1]):
                    break
                yield from self._walk(t, i + n, k + 1, first and n == 0)


class Phrasebook(Generic[T]):
    """All phrasings of a vocabulary, found in a text the way a reader finds them: each phrasing at each place,
    its longest reading at a place first."""

    def __init__(self, phrasings: list[Phrasing[T]]):
        self.phrasings = phrasings
        # The words a phrasing can start with: a text's word looks up the few phrasings that may start there.
        self._by_word: dict[str, list[int]] = {}
        self._by_prefix: list[tuple[str, int]] = []
        self._anywhere: list[int] = []
        for n, p in enumerate(phrasings):
            firsts = _first_words(p.steps)
            if firsts is None:
                self._anywhere.append(n)
                continue
            for w in firsts:
                if w.endswith("*"):
                    self._by_prefix.append((w[:-1], n))
                else:
                    for form in _forms(w):
                        self._by_word.setdefault(form, []).append(n)

    def _starting(self, word: str) -> list[int]:
        w = word.removesuffix("'s").rstrip("'")
        return self._by_word.get(w, []) + [n for pre, n in self._by_prefix if w.startswith(pre)] + self._anywhere

    def find(self, low: str, only: T | None = None) -> list[tuple[int, int, Phrasing[T]]]:
        """Every place a phrasing is written in the (lower-cased) text: (start, end, phrasing), one reading per
        phrasing and starting word, the longest, in the vocabulary's order; phrasings of `only` when given."""
        t = _Text(low)
        found = []
        for i, word in enumerate(t.words):
            if t.hyphened[i]:
                continue
            for n in set(self._starting(word.text)):
                p = self.phrasings[n]
                if only is not None and p.names is not only:
                    continue
                end = max((e for e in p.ends(t, i) if not t.hyphened[e]), default=None)
                if end is not None and end > i:
                    found.append((n, t.words[i].start, t.words[end - 1].end))
        return [(s, e, self.phrasings[n]) for n, s, e in sorted(found)]

    def fullmatch(self, low: str, only: T | None = None) -> list[Phrasing[T]]:
        """The phrasings that read the whole text, nothing before or after."""
        t = _Text(low)
        if not t.words:
            return []
        return [p for p in self.phrasings if (only is None or p.names is only)
                and t.joined[0] and len(t.words) in set(p.ends(t, 0))]

    def starts(self, low: str, only: T | None = None) -> list[Phrasing[T]]:
        """The phrasings that read the text's first words."""
        t = _Text(low)
        return [p for p in self.phrasings if (only is None or p.names is only) and any(e > 0 for e in p.ends(t, 0))]

    def search(self, low: str) -> bool:
        return bool(self.find(low))


def _forms(word: str) -> set[str]:
    """A word as a text may write it: itself and its plurals (see _word_matches), or itself alone (`word=`)."""
    if word.endswith("="):
        return {word[:-1]}
    forms = {word, word + "s", word + "es"}
    if word.endswith("y"):
        forms.add(word[:-1] + "ies")
    return forms


def _first_words(steps: tuple[_Step, ...]) -> set[str] | None:
    """The words a phrasing may start with, or None when any word may (it starts with a gap)."""
    out: set[str] = set()
    for step in steps:
        if step.kind == "gap":
            return None
        if step.kind == "word":
            return out | set(step.words)
        if step.kind == "optional":
            out |= set(step.run[0].words)
    return out


def follows(phrasings: list[Phrasing], low: str, start: int) -> bool:
    """Does one of the phrasings read the words right after offset `start` (a `…` first lets it begin later)?"""
    t = _Text(low[start:])
    return any(any(e > 0 for e in p.ends(t, 0)) for p in phrasings) if t.words else False


class PhraseMatch:
    """Where a phrase list matched, read as a regular expression's match is: start(), end(), group()."""

    def __init__(self, text: str, start: int, end: int):
        self._text, self._start, self._end = text, start, end

    def start(self) -> int:
        return self._start

    def end(self) -> int:
        return self._end

    def group(self, _index: int = 0) -> str:
        return self._text[self._start:self._end]

    def span(self) -> tuple[int, int]:
        return self._start, self._end


def _lower(text: str) -> str:
    """Lower case, each character kept one character, so offsets stay those of the text."""
    low = text.lower()
    return low if len(low) == len(text) else "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


class PhraseList:
    """A named list of phrasings in rag/data/lexicon.toml, used where a pattern of words is asked for: the words
    that mark a change, a ranking, a total. Text is matched whatever its case."""

    def __init__(self, name: str):
        self.name = name
        self.book: Phrasebook[str] = Phrasebook([Phrasing(text, name) for text in phrase_texts(name)])

    def finditer(self, text: str) -> list[PhraseMatch]:
        """Each place, leftmost first, the longest reading there; none overlaps another."""
        low = _lower(text)
        out: list[PhraseMatch] = []
        for start, end, _p in sorted(self.book.find(low), key=lambda f: (f[0], -f[1])):
            if not out or start >= out[-1].end():
                out.append(PhraseMatch(text, start, end))
        return out

    def search(self, text: str, pos: int = 0) -> PhraseMatch | None:
        found = self.finditer(text[pos:]) if pos else self.finditer(text)
        if not found:
            return None
        return PhraseMatch(text, found[0].start() + pos, found[0].end() + pos)

    def ends(self, text: str) -> bool:
        """Does one of the phrasings run to the text's end (trailing spaces aside)?"""
        low = _lower(text).rstrip()
        return any(end == len(low) for _start, end, _p in self.book.find(low))

    def fullmatch(self, text: str) -> PhraseMatch | None:
        ok = text.strip() == text and self.book.fullmatch(_lower(text))
        return PhraseMatch(text, 0, len(text)) if ok else None
