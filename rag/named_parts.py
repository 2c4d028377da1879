"""The words a question names a part of a figure with: the part of a share ("what percent of revenue came from
<region>", "<product> accounted for what share") and the source of an amount ("revenue from <service>", "earned
hauling <goods>"), found after the phrases that introduce them (rag/data/lexicon.toml) and read up to the word that
ends them."""

from __future__ import annotations

import re

from .lexicon import word_set
from .phrasing import PhraseList, follows

# What a share's part is said to come from ("came from <region>"; revenue "billed to" or "sold to" a customer), or
# to be ("what percent of its net sales were <product>"), or to make up ("<product> accounted for what percentage of
# its revenue"): the words that introduce the part (rag/data/lexicon.toml).
_PART_FROM = PhraseList("part_from")
_PART_IS = PhraseList("part_is")
_PART_MAKES_UP = PhraseList("part_makes_up")
_PART_ENDS = word_set("part_ends")
# The words of a part's or a source's name: a letter first, then letters, digits, "&", ".", "'" or "-".
_NAME_TOKEN = re.compile(r"[a-z][\w&.'-]*")
_NAME_OPENERS = word_set("name_openers")
_LEADING_WORD = re.compile(r"\w+")
# What a figure is said to come from: the words after "from", or after the activity that earned it, named by its
# verb in -ing right after the verb that asks the amount ("how much did it earn hauling <goods>", "what revenue did
# it book selling <services>"), up to a word that opens a time or another clause (rag/data/lexicon.toml).
_SOURCE_FROM = PhraseList("source_from")
_EARNED_BY = PhraseList("earned_by")
_NOT_ACTIVITY = word_set("not_activity")
_SOURCE_ENDS = word_set("source_ends")


def _name_after(text: str, at: int, ends: frozenset[str], closers: str) -> tuple[int, int] | None:
    """The span of the words naming a part or a source, which start at offset `at` after a space: an article or a
    possessive pronoun skipped, then up to five words, up to the first word of `ends`, a mark of `closers` or the
    text's end ("from <region> in fiscal 2025" -> "<region>"). None when no such end comes within five words."""
    if not text[at:at + 1].isspace():
        return None
    at = _skip_spaces(text, at)
    first = _NAME_TOKEN.match(text, at)
    if first and first.group() in _NAME_OPENERS and text[first.end():first.end() + 1].isspace():
        at = _skip_spaces(text, first.end())
    start = at
    for _ in range(5):
        word = _NAME_TOKEN.match(text, at)
        if word is None:
            return None
        at = _skip_spaces(text, word.end())
        following = _LEADING_WORD.match(text, at)
        if at == len(text) or text[at] in closers or (at > word.end() and following and following.group() in ends):
            return start, word.end()
        if at == word.end():
            return None
    return None


def _skip_spaces(text: str, at: int) -> int:
    return len(text) - len(text[at:].lstrip())


def _parts_after(text: str, pos: int, introduced: PhraseList) -> list[tuple[int, int, int]]:
    """Each part of a share named after offset `pos` by the words that introduce it (_PART_FROM, _PART_IS): where
    those words start, and the part's span; no part inside another's span."""
    out: list[tuple[int, int, int]] = []
    for m in introduced.finditer(text[pos:]):
        said_at, at = pos + m.start(), pos + m.end()
        following = _LEADING_WORD.match(text, _skip_spaces(text, at))
        if introduced is _PART_IS and following and following.group().endswith("ed"):
            continue  # "was generated from <region>": the verb says how; _PART_FROM reads the part after it
        span = _name_after(text, at, _PART_ENDS, "?.,;(")
        if span and not (out and said_at < out[-1][2]):
            out.append((said_at, *span))
    return out


def part_as_subject(text: str) -> tuple[int, int] | None:
    """The part as the subject of the share it makes up ("<product> accounted for what percentage of its revenue"),
    up to five words at the question's start; an owner's possessive before it ("<company>'s <product>") names whose
    part it is, not the part."""
    at = 0
    first = _NAME_TOKEN.match(text)
    if first and first.group().endswith("'s") and text[first.end():first.end() + 1].isspace():
        at = _skip_spaces(text, first.end())
    article = _NAME_TOKEN.match(text, at)
    if article and article.group() in ("the", "its") and text[article.end():article.end() + 1].isspace():
        at = _skip_spaces(text, article.end())
    start = at
    for _ in range(5):
        word = _NAME_TOKEN.match(text, at)
        if word is None or not text[word.end():word.end() + 1].isspace():
            return None
        if follows(_PART_MAKES_UP.book.phrasings, text, word.end()):
            return start, word.end()
        at = _skip_spaces(text, word.end())
    return None


def parts_said(text: str, pos: int) -> list[tuple[int, int, int]]:
    """Each part of a share said after offset `pos`, after "from" (_PART_FROM) or a verb of being (_PART_IS): where
    the words that introduce it start, and the part's span."""
    return _parts_after(text, pos, _PART_FROM) + _parts_after(text, pos, _PART_IS)


def first_word(text: str, at: int) -> str:
    """The word (letters, digits, "_") that starts at offset `at`, or ""."""
    word = _LEADING_WORD.match(text, at)
    return word.group() if word else ""


def sources_after(text: str, pos: int) -> list[tuple[int, int, int]]:
    """Each source named after offset `pos` (see _SOURCE_FROM): where the words that introduce it start, and the
    source's span; no source inside another's span."""
    found = [(pos + m.start(), pos + m.end()) for m in _SOURCE_FROM.finditer(text[pos:])]
    for m in _EARNED_BY.finditer(text[pos:]):
        at = _skip_spaces(text, pos + m.end())
        activity = _LEADING_WORD.match(text, at)
        if (at > pos + m.end() and activity and activity.group().isalpha() and len(activity.group()) >= 6
                and activity.group().endswith("ing") and activity.group() not in _NOT_ACTIVITY):
            found.append((pos + m.start(), activity.end()))
    out: list[tuple[int, int, int]] = []
    for said_at, at in sorted(found):
        span = _name_after(text, at, _SOURCE_ENDS, "?.,;:(")
        if span and not (out and said_at < out[-1][2]):
            out.append((said_at, *span))
    return out
