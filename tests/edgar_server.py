"""A small EDGAR look-alike on 127.0.0.1 for tests: serves ../shared/corpus in EDGAR's URL layout.

    with EdgarServer(shared_dir) as server:
        server.url               # "http://127.0.0.1:<port>"
        server.faults["000032019324000123/"] = "500"   # fail every path containing that
        server.requests          # every path asked for, in order

Routes (what sec-edgar-downloader 5.1.0 asks for):
    /files/company_tickers_exchange.json           the ticker map the downloader reads ({"fields", "data"})
    /files/company_tickers.json                    the other ticker map (served too, not read by the downloader)
    /submissions/CIK##########.json                Apple, Tesla, Microsoft (real Jan-2026 responses)
    /submissions/CIK##########-submissions-NNN.json  older pages (Apple's real 2023 page; others empty)
    /Archives/edgar/data/<cik>/<acc no dashes>/<primary document>   the corpus 10-K or 10-Q HTML
    /Archives/edgar/data/<cik>/<acc no dashes>/<accession>.txt      a full submission assembled on the fly:
        a real-format SGML header + the HTML as <TEXT> of document 1 + a small EX-21 document

The 10-Qs: Apple's six of fiscal 2024 and 2025, all served from the one real Apple 10-Q of the corpus (fiscal 2025
Q3); for the other five its dei: cover facts (fiscal year, fiscal period, period end) are set to that quarter's,
so that each filing states the quarter EDGAR lists it for.

Faults, by a part of the path: "404", "429", "500", "503" (status), "cut" (a Content-Length larger than what is sent,
then the connection is closed), "truncate" (no Content-Length, half the body, then close).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass(frozen=True)
class ServedFiling:
    ticker: str
    company: str
    cik: int
    form: str
    accession: str
    primary_document: str  # its name on EDGAR, as in the submissions JSON
    corpus_path: str  # under shared/corpus
    period_end: str  # ISO
    filing_date: str  # ISO
    fiscal_year_end: str  # MMDD
    sic: str
    fiscal_year: int | None = None  # for a 10-Q served from another quarter's document: the dei: labels to state
    fiscal_period: str | None = None


SERVED_FILINGS = [
    ServedFiling("AAPL", "Apple Inc.", 320193, "10-K", "0000320193-24-000123", "aapl-20240928.htm",
                 "filings/AAPL/aapl-20240928.htm", "2024-09-28", "2024-11-01", "0928", "ELECTRONIC COMPUTERS [3571]"),
    ServedFiling("AAPL", "Apple Inc.", 320193, "10-K", "0000320193-25-000079", "aapl-20250927.htm",
                 "filings/AAPL/aapl-20250927.htm", "2025-09-27", "2025-10-31", "0927", "ELECTRONIC COMPUTERS [3571]"),
    ServedFiling("TSLA", "Tesla, Inc.", 1318605, "10-K", "0001628280-25-003063", "tsla-20241231.htm",
                 "filings/TSLA/tsla-20241231.htm", "2024-12-31", "2025-01-30", "1231",
                 "MOTOR VEHICLES & PASSENGER CAR BODIES [3711]"),
]

AAPL_10Q_DOCUMENT = "outside/10Q-ixbrl/edgartools-aapl-10-q-2025-08-01.html"  # fiscal 2025 Q3, real
# (accession, primary document, period end, filing date, fiscal year, fiscal period), as EDGAR lists them.
_AAPL_QUARTERS = [
    ("0000320193-25-000073", "aapl-20250628.htm", "2025-06-28", "2025-08-01", 2025, "Q3"),
    ("0000320193-25-000057", "aapl-20250329.htm", "2025-03-29", "2025-05-02", 2025, "Q2"),
    ("0000320193-25-000008", "aapl-20241228.htm", "2024-12-28", "2025-01-31", 2025, "Q1"),
    ("0000320193-24-000081", "aapl-20240629.htm", "2024-06-29", "2024-08-02", 2024, "Q3"),
    ("0000320193-24-000069", "aapl-20240330.htm", "2024-03-30", "2024-05-03", 2024, "Q2"),
    ("0000320193-24-000006", "aapl-20231230.htm", "2023-12-30", "2024-02-02", 2024, "Q1"),
]
SERVED_FILINGS += [
    ServedFiling("AAPL", "Apple Inc.", 320193, "10-Q", acc, doc, AAPL_10Q_DOCUMENT, period_end, filed, "0927",
                 "ELECTRONIC COMPUTERS [3571]", fiscal_year=fy, fiscal_period=fp)
    for acc, doc, period_end, filed, fy, fp in _AAPL_QUARTERS
]

SUBMISSIONS = {
    "CIK0000320193.json": "edgar/apple_submissions_2026-01_pretty.json",
    "CIK0001318605.json": "edgar/tesla_submissions_2026-01_pretty.json",
    "CIK0000789019.json": "edgar/microsoft_submissions_2026-01_pretty.json",
    "CIK0000320193-submissions-001.json": "edgar/CIK0000320193-submissions-001_apple_2023-08.json",
}

EMPTY_PAGE = {k: [] for k in ("accessionNumber", "filingDate", "reportDate", "acceptanceDateTime", "act", "form",
                              "fileNumber", "filmNumber", "items", "size", "isXBRL", "isInlineXBRL",
                              "primaryDocument", "primaryDocDescription")}


def _compact(iso: str) -> str:
    return iso.replace("-", "")


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def _set_dei(html: bytes, concept: str, value: str) -> bytes:
    """Set the text of the inline XBRL dei: fact `concept` (one element, no markup inside)."""
    pattern = re.compile(rb'(<ix:nonNumeric[^>]*name="dei:' + concept.encode() + rb'"[^>]*>)[^<]*')
    html, count = pattern.subn(lambda m: m.group(1) + value.encode("ascii"), html, count=1)
    assert count == 1, f"no dei:{concept} to set"
    return html


def stamped_quarter(filing: ServedFiling, html: bytes) -> bytes:
    """The document with its cover's dei: facts set to the filing's own quarter (unchanged when they are)."""
    if filing.fiscal_year is None:
        return html
    year, month, day = (int(x) for x in filing.period_end.split("-"))
    html = _set_dei(html, "DocumentFiscalYearFocus", str(filing.fiscal_year))
    html = _set_dei(html, "DocumentFiscalPeriodFocus", filing.fiscal_period or "")
    return _set_dei(html, "DocumentPeriodEndDate", f"{_MONTHS[month - 1]}&#160;{day}, {year}")


def full_submission(filing: ServedFiling, html: bytes) -> bytes:
    """An EDGAR full-submission .txt: the SGML header EDGAR writes, then the documents."""
    header = f"""<SEC-DOCUMENT>{filing.accession}.txt : {_compact(filing.filing_date)}
