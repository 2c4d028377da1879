"""Small PDFs written on the fly with PDFium itself (invented text), for tests that must not depend on ../shared."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c


def write_pdf(path: Path, pages: list[list[tuple[float, str]]], size=(612, 792), font_size: float = 10,
              x: float = 50) -> Path:
    """A PDF of `pages`, each a list of (baseline y in points, line of text) drawn in Helvetica at `x`."""
    document = pdfium.PdfDocument.new()
    for lines in pages:
        page = document.new_page(*size)
        for y, text in lines:
            obj = pdfium_c.FPDFPageObj_NewTextObj(document.raw, b"Helvetica", ctypes.c_float(font_size))
            data = (text + "\0").encode("utf-16-le")
            pdfium_c.FPDFText_SetText(obj, (ctypes.c_ushort * (len(data) // 2)).from_buffer_copy(data))
            pdfium_c.FPDFPageObj_Transform(obj, 1, 0, 0, 1, x, y)
            pdfium_c.FPDFPage_InsertObject(page.raw, obj)
        pdfium_c.FPDFPage_GenerateContent(page.raw)
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(str(path))
    return path


def quarterly_report_pdf(path: Path) -> Path:
    """A three-page quarterly report of an invented company: a cover, an income statement, a page of discussion."""
    cover = ["UNITED STATES", "SECURITIES AND EXCHANGE COMMISSION", "Washington, D.C. 20549", "FORM 10-Q",
             "QUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934",
             "For the quarterly period ended June 30, 2025", "Commission File Number 001-99999",
             "ACME WIDGETS INC.", "(Exact name of registrant as specified in its charter)",
             "As of July 25, 2025, 1,234,567 shares of common stock were outstanding."]
    statement = ["PART I. FINANCIAL INFORMATION", "Item 1. Financial Statements", "ACME WIDGETS INC.",
                 "CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS", "(In millions, except per share data)",
                 "Three Months Ended June 30, Six Months Ended June 30,", "2025 2024 2025 2024",
                 "Net sales 4,321 3,987 8,765 7,654", "Cost of sales 2,100 1,950 4,300 3,800",
                 "Gross margin 2,221 2,037 4,465 3,854", "Operating expenses 1,000 950 2,010 1,900",
                 "Net income 987 876 1,765 1,543", "Diluted earnings per share 1.23 1.10 2.20 1.95"]
    prose = ["Item 2. Management's Discussion and Analysis of Financial Condition and Results of Operations",
             "Widget shipments to coastal harbours rose during the quarter as the new foundry in the valley",
             "reached full output, and the company expects the foundry to supply every region by next spring.",
             "Gear sales were steady, while repair services grew with the installed base of machines.",
             "Item 4. Controls and Procedures",
             "Management evaluated the disclosure controls and found them effective at the end of the period."]

    def lay(lines):
        return [(740 - 18 * i, text) for i, text in enumerate(lines)]

    return write_pdf(path, [lay(cover), lay(statement), lay(prose)])
