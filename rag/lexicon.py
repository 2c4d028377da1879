"""Word lists as data (rag/data/lexicon.toml): the function words, hedges and generic words the engine reads past.
Loaded and checked once; imports nothing from rag, so any stage can read them."""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path

_DATA = Path(__file__).resolve().parent / "data" / "lexicon.toml"


@lru_cache(maxsize=1)
def _lists(path: Path = _DATA) -> dict[str, tuple[str, ...]]:
    """Every list, word lists and (under "phrases.") phrase lists, checked."""
    with path.open("rb") as f:
        data = tomllib.load(f)
    phrases = data.pop("phrases", {})
    data.update({f"phrases.{name}": texts for name, texts in phrases.items()})
    for name, words in data.items():
        if not isinstance(words, list) or not all(isinstance(w, str) and w == w.strip().lower() and w for w in words):
            raise ValueError(f"lexicon.toml: {name!r} must be a list of lower-case words")
        if len(set(words)) != len(words):
            raise ValueError(f"lexicon.toml: {name!r} holds a word twice")
    return {name: tuple(words) for name, words in data.items()}


def word_set(name: str) -> frozenset[str]:
    """The words of one list; an unknown name is a KeyError naming it."""
    lists = _lists()
    if name not in lists:
        raise KeyError(f"lexicon.toml has no list {name!r}")
    return frozenset(lists[name])


def phrase_texts(name: str) -> tuple[str, ...]:
    """The phrasings of one phrase list (rag.phrasing reads their notation)."""
    return _lists()[f"phrases.{name}"]
