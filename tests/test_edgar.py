"""rag.edgar against the real sec-edgar-downloader, talking only to a local EDGAR look-alike (tests/edgar_server.py).

The downloader's URLs are module globals copied from its _constants at import; they are patched where they are
read: sec_edgar_downloader._orchestrator.URL_SUBMISSIONS / URL_FILING and _sec_gateway.URL_CIK_MAPPING.
sec-edgar-downloader 5.1.0 makes one attempt per request (no retry, no back-off: see _sec_gateway._call_sec), so
the 429/5xx cases cost no waiting; its process-wide 10 requests/second throttle is left as it is.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from rag import edgar
from rag.config import get_settings
from rag.edgar import EdgarError, FilingRecord, add_local_file, download_filings, list_downloaded
from rag.edgar.download import _fiscal_labels
from rag.edgar.listing import ListedFiling, Listing, choose, download_window, place, read_listing
from rag.edgar.record import fiscal_year_and_source
from rag.edgar.storage import safe_file_name

try:
    from edgar_server import AAPL_10Q_DOCUMENT, SERVED_FILINGS, EdgarServer, full_submission
except ImportError:  # tests/ imported as a package
    from tests.edgar_server import AAPL_10Q_DOCUMENT, SERVED_FILINGS, EdgarServer, full_submission

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS = SHARED / "corpus"
pytestmark = pytest.mark.skipif(
    not (CORPUS / "edgar" / "company_tickers_exchange.json").is_file()
    or not (CORPUS / "filings" / "AAPL" / "aapl-20240928.htm").is_file(),
    reason=f"the shared EDGAR corpus is absent (looked in {CORPUS}); these tests serve it from a local server",
)

UA = "Test Analyst test.analyst@example.com"
AAPL_2024 = "0000320193-24-000123"
AAPL_2025 = "0000320193-25-000079"
AAPL_2024_URL = "https://www.sec.gov/Archives/edgar/data/320193/000032019324000123/aapl-20240928.htm"


# --------------------------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def server():
    with EdgarServer(SHARED) as srv:
        yield srv


@pytest.fixture
def edgar_server(server, monkeypatch):
    """The local server, reset, with the real downloader pointed at it."""
    import sec_edgar_downloader._orchestrator as orchestrator
    import sec_edgar_downloader._sec_gateway as gateway

    server.faults.clear()
    server.requests.clear()
    server.user_agents.clear()
    monkeypatch.setattr(orchestrator, "URL_SUBMISSIONS", server.url + "/submissions/{submission}")
    monkeypatch.setattr(orchestrator, "URL_FILING", server.url + "/Archives/edgar/data/{cik}/{acc_num_no_dash}/{document}")
    monkeypatch.setattr(gateway, "URL_CIK_MAPPING", server.url + "/files/company_tickers_exchange.json")
    return server


@pytest.fixture
def settings(tmp_path):
    return get_settings(data_dir=tmp_path / "data", storage_dir=tmp_path / "storage", sec_user_agent=UA,
                        max_upload_mb=20)


def all_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def assert_nothing_half_written(data: Path) -> None:
    """No temporary folders, no empty files, and every filing folder complete with its filing.json."""
    assert not [p for p in data.rglob("*") if any(part.startswith(".") for part in p.relative_to(data).parts)], \
        "temporary files or folders left in data/"
    for path in all_files(data):
        assert path.stat().st_size > 0, f"empty file {path}"
    for folder in {p.parent for p in all_files(data)}:
        assert (folder / "filing.json").is_file(), f"{folder} has no filing.json"


def assert_data_empty(data: Path) -> None:
    assert all_files(data) == [], f"files left in data/: {all_files(data)}"
    assert_nothing_half_written(data)


# --------------------------------------------------------------------------------------------------------------
# Units


def test_validate_user_agent():
    assert edgar.validate_user_agent("Jane Analyst jane@example.com") == ("Jane Analyst", "jane@example.com")
    assert edgar.validate_user_agent("  Acme  ops@acme.co.uk ") == ("Acme", "ops@acme.co.uk")
    for bad in ("", "   ", None, "jane@example.com", "Jane Analyst", "Jane jane@", "Jane jane@example"):
        with pytest.raises(EdgarError, match="SEC_USER_AGENT"):
            edgar.validate_user_agent(bad)


def test_record_round_trip(tmp_path):
    rec = FilingRecord(doc_id=AAPL_2024, path=tmp_path / "primary-document.html", ticker="AAPL",
                       company="Apple Inc.", cik="320193", form="10-K", fiscal_year=2024,
                       fiscal_year_source="dei:DocumentFiscalYearFocus", period_end="2024-09-28",
                       filing_date="2024-11-01", accession=AAPL_2024, url=AAPL_2024_URL, source="edgar", sha256="ab")
    assert FilingRecord.from_dict(json.loads(json.dumps(rec.to_dict()))) == rec
    rec.path.write_text("<html></html>")
    rec.save(tmp_path)
    saved = json.loads((tmp_path / "filing.json").read_text())
    assert saved["path"] == "primary-document.html"  # relative: the data folder can move
    assert FilingRecord.load(tmp_path / "filing.json") == rec


def test_safe_name():
    for raw in ("../../x.htm", "..\\..\\x.htm", "/etc/x.htm", "./.x.htm"):
        assert safe_file_name(raw) == "x.htm"
    assert safe_file_name("a b$c.HTML") == "a_b_c.html"
    assert "/" not in safe_file_name("..") and safe_file_name("..") == "filing"
    # Control characters in an upload's name (NUL, newline) never reach the file system.
    assert safe_file_name("a\x00b.htm") == "a_b.htm" and safe_file_name("x\n.htm") == "x.htm"
    assert safe_file_name("\n") == safe_file_name("../\x00") == safe_file_name("") == "filing"


def test_fiscal_year_from_period_end():
    assert edgar.fiscal_year_from_period_end("2024-09-28") == 2024
    assert edgar.fiscal_year_from_period_end("2022-01-01") == 2021  # 52/53-week year ending in early January
    assert edgar.fiscal_year_from_period_end("20250126") == 2025
    assert edgar.fiscal_year_from_period_end(None) is None
    # The company's own label wins; a parser's plain period-end year gets the early-January rule (J&J's fiscal
    # 2022 ended 2023-01-01).
    assert fiscal_year_and_source({"fiscal_year": 2024, "fiscal_year_source": "dei:DocumentFiscalYearFocus"},
                              "2025-02-02") == (2024, "dei:DocumentFiscalYearFocus")
    assert fiscal_year_and_source({"fiscal_year": 2023, "fiscal_year_source": "period_end"}, "2023-01-01") == \
        (2022, "period_end")
    assert fiscal_year_and_source({}, None) == (None, None)


def _submissions(name: str) -> dict:
    path = CORPUS / "edgar" / name
    if not path.is_file():
        pytest.skip(f"{path} absent")
    return json.loads(path.read_text(encoding="utf-8"))


def _listing(submissions: dict, form: str) -> Listing:
    return read_listing(lambda page: submissions, "first", form, None, [2024])


def test_listing_places_quarters_by_the_fiscal_year_end():
    # A year that ends in late September: the first quarter of fiscal Y ends in December of Y-1.
    apple = _listing(_submissions("apple_submissions_2026-01_pretty.json"), "10-Q")
    fy2024 = [(f.accession, f.fiscal_period) for f in apple.filings if f.fiscal_year == 2024]
    assert fy2024 == [("0000320193-24-000081", "Q3"), ("0000320193-24-000069", "Q2"),
                      ("0000320193-24-000006", "Q1")]
    assert all(len(f.fiscal_years) == 1 and f.fiscal_period in ("Q1", "Q2", "Q3") for f in apple.filings)
    annual = _listing(_submissions("apple_submissions_2026-01_pretty.json"), "10-K")
    assert [(f.fiscal_year, f.fiscal_period) for f in annual.filings[:2]] == [(2025, "FY"), (2024, "FY")]
    # A year that ends in June: the quarter ending in December is the second of the next fiscal year.
    june = _listing(_submissions("microsoft_submissions_2026-01_pretty.json"), "10-Q")
    assert (june.filings[0].report_date, june.filings[0].fiscal_years, june.filings[0].fiscal_period) == (
        "2025-12-31", (2026,), "Q2")
    # A calendar year; amendments (10-K/A) are not listed with the originals.
    calendar = _listing(_submissions("tesla_submissions_2026-01_pretty.json"), "10-K")
    assert [f.fiscal_year for f in calendar.filings[:3]] == [2025, 2024, 2023]


def test_listing_year_ending_in_january_keeps_both_names():
    page = {"accessionNumber": ["0000000001-24-000001", "0000000001-24-000002", "0000000001-24-000003"],
            "form": ["10-Q", "10-Q", "10-Q"], "filingDate": ["2024-11-20", "2024-08-28", "2024-05-29"],
            "reportDate": ["2024-10-27", "2024-07-28", ""], "primaryDocument": ["a.htm", "b.htm", "c.htm"]}
    listing = read_listing(lambda name: {"fiscalYearEnd": "0126", "filings": {"recent": page, "files": []}},
                           "first", "10-Q", None, [2024])
    assert [(f.fiscal_years, f.fiscal_period) for f in listing.filings] == [((2025, 2024), "Q3"),
                                                                           ((2025, 2024), "Q2"), ((), None)]
    # Both names are candidates, the unplaced filing too: the filing's own dei: label decides after download.
    assert [f.accession[-1] for f in choose(listing, None, [2024])] == ["1", "2", "3"]
    assert [f.accession[-1] for f in choose(listing, 1, [2024])] == ["1", "2", "3"]  # limit only once certain
    assert place("10-K", "2025-02-02", None) == ((2025, 2024), "FY")
    assert place("10-K", "2023-01-01", None) == ((2022,), "FY")  # a 52/53-week year ending in the first week


def test_choose_and_download_window_pick_exact_accessions():
    pages = {"first": _submissions("apple_submissions_2026-01_pretty.json"),
             "CIK0000320193-submissions-001.json": _submissions("CIK0000320193-submissions-001_apple_2023-08.json")}
    read = []

    def fetch(name):
        read.append(name)
        return pages[name]

    listing = read_listing(fetch, "first", "10-Q", None, [2024, 2025])
    assert read == ["first"]  # the recent block reaches back far enough
    chosen = choose(listing, None, [2024, 2025])
    assert [(f.fiscal_year, f.fiscal_period) for f in chosen] == [
        (2025, "Q3"), (2025, "Q2"), (2025, "Q1"), (2024, "Q3"), (2024, "Q2"), (2024, "Q1")]
    assert download_window(listing, chosen) == ("2024-02-02", "2025-08-01", set(), 6)
    # Two years apart: the quarters between them are skipped, and counted, so the downloader stops there.
    after, before, skip, count = download_window(listing, choose(listing, None, [2022, 2025]))
    assert (after, before, len(skip), count) == ("2022-01-28", "2025-08-01", 6, 12)
    assert [f.fiscal_period for f in choose(listing, 2, [2024, 2025])] == ["Q3", "Q2"]
    read.clear()
    old = read_listing(fetch, "first", "10-Q", None, [2012])
    assert read == ["first", "CIK0000320193-submissions-001.json"]
    assert [f.fiscal_period for f in choose(old, None, [2012])] == ["Q3", "Q2", "Q1"]


def test_listing_fills_what_an_older_10q_does_not_state():
    listed = ListedFiling("0000320193-24-000006", "10-Q", "2024-02-02", "2023-12-30", "a.htm", (2024,), "Q1")
    # No dei: labels: the calendar year of the quarter's end would say 2023.
    assert _fiscal_labels({}, "2023-12-30", listed) == (2024, "fiscal_period", "Q1", "fiscal_year_end")
    # The filing's own labels win.
    own = {"fiscal_year": 2024, "fiscal_year_source": "dei:DocumentFiscalYearFocus", "fiscal_period": "Q1",
           "fiscal_period_source": "dei:DocumentFiscalPeriodFocus"}
    assert _fiscal_labels(own, "2023-12-30", listed) == (2024, "dei:DocumentFiscalYearFocus", "Q1",
                                                         "dei:DocumentFiscalPeriodFocus")
    assert _fiscal_labels({}, "2023-12-30", None) == (2023, "period_end", None, None)



# --------------------------------------------------------------------------------------------------------------
# EDGAR downloads


def test_download_fiscal_year(edgar_server, settings):
    calls = []
    outcomes = download_filings(["AAPL"], form="10-K", fiscal_years=[2024], settings=settings,
                                progress=lambda t, m, f: calls.append((t, m, f)))
    assert [o.error for o in outcomes] == [None]
    rec = outcomes[0].record
    assert outcomes[0].ticker == "AAPL" and outcomes[0].ok
    assert (rec.ticker, rec.company, rec.cik, rec.form) == ("AAPL", "Apple Inc.", "320193", "10-K")
    assert (rec.fiscal_year, rec.fiscal_year_source) == (2024, "dei:DocumentFiscalYearFocus")
    assert (rec.accession, rec.doc_id, rec.filing_date) == (AAPL_2024, AAPL_2024, "2024-11-01")
    assert rec.url == AAPL_2024_URL
    assert rec.source == "edgar"
    data = Path(settings.data_dir)
    folder = data / "sec-edgar-filings" / "AAPL" / "10-K" / AAPL_2024
    assert rec.path == folder / "primary-document.html" and rec.path.is_file()
    original = (CORPUS / "filings" / "AAPL" / "aapl-20240928.htm").read_bytes()
    assert rec.path.read_bytes() == original
    assert rec.sha256 == hashlib.sha256(original).hexdigest()
    assert (folder / "full-submission.txt").read_bytes().rstrip().endswith(b"</SEC-DOCUMENT>")
    assert FilingRecord.load(folder / "filing.json") == rec
    assert json.loads((folder / "filing.json").read_text())["path"] == "primary-document.html"
    # Exactly the filing asked for: EDGAR's listing (report date 2024-09-28) placed it; no other 10-K was fetched.
    archive = [p for p in edgar_server.requests if p.startswith("/Archives/")]
    assert archive and all(AAPL_2024.replace("-", "") in p for p in archive)
    assert not (data / "sec-edgar-filings" / "AAPL" / "10-K" / AAPL_2025).exists()
    assert [r.doc_id for r in list_downloaded(settings)] == [AAPL_2024]
    assert_nothing_half_written(data)
    # Every request said who is asking.
    assert set(edgar_server.user_agents) == {UA}
    # Progress: monotonic, ends at 1.
    fractions = [f for _, _, f in calls]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and all(t == "AAPL" for t, _, _ in calls)


def test_download_latest_twice(edgar_server, settings):
    for _ in range(2):  # the second run replaces the first in place
        outcomes = download_filings("aapl", limit=1, settings=settings)
        assert [o.error for o in outcomes] == [None]
        assert outcomes[0].record.accession == AAPL_2025
        assert outcomes[0].record.fiscal_year == 2025
    assert [r.accession for r in list_downloaded(settings)] == [AAPL_2025]
    assert_nothing_half_written(Path(settings.data_dir))


def test_missing_user_agent_fails_before_any_request(edgar_server, settings):
    for ua in ("", "no-email-here"):
        with pytest.raises(EdgarError, match="SEC_USER_AGENT"):
            download_filings(["AAPL"], limit=1, settings=settings.with_overrides(sec_user_agent=ua) if ua else
                             get_settings(data_dir=settings.data_dir, sec_user_agent=""))
    assert edgar_server.requests == []
    assert all_files(Path(settings.data_dir)) == []


def test_unsupported_form_fails_before_any_request(edgar_server, settings):
    with pytest.raises(EdgarError, match="10-K and 10-Q"):
        download_filings(["AAPL"], form="8-K", settings=settings)
    assert edgar_server.requests == []


def test_unknown_ticker_and_the_others_go_on(edgar_server, settings):
    outcomes = download_filings(["ZZZZ", "AAPL", "../x"], limit=1, settings=settings)
    by = {o.ticker: o for o in outcomes}
    assert by["ZZZZ"].record is None and "ZZZZ is not a ticker EDGAR knows" in by["ZZZZ"].error
    assert by["../X"].record is None and "is not a ticker" in by["../X"].error
    assert by["AAPL"].ok and by["AAPL"].record.accession == AAPL_2025
    assert not any("ZZZZ" in p for p in edgar_server.requests)
    assert_nothing_half_written(Path(settings.data_dir))


@pytest.mark.parametrize("status, expected", [
    ("404", "HTTP 404 Not Found"),
    ("500", "EDGAR server error (HTTP 500)"),
    ("503", "EDGAR server error (HTTP 503)"),
    ("429", "SEC rate limit"),
])
def test_filing_http_errors(edgar_server, settings, status, expected):
    edgar_server.faults["/" + AAPL_2025.replace("-", "") + "/"] = status  # both files of the filing
    outcomes = download_filings(["AAPL"], limit=1, settings=settings)
    assert len(outcomes) == 1 and outcomes[0].record is None
    assert expected in outcomes[0].error and AAPL_2025 in outcomes[0].error and "AAPL" in outcomes[0].error
    assert_data_empty(Path(settings.data_dir))


def test_connection_cut_mid_file(edgar_server, settings):
    edgar_server.faults[AAPL_2025 + ".txt"] = "cut"  # Content-Length larger than what is sent, then close
    outcomes = download_filings(["AAPL"], limit=1, settings=settings)
    assert len(outcomes) == 1 and outcomes[0].record is None
    assert "connection to EDGAR was cut" in outcomes[0].error
    assert_data_empty(Path(settings.data_dir))


def test_truncated_file_without_length_is_caught(edgar_server, settings):
    # No Content-Length: the client cannot tell, the file lands half-written, the check after the download must.
    edgar_server.faults[AAPL_2025 + ".txt"] = "truncate"
    outcomes = download_filings(["AAPL"], limit=1, settings=settings)
    assert len(outcomes) == 1 and outcomes[0].record is None
    assert "arrived incomplete" in outcomes[0].error and "</SEC-DOCUMENT>" in outcomes[0].error
    assert_data_empty(Path(settings.data_dir))


def test_primary_document_fails_full_submission_used(edgar_server, settings):
    edgar_server.faults["aapl-20250927.htm"] = "500"
    outcomes = download_filings(["AAPL"], limit=1, settings=settings)
    assert [o.error for o in outcomes] == [None]
    rec = outcomes[0].record
    assert rec.path.name == "primary-document.htm"
    assert rec.path.read_bytes() == (CORPUS / "filings" / "AAPL" / "aapl-20250927.htm").read_bytes().rstrip(b"\r\n")
    assert rec.url.endswith("/000032019325000079/aapl-20250927.htm")
    assert (rec.fiscal_year, rec.filing_date) == (2025, "2025-10-31")
    assert not (rec.path.parent / "primary-document.html").exists()
    assert_nothing_half_written(Path(settings.data_dir))


def test_primary_document_truncated_full_submission_used(edgar_server, settings):
    edgar_server.faults["aapl-20250927.htm"] = "truncate"
    outcomes = download_filings(["AAPL"], limit=1, settings=settings)
    assert [o.error for o in outcomes] == [None]
    assert outcomes[0].record.path.name == "primary-document.htm"
    assert [p.name for p in outcomes[0].record.path.parent.iterdir()].count("primary-document.html") == 0


def test_submissions_and_ticker_map_failures(edgar_server, settings):
    edgar_server.faults["/submissions/CIK0000320193.json"] = "500"
    outcomes = download_filings(["AAPL"], limit=1, settings=settings)
    assert len(outcomes) == 1 and "EDGAR server error (HTTP 500)" in outcomes[0].error
    assert "AAPL" in outcomes[0].error
    edgar_server.faults.clear()
    edgar_server.faults["/submissions/CIK0000320193.json"] = "cut"
    outcomes = download_filings(["AAPL"], limit=1, settings=settings)
    assert "connection to EDGAR was cut" in outcomes[0].error
    edgar_server.faults.clear()
    edgar_server.faults["company_tickers_exchange.json"] = "429"
    outcomes = download_filings(["AAPL", "TSLA"], limit=1, settings=settings)
    assert [o.ticker for o in outcomes] == ["AAPL", "TSLA"]
    assert all(o.record is None and "SEC rate limit" in o.error for o in outcomes)
    assert_data_empty(Path(settings.data_dir))


def test_one_ticker_fails_the_other_lands(edgar_server, settings):
    edgar_server.faults["/000032019325000079/"] = "500"
    outcomes = download_filings(["AAPL", "TSLA"], fiscal_years=[2024], settings=settings)
    by = {}
    for o in outcomes:
        by.setdefault(o.ticker, []).append(o)
    # Apple's FY2024 10-K lands; the failing FY2025 one is not asked for, nor fetched: not reported.
    assert [o.error for o in by["AAPL"]] == [None] and by["AAPL"][0].record.accession == AAPL_2024
    # Tesla's FY2024 10-K lands; its FY2023 10-K (not served: 404) is not fetched either.
    tsla = SERVED_FILINGS[2]
    assert [o.error for o in by["TSLA"]] == [None]
    rec = by["TSLA"][0].record
    assert (rec.accession, rec.cik, rec.company, rec.fiscal_year) == (tsla.accession, "1318605", "Tesla, Inc.", 2024)
    assert sorted(r.ticker for r in list_downloaded(settings)) == ["AAPL", "TSLA"]
    assert_nothing_half_written(Path(settings.data_dir))


def test_fiscal_year_not_found_explains(edgar_server, settings):
    edgar_server.faults["/000032019324000123/"] = "404"
    outcomes = download_filings(["AAPL"], fiscal_years=[2024], settings=settings)
    errors = [o.error for o in outcomes]
    assert all(o.record is None for o in outcomes)
    assert any("HTTP 404" in e and AAPL_2024 in e for e in errors)
    assert any("No 10-K for fiscal year 2024 of AAPL" in e for e in errors)
    assert_data_empty(Path(settings.data_dir))


def _needs_10q():
    if not (CORPUS / AAPL_10Q_DOCUMENT).is_file():
        pytest.skip(f"{CORPUS / AAPL_10Q_DOCUMENT} absent: the served 10-Qs are made from it")


def _archive_accessions(server) -> set[str]:
    return {p.split("/")[5] for p in server.requests if p.startswith("/Archives/")}


def test_download_10q_latest(edgar_server, settings):
    _needs_10q()
    # As the app's sidebar calls it.
    outcomes = download_filings(["AAPL"], form="10-Q", limit=4, settings=settings, progress=lambda *a: None)
    assert [o.error for o in outcomes] == [None] * 4
    recs = [o.record for o in outcomes]
    assert [(r.fiscal_year, r.fiscal_period, r.period_end) for r in recs] == [
        (2025, "Q3", "2025-06-28"), (2025, "Q2", "2025-03-29"), (2025, "Q1", "2024-12-28"), (2024, "Q3", "2024-06-29")]
    assert all(r.form == "10-Q" and r.fiscal_year_source == "dei:DocumentFiscalYearFocus"
               and r.fiscal_period_source == "dei:DocumentFiscalPeriodFocus" for r in recs)
    assert recs[0].url == "https://www.sec.gov/Archives/edgar/data/320193/000032019325000073/aapl-20250628.htm"
    assert recs[0].path.read_bytes() == (CORPUS / AAPL_10Q_DOCUMENT).read_bytes()
    assert _archive_accessions(edgar_server) == {r.accession.replace("-", "") for r in recs}
    data = Path(settings.data_dir)
    assert {p.parent.parent.name for p in data.rglob("filing.json")} == {"10-Q"}
    saved = {r.accession: (r.fiscal_year, r.fiscal_period) for r in list_downloaded(settings)}
    assert saved == {r.accession: (r.fiscal_year, r.fiscal_period) for r in recs}
    assert_nothing_half_written(data)


def test_download_10q_fiscal_years(edgar_server, settings):
    _needs_10q()
    outcomes = download_filings(["AAPL"], form="10-Q", fiscal_years=[2024, 2025], settings=settings)
    assert [o.error for o in outcomes] == [None] * 6
    got = [(o.record.fiscal_year, o.record.fiscal_period, o.record.filing_date) for o in outcomes]
    assert got == [(2025, "Q3", "2025-08-01"), (2025, "Q2", "2025-05-02"), (2025, "Q1", "2025-01-31"),
                   (2024, "Q3", "2024-08-02"), (2024, "Q2", "2024-05-03"), (2024, "Q1", "2024-02-02")]
    # Exactly those six: the 10-K filed among them and the quarters of other years were not fetched.
    assert _archive_accessions(edgar_server) == {o.record.accession.replace("-", "") for o in outcomes}
    assert len(list_downloaded(settings)) == 6
    assert_nothing_half_written(Path(settings.data_dir))


def test_download_10q_year_with_a_quarter_failing(edgar_server, settings):
    _needs_10q()
    edgar_server.faults["/000032019324000069/"] = "500"  # fiscal 2024 Q2
    outcomes = download_filings(["AAPL"], form="10-Q", fiscal_years=[2024], settings=settings)
    assert [o.record.fiscal_period for o in outcomes if o.ok] == ["Q3", "Q1"]
    errors = [o.error for o in outcomes if not o.ok]
    assert len(errors) == 1 and "HTTP 500" in errors[0] and "0000320193-24-000069" in errors[0]
    assert_nothing_half_written(Path(settings.data_dir))


def test_download_10q_year_not_listed(edgar_server, settings):
    outcomes = download_filings(["AAPL"], form="10-Q", fiscal_years=[2026], settings=settings)
    assert [o.error for o in outcomes] == [
        "No 10-Q for fiscal year 2026 of AAPL has been filed yet (the latest is for fiscal year 2025)."]
    assert _archive_accessions(edgar_server) == set()
    assert_data_empty(Path(settings.data_dir))



# --------------------------------------------------------------------------------------------------------------
# Local files


def test_add_local_html_path_traversal_name(settings, tmp_path):
    src = tmp_path / "incoming.htm"
    src.write_bytes((CORPUS / "filings" / "AAPL" / "aapl-20240928.htm").read_bytes())
    uploads = Path(settings.data_dir) / "uploads"
    for name in ("../../x.htm", "..\\..\\x.htm"):
        rec = add_local_file(src, name=name, settings=settings, ticker="AAPL")
        sha = hashlib.sha256(src.read_bytes()).hexdigest()
        assert rec.path == uploads / sha[:16] / "x.htm"
        assert rec.path.resolve().is_relative_to(uploads.resolve())
        assert rec.sha256 == sha and rec.doc_id == "local-" + sha[:16]
        assert (rec.fiscal_year, rec.fiscal_year_source) == (2024, "dei:DocumentFiscalYearFocus")
        assert rec.ticker == "AAPL" and rec.source == "upload"
    assert not (tmp_path / "x.htm").exists() and not (tmp_path.parent / "x.htm").exists()
    assert [p.relative_to(uploads).as_posix() for p in all_files(uploads)] == [f"{sha[:16]}/filing.json",
                                                                              f"{sha[:16]}/x.htm"]
    assert [r.doc_id for r in list_downloaded(settings)] == [rec.doc_id]
    assert_nothing_half_written(Path(settings.data_dir))


def test_add_local_file_too_large(settings, tmp_path):
    big = tmp_path / "big.htm"
    with open(big, "wb") as fh:
        fh.truncate(1024 * 1024 + 1)
    with pytest.raises(EdgarError, match=r"big.htm is 1.0 MB, over the 1 MB limit"):
        add_local_file(big, settings=settings.with_overrides(max_upload_mb=1))
    assert_data_empty(Path(settings.data_dir))


def test_add_local_file_refuses_unknown_and_broken_files(settings, tmp_path):
    cases = {
        "report.docx": (b"PK\x03\x04", "only EDGAR .htm/.html"),
        "noext": (b"<html></html>", "without a suffix"),
        "fake.pdf": (b"<html>not a pdf</html>", "not a PDF"),
        "notes.txt": (b"just some notes\n", "not an EDGAR full-submission"),
        "empty.htm": (b"", "is empty"),
        "blank.htm": (b"<html><body>  </body></html>", "could not be read as a filing"),
        "broken-submission.txt": (b"<SEC-DOCUMENT>\n<DOCUMENT>\n<TYPE>10-K\n", "holds no main document"),
    }
    for name, (content, why) in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(EdgarError, match=why) as info:
            add_local_file(path, settings=settings)
        assert name in str(info.value)
    with pytest.raises(EdgarError, match="no such file"):
        add_local_file(tmp_path / "missing.htm", settings=settings)
    assert_data_empty(Path(settings.data_dir))


def test_add_local_full_submission(settings, tmp_path):
    filing = SERVED_FILINGS[0]
    html_bytes = (CORPUS / filing.corpus_path).read_bytes()
    src = tmp_path / f"{filing.accession}.txt"
    src.write_bytes(full_submission(filing, html_bytes))
    rec = add_local_file(src, settings=settings, source="path")
    assert (rec.accession, rec.doc_id, rec.filing_date) == (AAPL_2024, AAPL_2024, "2024-11-01")
    assert (rec.company, rec.cik, rec.form, rec.fiscal_year) == ("Apple Inc.", "320193", "10-K", 2024)
    assert (rec.fiscal_period, rec.fiscal_period_source) == ("FY", "dei:DocumentFiscalPeriodFocus")
    assert rec.url == AAPL_2024_URL and rec.source == "path"
    assert rec.path.name == "primary-document.htm"
    assert rec.path.read_bytes() == html_bytes.rstrip(b"\r\n")
    assert (rec.path.parent / src.name).read_bytes() == src.read_bytes()
    assert FilingRecord.load(rec.path.parent / "filing.json") == rec
    assert json.loads((rec.path.parent / "filing.json").read_text())["path"] == "primary-document.htm"
    assert_nothing_half_written(Path(settings.data_dir))


def test_add_local_file_caller_metadata(settings, tmp_path):
    # An older, non-XBRL 10-K: no dei facts, so the caller's ticker and fiscal year fill in.
    src = CORPUS / "filings" / "_older_html_10k" / "0001376474-16-000635.html"
    if not src.is_file():
        pytest.skip(f"{src} absent")
    rec = add_local_file(src, settings=settings, ticker="cigf", fiscal_year="2015", form="10-K")
    assert (rec.ticker, rec.fiscal_year, rec.fiscal_year_source, rec.form) == ("CIGF", 2015, "caller", "10-K")
    with pytest.raises(EdgarError, match="fiscal year must be a year"):
        add_local_file(src, settings=settings, fiscal_year="twenty")
    with pytest.raises(TypeError):
        add_local_file(src, settings=settings, colour="blue")


def _quarterly_pdf() -> Path:
    """A quarterly report PDF of a company whose fiscal year ends in January (its third quarter ends in October)."""
    manifest = CORPUS / "pdf-10q" / "MANIFEST.tsv"
    if not manifest.is_file():
        pytest.skip(f"{manifest} absent")
    for line in manifest.read_text(encoding="utf-8").splitlines()[1:]:
        cells = line.split("\t")
        if cells[3] == "10-Q" and cells[5] == "Q3":
            return CORPUS / "pdf-10q" / cells[0]
    pytest.skip("no third-quarter 10-Q PDF in the manifest")


def test_add_local_pdf_fills_metadata_from_its_cover(settings, tmp_path):
    src = _quarterly_pdf()
    rec = add_local_file(src, settings=settings)
    assert rec.form == "10-Q" and rec.company and rec.ticker and rec.ticker.isupper()
    assert (rec.period_end, rec.fiscal_period, rec.fiscal_period_source) == ("2022-10-31", "Q3", "statement_periods")
    assert (rec.fiscal_year, rec.fiscal_year_source) == (2023, "fiscal_period")
    saved = json.loads((rec.path.parent / "filing.json").read_text())
    assert (saved["fiscal_period"], saved["fiscal_period_source"]) == ("Q3", "statement_periods")
    assert {"ticker", "company", "form", "fiscal_year", "fiscal_year_source", "period_end"} <= set(saved)
    # What the caller says beats what was read from the cover's words.
    rec2 = add_local_file(src, settings=settings, ticker="zzz", company="Someone Else", fiscal_period="q2",
                          fiscal_year=2022)
    assert (rec2.ticker, rec2.company, rec2.fiscal_period, rec2.fiscal_period_source) == (
        "ZZZ", "Someone Else", "Q2", "caller")
    assert (rec2.fiscal_year, rec2.fiscal_year_source, rec2.form) == (2022, "caller", "10-Q")
    with pytest.raises(EdgarError, match="fiscal period must be one of Q1, Q2, Q3, FY"):
        add_local_file(src, settings=settings, fiscal_period="Q5")


def test_add_local_file_refuses_what_is_not_a_filing(settings, tmp_path):
    page = tmp_path / "letter.htm"
    page.write_text("<html><body><p>Dear friend,</p><p>Thanks for the lovely dinner last week.</p></body></html>")
    with pytest.raises(EdgarError, match=r"letter.htm could not be read as a filing: .*not an SEC filing"):
        add_local_file(page, settings=settings)
    assert_data_empty(Path(settings.data_dir))


def test_list_downloaded_ignores_temp_and_broken(settings, edgar_server):
    data = Path(settings.data_dir)
    outcomes = download_filings(["AAPL"], limit=1, settings=settings)
    assert outcomes[0].ok
    stray = data / ".edgar-tmp-crashed" / "x"
    stray.mkdir(parents=True)
    (stray / "filing.json").write_text(json.dumps({"doc_id": "x", "path": "nothing.htm"}))
    broken = data / "uploads" / "0123456789abcdef"
    broken.mkdir(parents=True)
    (broken / "filing.json").write_text("{not json")
    assert [r.accession for r in list_downloaded(settings)] == [AAPL_2025]
    os.utime(data / ".edgar-tmp-crashed", (0, 0))  # a day-old temp folder is swept by the next download
    download_filings(["AAPL"], limit=1, settings=settings)
    assert not (data / ".edgar-tmp-crashed").exists()


def test_by_cik_and_concurrent_downloads_keep_their_messages_apart(edgar_server, settings):
    import threading

    edgar_server.faults["/000032019325000079/"] = "500"
    results = {}

    def run(key, tickers, **kw):
        results[key] = download_filings(tickers, settings=settings, **kw)

    threads = [threading.Thread(target=run, args=("aapl", ["AAPL"]), kwargs={"limit": 1}),
               threading.Thread(target=run, args=("tsla", ["1318605"]), kwargs={"fiscal_years": [2024]})]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert [o.error and "HTTP 500" in o.error for o in results["aapl"]] == [True]
    assert [o.error for o in results["tsla"]] == [None]
    rec = results["tsla"][0].record
    assert rec.cik == "1318605" and rec.fiscal_year == 2024
    assert rec.path.parent.parent.parent.name in ("TSLA", "1318605")
    assert_nothing_half_written(Path(settings.data_dir))


def test_edgar_unreachable(edgar_server, settings, monkeypatch):
    import socket

    import sec_edgar_downloader._sec_gateway as gateway

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setattr(gateway, "URL_CIK_MAPPING", f"http://127.0.0.1:{port}/files/company_tickers_exchange.json")
    outcomes = download_filings(["AAPL"], limit=1, settings=settings)
    assert len(outcomes) == 1 and "Could not reach EDGAR" in outcomes[0].error
    assert_data_empty(Path(settings.data_dir))
