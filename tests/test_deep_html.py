"""HTML nested deeper than the HTML reader follows: the file is refused, saying why, never indexed in part."""

from __future__ import annotations

import time

import pytest

from rag.config import get_settings
from rag.index import IndexStore
from rag.parse import ParseError, parse_file, parse_submission
from rag.parse.htmldoc import MAX_HTML_DEPTH
from tests.filings import ACME, filing_html

AFTER = "The zorblax coupler backlog doubled after the deep block."


def _with_deep_block(depth: int) -> str:
    """ACME's 10-K with a block nested `depth` divs deep after Item 1, and real text after that block."""
    deep = "<div>" * depth + "<p>Text at the bottom of the block.</p>" + "</div>" * depth
    html = filing_html(**ACME)
    marker = "<p>Supply of widget parts"
    assert marker in html
    return html.replace(marker, f"{deep}<p>{AFTER}</p>{marker}", 1)


def test_text_after_a_block_just_under_the_limit_is_read(tmp_path):
    path = tmp_path / "acme.htm"
    path.write_text(_with_deep_block(MAX_HTML_DEPTH - 100), encoding="utf-8")
    doc = parse_file(path)
    assert AFTER in doc.text
    assert "Text at the bottom of the block." in doc.text
    assert "Item 8" in {s.item for s in doc.sections}  # and everything after it
    assert any(f.concept == "us-gaap:Revenues" for f in doc.facts)


@pytest.mark.parametrize("depth", [3000, 1_000_000])
def test_html_nested_too_deep_is_refused_saying_why(tmp_path, depth):
    path = tmp_path / "deep.htm"
    path.write_text(_with_deep_block(depth), encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(ParseError, match="nested too deep") as excinfo:
        parse_file(path)
    assert time.perf_counter() - started < 10
    message = str(excinfo.value)
    assert message.startswith("deep.htm: ") and f"{MAX_HTML_DEPTH:,} levels" in message


def test_bare_million_nested_divs_are_refused_fast(tmp_path):
    path = tmp_path / "divs.html"
    path.write_text("<div>" * 1_000_000 + "x" + "</div>" * 1_000_000, encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(ParseError, match="nested too deep"):
        parse_file(path)
    assert time.perf_counter() - started < 10


def test_deep_html_inside_a_full_submission_is_refused(tmp_path):
    submission = (
        "<SEC-DOCUMENT>\n<SEC-HEADER>\nCONFORMED SUBMISSION TYPE:\t10-K\n</SEC-HEADER>\n<DOCUMENT>\n<TYPE>10-K\n"
        f"<SEQUENCE>1\n<FILENAME>acme.htm\n<TEXT>\n{_with_deep_block(3000)}\n</TEXT>\n</DOCUMENT>\n</SEC-DOCUMENT>\n"
    )
    with pytest.raises(ParseError, match="nested too deep"):
        parse_submission(submission)


def test_indexing_reports_the_refusal_and_indexes_nothing_of_the_file(tmp_path):
    store = IndexStore(get_settings(storage_dir=tmp_path / "storage", data_dir=tmp_path / "data"))
    path = tmp_path / "in" / "deep.htm"
    path.parent.mkdir()
    path.write_text(_with_deep_block(3000), encoding="utf-8")
    report = store.add([path])
    assert not report.changed
    assert report.rows[0]["status"] == "failed"
    assert "nested too deep" in report.errors[0]["error"]
    assert store.list_filings() == []
