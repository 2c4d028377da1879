"""A synthetic inline XBRL 10-K of any size, written piece by piece (`python -m rag bench index --synthetic-mb N`).

It reads as a filing (dei cover facts, Items 1, 1A, 7 and 8, an income statement tagged with ix:nonFraction) and
its paragraphs and table rows vary, so its chunks are as many and as different as a real filing's of that size.
It is written a paragraph at a time, so making a 200 MB one costs the benchmark's own memory nothing.
"""

from __future__ import annotations

import random
from pathlib import Path

# Filler vocabulary for the paragraphs: words a 10-K uses everywhere, so chunks embed like real ones.
_WORDS = (Path(__file__).parent / "data" / "synthetic_words.txt").read_text(encoding="utf-8").split()

_HEAD = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:ix="http://www.xbrl.org/2013/inlineXBRL"
 xmlns:xbrli="http://www.xbrl.org/2003/instance" xmlns:dei="http://xbrl.sec.gov/dei/2024">
<head><title>synth-10k</title></head><body>
<div style="display:none"><ix:header><ix:hidden>
<ix:nonNumeric name="dei:DocumentFiscalYearFocus" contextRef="FY">2024</ix:nonNumeric>
<ix:nonNumeric name="dei:DocumentFiscalPeriodFocus" contextRef="FY">FY</ix:nonNumeric>
<ix:nonNumeric name="dei:EntityCentralIndexKey" contextRef="FY">0000999998</ix:nonNumeric>
</ix:hidden><ix:resources>
<xbrli:context id="FY"><xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">0000999998</xbrli:identifier>
</xbrli:entity><xbrli:period><xbrli:startDate>2024-01-01</xbrli:startDate><xbrli:endDate>2024-12-31</xbrli:endDate>
</xbrli:period></xbrli:context>
</ix:resources></ix:header></div>
<p>UNITED STATES SECURITIES AND EXCHANGE COMMISSION</p>
<p>FORM <ix:nonNumeric name="dei:DocumentType" contextRef="FY">10-K</ix:nonNumeric></p>
<p>For the fiscal year ended <ix:nonNumeric name="dei:DocumentPeriodEndDate" contextRef="FY">2024-12-31</ix:nonNumeric></p>
<p><ix:nonNumeric name="dei:EntityRegistrantName" contextRef="FY">Synthetic Holdings Inc.</ix:nonNumeric></p>
<p>Trading symbol: <ix:nonNumeric name="dei:TradingSymbol" contextRef="FY">SYNT</ix:nonNumeric></p>
<table><tr><td>Item 1.</td><td>Business</td><td>3</td></tr><tr><td>Item 1A.</td><td>Risk Factors</td><td>9</td></tr>
<tr><td>Item 7.</td><td>Management's Discussion and Analysis</td><td>20</td></tr>
<tr><td>Item 8.</td><td>Financial Statements and Supplementary Data</td><td>40</td></tr></table>
"""
_ITEMS = (("PART I", "Item 1. Business", 0.4), (None, "Item 1A. Risk Factors", 0.3),
          ("PART II", "Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations",
           0.3))
_STATEMENT = """<div style="page-break-after: always"></div>
<p style="font-weight:bold">Item 8. Financial Statements and Supplementary Data</p>
<p>CONSOLIDATED STATEMENTS OF OPERATIONS (in millions)</p>
<table><tr><td></td><td colspan="2">2024</td></tr>
<tr><td>Total net sales</td><td>$</td><td><ix:nonFraction name="us-gaap:Revenues" contextRef="FY" unitRef="usd"
 decimals="-6" scale="6">123,456</ix:nonFraction></td></tr></table>
<div style="page-break-after: always"></div>
<p style="font-weight:bold">SIGNATURES</p><p>Synthetic Holdings Inc.</p>
</body></html>
"""


def _paragraph(rng: random.Random, n: int) -> str:
    sentences = []
    for _ in range(rng.randint(2, 4)):
        words = rng.choices(_WORDS, k=rng.randint(12, 22))
        sentences.append(f"{words[0].capitalize()} {' '.join(words[1:])} in period {n}.")
    return f"<p>{' '.join(sentences)}</p>\n"


def write_synthetic_filing(path: Path, megabytes: float, seed: int = 45) -> Path:
    """A 10-K of about `megabytes` MB at `path` (the same bytes for the same size and seed)."""
    target = int(megabytes * 1024 * 1024)
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        written = fh.write(_HEAD)
        budget = max(0, target - len(_HEAD) - len(_STATEMENT))
        n = 0
        for part, title, share in _ITEMS:
            head = '<div style="page-break-after: always"></div>\n'
            if part:
                head += f'<p style="font-weight:bold">{part}</p>\n'
            written += fh.write(head + f'<p style="font-weight:bold">{title}</p>\n')
            stop = written + int(budget * share)
            while written < stop:
                n += 1
                written += fh.write(_paragraph(rng, n))
        fh.write(_STATEMENT)
    return path