<SEC-HEADER>{filing.accession}.hdr.sgml : {_compact(filing.filing_date)}
<ACCEPTANCE-DATETIME>{_compact(filing.filing_date)}060000
ACCESSION NUMBER:\t\t{filing.accession}
CONFORMED SUBMISSION TYPE:\t{filing.form}
PUBLIC DOCUMENT COUNT:\t\t2
CONFORMED PERIOD OF REPORT:\t{_compact(filing.period_end)}
FILED AS OF DATE:\t\t{_compact(filing.filing_date)}
DATE AS OF CHANGE:\t\t{_compact(filing.filing_date)}

FILER:

\tCOMPANY DATA:\t
\t\tCOMPANY CONFORMED NAME:\t\t\t{filing.company}
\t\tCENTRAL INDEX KEY:\t\t\t{filing.cik:010d}
\t\tSTANDARD INDUSTRIAL CLASSIFICATION:\t{filing.sic}
\t\tSTATE OF INCORPORATION:\t\t\tCA
\t\tFISCAL YEAR END:\t\t\t{filing.fiscal_year_end}

\tFILING VALUES:
\t\tFORM TYPE:\t\t{filing.form}
\t\tSEC ACT:\t\t1934 Act
\t\tSEC FILE NUMBER:\t001-36743
\t\tFILM NUMBER:\t\t241416806
</SEC-HEADER>
<DOCUMENT>
<TYPE>{filing.form}
<SEQUENCE>1
<FILENAME>{filing.primary_document}
<DESCRIPTION>{filing.form}
<TEXT>
<XBRL>
"""
    tail = """
