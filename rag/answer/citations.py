"""The [n] citation markers of an answer: their syntax, the numbers they name, and the filter that normalises them
while the answer streams ([1, 2] -> [1][2], [Source 3] -> [3]) and drops those that name no given source, and the
placeholders a model copies from its instructions instead of citing ("[n]", "[citation]", "[source]", "[?]": the
list is data, `placeholder_citations` in rag/data/lexicon.toml).
"""

from __future__ import annotations

import re

from ..lexicon import word_set

PLACEHOLDERS = word_set("placeholder_citations")
_PLACEHOLDER_CHARS = 24  # the longest bracketed text read as a possible placeholder

CITATION_BODY = r"(?:sources?|src|refs?|doc(?:ument)?s?)?\s*#?\s*\d{1,3}(?:\s*(?:,|;|and|&|-|–)\s*(?:#?\s*\d{1,3}))*"
CITATION_MARKER = re.compile(r"\[\s*(" + CITATION_BODY + r")\s*\]", re.IGNORECASE)


def citation_numbers(body: str) -> list[int]:
    """The source numbers a marker's body names: "1, 3" -> [1, 3], "Source 2" -> [2], "2-4" -> [2, 3, 4]. The body
    is one CITATION_MARKER matched, so its words ("source", "and") and separators only part its numbers."""
    kept = "".join(ch if ch.isdigit() or ch in "-–" else " " for ch in body).replace("–", "-")
    kept = "-".join(part.strip() for part in kept.split("-"))  # "2 - 4" -> "2-4"
    nums: list[int] = []
    for part in kept.split():
        ends = [e for e in part.split("-") if e.isdigit()]
        if len(ends) == 2 and part.count("-") == 1:
            a, b = int(ends[0]), int(ends[1])
            nums.extend(range(a, b + 1) if 0 < b - a < 20 else [a, b])
        else:
            nums.extend(int(e) for e in ends)
    return nums


def placeholder_spans(text: str) -> list[tuple[int, int]]:
    """Where the text holds a placeholder marker ("[n]", "[citation]", "[source]", "[?]"): bracketed text that names
    no source, from the lexicon's list, whatever its case and inner blanks."""
    spans = []
    at = text.find("[")
    while at != -1:
        close = text.find("]", at + 1, at + 2 + _PLACEHOLDER_CHARS)
        inner = " ".join(text[at + 1:close].lower().split()) if close != -1 else ""
        if close != -1 and inner.find("[") == -1 and inner in PLACEHOLDERS:
            spans.append((at, close + 1))
        at = text.find("[", at + 1)
    return spans


class CitationFilter:
    """Normalises [n] markers while streaming ([1, 2] -> [1][2], [Source 3] -> [3]) and drops those that name
    no given source, so that the streamed text and the final answer agree."""

    def __init__(self, valid: set[int]):
        self.valid = valid
        self.buf = ""
        self.invalid: list[int] = []
        self.placeholders: list[str] = []  # placeholder markers removed ("[n]"), each once

    def _rewrite(self, m: re.Match) -> str:
        nums = citation_numbers(m.group(1))
        if not nums:
            return m.group(0)
        keep = []
        for n in nums:
            if n in self.valid:
                keep.append(n)
            elif n not in self.invalid:
                self.invalid.append(n)
        return "".join(f"[{n}]" for n in dict.fromkeys(keep))

    def feed(self, piece: str) -> str:
        self.buf += piece
        lt = self.buf.rfind("[")
        if lt != -1 and "]" not in self.buf[lt:] and len(self.buf) - lt <= 40:
            cut = lt
        else:
            cut = len(self.buf)
        # Hold back the blanks before the cut too: if a marker there is dropped, so is the space before it.
        while cut > 0 and self.buf[cut - 1] in " \t":
            cut -= 1
        ready, self.buf = self.buf[:cut], self.buf[cut:]
        return self._clean(ready)

    def _clean(self, text: str) -> str:
        before = len(self.invalid)
        text = CITATION_MARKER.sub(self._rewrite, text)
        spans = placeholder_spans(text)
        self.placeholders.extend(dict.fromkeys(m for s, e in spans if (m := text[s:e]) not in self.placeholders))
        for start, end in reversed(spans):
            text = text[:start] + text[end:]
        if len(self.invalid) > before or spans or "[]" in text:
            text = re.sub(r"[ \t]+(?=[.,;:!?)]|$)", "", text)
            text = re.sub(r"[ \t]{2,}", " ", text)
        return text

    def flush(self) -> str:
        rest, self.buf = self.buf, ""
        return self._clean(rest)
