"""Sections over every file of ../shared/corpus/outside (real filings of many forms, as EDGAR and others serve them):
no crash, and the Items sec-parser's maintainers list for some of them (expected/) are found."""

from __future__ import annotations

import csv
import json
import re
from functools import lru_cache
from pathlib import Path

import pytest

from rag.parse import ParsedFiling, ParseError, parse_file

OUTSIDE = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "outside"
pytestmark = pytest.mark.skipif(not OUTSIDE.is_dir(), reason="../shared/corpus/outside is absent: these tests read "
                                                                "real filings of many forms in place")
# Files that are not filings' main documents (an XBRL instance, a 13F information table, an SGML header alone):
# a ParseError saying why is an acceptable answer for them; for every other file it is a failure.
NOT_FILINGS = {"xbrl-and-misc"}
REQUIRED_SHARE = 0.98


def _categories() -> dict[str, str]:
    with open(OUTSIDE / "MANIFEST.tsv", newline="") as fh:
        return {row["file"]: row["category"] for row in csv.DictReader(fh, delimiter="\t")}


@lru_cache(maxsize=1)
def _parsed() -> dict[str, ParsedFiling | ParseError]:
    out: dict[str, ParsedFiling | ParseError] = {}
    for path in sorted(OUTSIDE.rglob("*")):
        if not path.is_file() or path.name == "MANIFEST.tsv" or "expected" in path.relative_to(OUTSIDE).parts:
            continue
        try:
            out[path.relative_to(OUTSIDE).as_posix()] = parse_file(path)
        except ParseError as exc:
            out[path.relative_to(OUTSIDE).as_posix()] = exc
    return out


def _section_name(identifier: str) -> str:
    """sec-parser's "part2item1a" -> "Part II Item 1A"; a 10-K's "7A" -> "Item 7A"."""
    if m := re.fullmatch(r"part([12])item(\d+[a-c]?)", identifier, re.I):
        return f"Part {'I' * int(m.group(1))} Item {m.group(2).upper()}"
    return f"Item {identifier.upper()}"


def test_every_file_parses_or_says_why_it_is_not_a_filing():
    categories = _categories()
    results = _parsed()
    assert len(results) >= 60 and set(results) <= set(categories)
    refused = {name: str(r) for name, r in results.items() if isinstance(r, ParseError)}
    assert all(categories[name] in NOT_FILINGS for name in refused), refused
    for name, parsed in results.items():
        if isinstance(parsed, ParseError):
            continue
        sections = parsed.sections
        assert sections[0].char_start == 0 and sections[-1].char_end == len(parsed.text), name
        assert all(a.char_end == b.char_start < b.char_end for a, b in zip(sections, sections[1:])), name


def test_expected_items_found():
    results = _parsed()
    found = total = 0
    misses: dict[str, list[str]] = {}
    unmatched = []
    for expected in sorted((OUTSIDE / "expected").glob("*.json")):
        accession = re.search(r"\d{10}-\d{2}-\d{6}", expected.name).group()
        name = next((n for n in results if accession in n), None)
        if name is None:
            unmatched.append(expected.name)  # sec-parser lists it, but the filing itself is not in the folder
            continue
        parsed = results[name]
        assert not isinstance(parsed, ParseError), name
        items = {s.item for s in parsed.sections}
        wanted = [_section_name(e["identifier"]) for e in json.loads(expected.read_text()) if e["character_count"] > 0]
        total += len(wanted)
        found += sum(item in items for item in wanted)
        if missing := [item for item in wanted if item not in items]:
            misses[name] = missing
    assert total >= 60, (total, unmatched)
    assert found / total >= REQUIRED_SHARE, f"{found}/{total} = {found / total:.1%} found; missing: {misses}"


def test_quarterly_reports_put_their_statements_in_part_one_item_one():
    categories = _categories()
    for name, parsed in _parsed().items():
        if categories[name] not in ("10Q-ixbrl", "10Q-html-pre2019"):
            continue
        by_item = {s.item: s for s in parsed.sections}
        assert {"Part I Item 1", "Part I Item 2", "Part II Item 1", "Part II Item 6"} <= set(by_item), name
        cover = by_item["Cover"]
        assert cover.char_end - cover.char_start < 0.1 * len(parsed.text), name
        statements = by_item["Part I Item 1"]
        assert re.search(r"balance\s+sheets?|statements?\s+of\s+(?:operations|income|earnings)",
                         parsed.text[statements.char_start : statements.char_end], re.I), name


def test_cross_reference_index_places_items_on_the_pages_it_names():
    """A 10-K laid out with a "Form 10-K cross reference index" instead of Item headings."""
    parsed = _parsed()["10K-ixbrl/sp-10K-GE-0000040545-24-000027.html"]
    by_item: dict[str, list] = {}
    for s in parsed.sections:
        by_item.setdefault(s.item, []).append(s)
    mdna = by_item["Item 7"][0]
    assert parsed.text[mdna.char_start :].upper().startswith("MANAGEMENT’S DISCUSSION AND ANALYSIS")
    assert (by_item["Item 1A"][0].page_start, by_item["Item 8"][0].page_start) == (27, 41)  # "27-36", "41-81"
    assert any(s.page_start == 16 for s in by_item["Item 7A"])  # "16, 74-76": a page inside Item 7's 6-25
    assert len(by_item["Item 7"]) >= 2  # Item 7 resumes after Item 7A's page
    not_applicable = by_item["Item 9B"][0]
    assert "Not applicable" in parsed.text[not_applicable.char_start : not_applicable.char_end]
    assert [s.item for s in parsed.sections][-1] == "Signatures"
