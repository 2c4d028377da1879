"""Small real PDFs written byte by byte for the PDF reader's tests: text set at given positions in Helvetica, one
list of (x, y from the page's top, text) per page. No PDF library is needed to write them; PDFium reads them as
it reads any filing."""

from __future__ import annotations

from pathlib import Path

PAGE_WIDTH, PAGE_HEIGHT = 612, 792


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def write_pdf(path: Path, pages: list[list[tuple[float, float, str]]], size: float = 9.0) -> Path:
    """Write a PDF whose page n holds pages[n]'s texts, each at (x, y from the top), and return its path."""
    objects: list[bytes] = []
    page_ids = []
    font_id = 3
    for n, texts in enumerate(pages):
        stream = "".join(f"BT /F1 {size} Tf 1 0 0 1 {x:.2f} {PAGE_HEIGHT - y:.2f} Tm ({_escape(t)}) Tj ET\n"
                         for x, y, t in texts).encode("latin-1")
        content_id = 4 + 2 * n
        page_ids.append(content_id + 1)
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"endstream")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {PAGE_WIDTH} {PAGE_HEIGHT}] "
                       f"/Resources << /Font << /F1 {font_id} 0 R >> >> /Contents {content_id} 0 R >>".encode())
    kids = " ".join(f"{i} 0 R" for i in page_ids)
    head = [b"<< /Type /Catalog /Pages 2 0 R >>",
            f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(head + objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(offsets) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(offsets) + 1, xref)
    Path(path).write_bytes(bytes(out))
    return Path(path)
