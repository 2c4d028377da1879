"""The [n] citation markers of an answer: their syntax, the numbers they name, and the filter that normalises them
while the answer streams ([1, 2] -> [1][2], [Source 3] -> [3]) and drops those that name no given source.
"""

from __future__ import annotations

import re

CITATION_BODY = r"(?:sources?|src|refs?|doc(?:ument)?s?)?\s*#?\s*\d{1,3}(?:\s*(?:,|;|and|&|-|–)\s*(?:#?\s*\d{1,3}))*"
CITATION_MARKER = re.compile(r"\[\s*(" + CITATION_BODY + r")\s*\]", re.IGNORECASE)


def citation_numbers(body: str) -> list[int]:
    """The source numbers a marker's body names: "1, 3" -> [1, 3], "Source 2" -> [2], "2-4" -> [2, 3, 4]."""
    body = re.sub(r"(?i)sources?|src|refs?|doc(?:ument)?s?|#", "", body)
    nums: list[int] = []
    for part in re.split(r"\s*(?:,|;|and|&)\s*", body):
        part = part.strip()
        m = re.fullmatch(r"(\d{1,3})\s*[-–]\s*(\d{1,3})", part)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            nums.extend(range(a, b + 1) if 0 < b - a < 20 else [a, b])
        elif part.isdigit():
            nums.append(int(part))
    return nums


class CitationFilter:
    """Normalises [n] markers while streaming ([1, 2] -> [1][2], [Source 3] -> [3]) and drops those that name
    no given source, so that the streamed text and the final answer agree."""

    def __init__(self, valid: set[int]):
        self.valid = valid
        self.buf = ""
        self.invalid: list[int] = []

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
        if len(self.invalid) > before or "[]" in text:
            text = re.sub(r"[ \t]+(?=[.,;:!?)]|$)", "", text)
            text = re.sub(r"[ \t]{2,}", " ", text)
        return text

    def flush(self) -> str:
        rest, self.buf = self.buf, ""
        return self._clean(rest)