</XBRL>
</TEXT>
</DOCUMENT>
<DOCUMENT>
<TYPE>EX-21.1
<SEQUENCE>2
<FILENAME>ex211.htm
<DESCRIPTION>EX-21.1
<TEXT>
<html><body><p>Subsidiaries of the Registrant</p></body></html>
</TEXT>
</DOCUMENT>
</SEC-DOCUMENT>
"""
    return header.encode("ascii") + html.rstrip(b"\r\n") + tail.encode("ascii")


class EdgarServer:
    def __init__(self, shared_dir: Path):
        self.corpus = Path(shared_dir) / "corpus"
        self.faults: dict[str, str] = {}
        self.requests: list[str] = []
        self.user_agents: list[str] = []
        self._lock = threading.Lock()
        self._archive: dict[str, tuple[ServedFiling, str]] = {}
        for f in SERVED_FILINGS:
            base = f"/Archives/edgar/data/{f.cik}/{f.accession.replace('-', '')}/"
            self._archive[base + f.primary_document] = (f, "primary")
            self._archive[base + f.accession + ".txt"] = (f, "full")
        self._cache: dict[str, bytes] = {}
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------------------
    def __enter__(self) -> "EdgarServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802 (http.server's name)
                server._handle(self)

            def log_message(self, *args):  # keep test output clean
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="edgar-test-server", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # --- content ---------------------------------------------------------------------------------------
    def _read(self, rel: str) -> bytes:
        if rel not in self._cache:
            self._cache[rel] = (self.corpus / rel).read_bytes()
        return self._cache[rel]

    def body_for(self, path: str) -> tuple[bytes, str] | None:
        if path in ("/files/company_tickers_exchange.json", "/files/company_tickers.json"):
            return self._read("edgar/" + path.rsplit("/", 1)[1]), "application/json"
        if path.startswith("/submissions/"):
            name = path.rsplit("/", 1)[1]
            if name in SUBMISSIONS:
                return self._read(SUBMISSIONS[name]), "application/json"
            if "-submissions-" in name:
                return json.dumps(EMPTY_PAGE).encode(), "application/json"
            return None
        if path in self._archive:
            filing, kind = self._archive[path]
            html = self.primary_document(filing)
            if kind == "primary":
                return html, "text/html"
            key = "full:" + filing.accession
            if key not in self._cache:
                self._cache[key] = full_submission(filing, html)
            return self._cache[key], "text/plain"
        return None

    def primary_document(self, filing: ServedFiling) -> bytes:
        """The HTML served as the filing's primary document."""
        key = "primary:" + filing.accession
        if key not in self._cache:
            self._cache[key] = stamped_quarter(filing, self._read(filing.corpus_path))
        return self._cache[key]

    # --- handler ---------------------------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path.split("?", 1)[0]
        with self._lock:
            self.requests.append(path)
            self.user_agents.append(h.headers.get("User-Agent", ""))
        fault = next((v for k, v in self.faults.items() if k in path), None)
        if fault and fault.isdigit():
            self._send(h, int(fault), b"<html><body>error</body></html>", "text/html")
            return
        found = self.body_for(path)
        if found is None:
            self._send(h, 404, b"<html><body>Not Found</body></html>", "text/html")
            return
        body, ctype = found
        if fault == "cut":
            h.send_response(200)
            h.send_header("Content-Type", ctype)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body[: len(body) // 3])
            h.wfile.flush()
            h.close_connection = True
            return
        if fault == "truncate":
            h.send_response(200)
            h.send_header("Content-Type", ctype)
            h.send_header("Connection", "close")
            h.end_headers()
            h.wfile.write(body[: len(body) // 2])
            h.wfile.flush()
            h.close_connection = True
            return
        self._send(h, 200, body, ctype)

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, body: bytes, ctype: str) -> None:
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        if status == 429:
            h.send_header("Retry-After", "600")
        h.end_headers()
        h.wfile.write(body)
