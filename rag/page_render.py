"""A PDF page as an image, with a cited passage's lines marked on it: the page view of a citation.

The page is rendered by PDFium (pypdfium2) and the passage is found on it from the page's own character boxes:
the page's words are read with their boxes, line by line, and a word is marked where it continues a run of three
words the passage also has in that order (prose), or where its whole line is made of the passage's words and holds
one of its figures (a table row, whatever shape the reader gave the row in the chunk). Each line's marked words get
one translucent rectangle. Nothing here knows Streamlit; the caller caches what it renders.
"""

from __future__ import annotations

import difflib
import io
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image, ImageDraw

from .words import TOKEN_RE

# Words as compared are rag.words' tokens, lower-cased, figures without their commas (so "4,816" and "4816" meet).
_TOKEN = TOKEN_RE
# A run of this many words, in the passage's order, marks prose.
RUN = 3
# A line whose words are nearly all the passage's, and that holds one of its figures, is marked whole.
LINE_SHARE = 0.8
HIGHLIGHT = (255, 196, 0, 96)  # translucent amber, drawn over the page
OUTLINE = (214, 120, 0, 200)
DEFAULT_WIDTH = 1100  # pixels across the rendered page
MAX_SCALE = 4.0


class PageUnavailable(Exception):
    """The page cannot be shown (the file is gone, unreadable, or has no such page); str() says why, for a reader."""


@dataclass(frozen=True)
class Word:
    token: str
    box: tuple[float, float, float, float]  # left, bottom, right, top in PDF points
    line: int


@dataclass(frozen=True)
class PageView:
    """A rendered page: PNG bytes, their size in pixels, and the rectangles drawn (pixels: left, top, right,
    bottom)."""
    png: bytes
    width: int
    height: int
    page: int  # 1-based
    page_count: int
    boxes: tuple[tuple[int, int, int, int], ...] = field(default_factory=tuple)


def tokens(text: str) -> list[str]:
    return [m.group(0).replace(",", "").lower() for m in _TOKEN.finditer(text or "")]


def _is_figure(token: str) -> bool:
    """A figure of three digits or more that is not a year (a year alone, as in a column head, marks no line)."""
    digits = token.replace(".", "")
    return digits.isdigit() and len(digits) >= 3 and not (len(digits) == 4 and 1900 <= int(digits) < 2100)


def page_words(textpage) -> list[Word]:
    """The page's words with their boxes, numbered by line (PDFium's own line breaks)."""
    count = textpage.count_chars()
    chars = "".join(chr(pdfium_c.FPDFText_GetUnicode(textpage.raw, i) or 32) for i in range(count))
    words: list[Word] = []
    line = 0
    at = 0
    for text_line in chars.split("\n"):
        for m in _TOKEN.finditer(text_line):
            boxes = [textpage.get_charbox(i) for i in range(at + m.start(), at + m.end())]
            boxes = [b for b in boxes if b[2] > b[0] and b[3] > b[1]]
            if not boxes:
                continue
            box = (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes),
                   max(b[3] for b in boxes))
            words.append(Word(m.group(0).replace(",", "").lower(), box, line))
        at += len(text_line) + 1
        line += 1
    return words


def marked_words(words: list[Word], passage: str) -> list[bool]:
    """Which of the page's words belong to the passage (see the module's docstring). Runs are aligned in order
    (difflib's matching blocks), so a sentence the page repeats elsewhere is marked once, where the passage is."""
    seq = tokens(passage)
    if not seq or not words:
        return [False] * len(words)
    page = [w.token for w in words]
    marked = [False] * len(words)
    matcher = difflib.SequenceMatcher(None, page, seq, autojunk=False)
    for block in matcher.get_matching_blocks():
        if block.size >= RUN:
            for j in range(block.a, block.a + block.size):
                marked[j] = True
    vocabulary = set(seq)
    by_line: dict[int, list[int]] = {}
    for i, w in enumerate(words):
        by_line.setdefault(w.line, []).append(i)
    for members in by_line.values():
        ours = [i for i in members if page[i] in vocabulary]
        if (len(members) >= 2 and len(ours) >= LINE_SHARE * len(members)
                and any(_is_figure(page[i]) for i in ours)):
            for i in ours:
                marked[i] = True
    return marked


def passage_boxes(textpage, passage: str) -> list[tuple[float, float, float, float]]:
    """One rectangle per line of the page that holds the passage's words (PDF points: left, bottom, right, top)."""
    words = page_words(textpage)
    lines: dict[int, list[tuple[float, float, float, float]]] = {}
    for word, mark in zip(words, marked_words(words, passage)):
        if mark:
            lines.setdefault(word.line, []).append(word.box)
    return [(min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))
            for _line, boxes in sorted(lines.items())]


def _to_pixels(box, crop: tuple[float, float, float, float], scale: float, size: tuple[int, int]):
    left, bottom, right, top = box
    x0, y0, _x1, y1 = crop
    pad = 1.5
    px = (round((left - x0 - pad) * scale), round((y1 - top - pad) * scale),
          round((right - x0 + pad) * scale), round((y1 - bottom + pad) * scale))
    w, h = size
    return (max(0, px[0]), max(0, px[1]), min(w, px[2]), min(h, px[3]))


def render_page(path: str | Path, page_number: int, passage: str = "", *, width: int = DEFAULT_WIDTH) -> PageView:
    """Page `page_number` (1-based) of the PDF at `path` as a PNG `width` pixels across, the passage's lines
    highlighted. Raises PageUnavailable, saying why, when the file or the page cannot be read."""
    path = Path(path)
    if not path.is_file():
        raise PageUnavailable(f"The PDF {path.name} is no longer where it was indexed.")
    try:
        document = pdfium.PdfDocument(str(path))
    except (pdfium.PdfiumError, OSError) as exc:
        raise PageUnavailable(f"The PDF {path.name} could not be read ({exc}).") from exc
    try:
        count = len(document)
        if not 1 <= int(page_number) <= count:
            raise PageUnavailable(f"The PDF {path.name} has no page {page_number} (it has {count}).")
        page = document[int(page_number) - 1]
        try:
            crop = page.get_cropbox()
            page_width = max(1.0, crop[2] - crop[0])
            scale = min(MAX_SCALE, width / page_width)
            image = page.render(scale=scale).to_pil().convert("RGBA")
            rects: list[tuple[int, int, int, int]] = []
            # Boxes are in the page's own coordinates; a turned page would need them turned too, so it is shown
            # without marks rather than with misplaced ones.
            if passage.strip() and page.get_rotation() == 0:
                textpage = page.get_textpage()
                try:
                    rects = [_to_pixels(b, crop, scale, image.size) for b in passage_boxes(textpage, passage)]
                finally:
                    textpage.close()
        finally:
            page.close()
    except pdfium.PdfiumError as exc:
        raise PageUnavailable(f"Page {page_number} of {path.name} could not be rendered ({exc}).") from exc
    finally:
        document.close()
    if rects:
        overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
        draw = ImageDraw.Draw(overlay)
        for r in rects:
            draw.rectangle(r, fill=HIGHLIGHT, outline=OUTLINE, width=1)
        image = Image.alpha_composite(image, overlay)
    out = io.BytesIO()
    image.convert("RGB").save(out, format="PNG", optimize=False)
    return PageView(out.getvalue(), image.size[0], image.size[1], int(page_number), count, tuple(rects))
