"""The citation panel's page view (rag.page_render): a PDF page rendered, the cited passage's lines highlighted on
it, and a clear reason when the page cannot be shown. PDFs are written here with PDFium itself (invented text), and
one real quarterly report of ../shared is rendered when present."""

from __future__ import annotations

import io
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from PIL import Image

from rag.page_render import PageUnavailable, passage_boxes, render_page
from tests.filings import SHARED
from tests.pdf_files import write_pdf as _write_pdf

LINES = [
    (260, "Quarterly report of an invented company"),
    (200, "Total revenue 1,234 1,111"),
    (180, "Cost of revenue 567 555"),
    (120, "Nothing else of note is said on this line"),
    (100, "The widgets were shipped to harbours along the coast"),
]


def write_pdf(path: Path, lines=LINES, size=(400, 300)) -> Path:
    return _write_pdf(path, [lines], size=size, font_size=12, x=20)


def _amber(pixel) -> bool:
    r, g, b = pixel[:3]
    return r > 225 and 190 < g < 245 and b < 205


def amber_share(image: Image.Image, box) -> float:
    left, top, right, bottom = (int(v) for v in box)
    pixels = [image.getpixel((x, y)) for x in range(left, right) for y in range(top, bottom)]
    return sum(map(_amber, pixels)) / max(1, len(pixels))


def line_box(path: Path, y: float, scale: float) -> tuple[int, int, int, int]:
    """The pixel box of the line drawn at baseline `y` (points), from its own characters."""
    document = pdfium.PdfDocument(str(path))
    textpage = document[0].get_textpage()
    height = document[0].get_size()[1]
    boxes = [textpage.get_charbox(i) for i in range(textpage.count_chars())]
    boxes = [b for b in boxes if b[2] > b[0] and abs(b[1] - y) < 4]
    left, bottom = min(b[0] for b in boxes), min(b[1] for b in boxes)
    right, top = max(b[2] for b in boxes), max(b[3] for b in boxes)
    return (round(left * scale), round((height - top) * scale), round(right * scale), round((height - bottom) * scale))


def test_a_table_row_of_the_passage_is_highlighted_and_its_neighbours_are_not(tmp_path):
    pdf = write_pdf(tmp_path / "tiny.pdf")
    # The chunk holds the row as the reader rebuilt it (cells and column heads), not as the page prints it.
    view = render_page(pdf, 1, "Income statement\n| Total revenue | 2024: 1,234 | 2023: 1,111 |", width=800)
    assert (view.page, view.page_count, view.width, view.height) == (1, 1, 800, 600)
    assert len(view.boxes) == 1
    image = Image.open(io.BytesIO(view.png)).convert("RGB")
    row, below, title = line_box(pdf, 200, 2.0), line_box(pdf, 180, 2.0), line_box(pdf, 260, 2.0)
    # The rectangle sits on the row (within a few pixels of its characters' box) ...
    box = view.boxes[0]
    assert abs(box[1] - row[1]) <= 6 and abs(box[3] - row[3]) <= 6 and box[0] <= row[0] and box[2] >= row[2]
    # ... and it is drawn: amber inside the row, none on the next row or the title.
    assert amber_share(image, row) > 0.4
    assert amber_share(image, below) == 0 and amber_share(image, title) == 0
    assert amber_share(image, (0, 0, 800, row[1] - 8)) == 0


def test_prose_is_found_by_runs_of_its_words(tmp_path):
    pdf = write_pdf(tmp_path / "tiny.pdf")
    passage = "Meanwhile the widgets were shipped to harbours along the coast, as planned."
    view = render_page(pdf, 1, passage, width=800)
    image = Image.open(io.BytesIO(view.png)).convert("RGB")
    assert len(view.boxes) == 1
    assert amber_share(image, line_box(pdf, 100, 2.0)) > 0.4
    for y in (260, 200, 180, 120):  # "of" or "the" alone mark nothing
        assert amber_share(image, line_box(pdf, y, 2.0)) == 0


def test_a_passage_not_on_the_page_marks_nothing_but_the_page_still_renders(tmp_path):
    pdf = write_pdf(tmp_path / "tiny.pdf")
    view = render_page(pdf, 1, "Dividends declared per share rose in every quarter 9,876", width=400)
    assert view.boxes == () and view.png.startswith(b"\x89PNG")
    assert render_page(pdf, 1, "", width=400).boxes == ()
    textpage = pdfium.PdfDocument(str(pdf))[0].get_textpage()
    assert passage_boxes(textpage, "cost of revenue 567 555")  # the same row in the page's own words


def test_a_missing_or_unreadable_pdf_says_why(tmp_path):
    with pytest.raises(PageUnavailable, match="no longer where it was indexed"):
        render_page(tmp_path / "gone.pdf", 1, "x")
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog")
    with pytest.raises(PageUnavailable, match="could not be read"):
        render_page(broken, 1, "x")
    pdf = write_pdf(tmp_path / "tiny.pdf")
    with pytest.raises(PageUnavailable, match="has no page 3"):
        render_page(pdf, 3, "x")


def _real_pdf() -> Path:
    folder = SHARED / "corpus" / "pdf-10q"
    pdfs = sorted(folder.glob("*.pdf")) if folder.is_dir() else []
    if not pdfs:
        pytest.skip(f"{folder} holds no PDF: the shared corpus (../shared beside the project) is needed here")
    return pdfs[0]


def test_a_real_quarterly_report_page_highlights_the_lines_of_its_passage():
    path = _real_pdf()
    document = pdfium.PdfDocument(str(path))
    # A page of running prose: the page with the most long lines among the first twenty.
    best = max(range(min(20, len(document))),
               key=lambda i: sum(len(t) > 80 for t in document[i].get_textpage().get_text_range().splitlines()))
    page = document[best]
    textpage = page.get_textpage()
    lines = [t for t in textpage.get_text_range().splitlines() if len(t) > 80]
    assert len(lines) >= 6, f"{path.name} page {best + 1} has too little prose for this test"
    chosen = lines[2:5]  # three consecutive long lines from inside the page
    width = 1000
    view = render_page(path, best + 1, " ".join(chosen), width=width)
    scale = width / page.get_size()[0]
    height = page.get_size()[1]
    # Where the chosen lines are printed, from PDFium's own search of the page.
    expected = []
    for text in chosen:
        search = textpage.search(text.strip()[:60], match_case=True)
        found = search.get_next()
        assert found, text
        rects = [textpage.get_rect(i) for i in range(textpage.count_rects(*found))]
        top = min(height - r[3] for r in rects) * scale
        bottom = max(height - r[1] for r in rects) * scale
        expected.append((top, bottom))
    assert len(view.boxes) >= len(chosen)
    # Every chosen line is covered by a rectangle, and no rectangle lies far from them.
    for top, bottom in expected:
        assert any(b[1] <= top + 4 and b[3] >= bottom - 4 for b in view.boxes), (top, bottom, view.boxes)
    lo, hi = min(t for t, _b in expected) - 30, max(b for _t, b in expected) + 30
    assert all(lo <= b[1] and b[3] <= hi for b in view.boxes), (lo, hi, view.boxes)
    image = Image.open(io.BytesIO(view.png)).convert("RGB")
    inside = amber_share(image, view.boxes[0])
    outside = amber_share(image, (0, 0, image.size[0], max(0, int(lo) - 5)))
    assert inside > 0.3 and outside < 0.01, (inside, outside)
