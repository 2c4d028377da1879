"""Exact figures from the filings' inline XBRL facts: stored at index time, read in code, never by a model.

A 10-K's inline XBRL tags every reported number (`ix:nonFraction`: concept, context period, dimensions, unit,
scale, sign). This module keeps them in SQLite beside the index and answers the commonest analyst question, a
number, straight from them:

    store = FactStore.for_settings(settings)          # storage/facts.sqlite3
    store.add_filing(meta, parsed.facts, chunks)      # at index time (rag/index.py calls record_filing)
    layer = FactsLayer(settings, chunk_lookup=...)    # the engine holds one
    fa = layer.answer_for(question, tickers, years)   # FactAnswer (block with [F1].. + citations) or None
    warnings = layer.check_answer(text, question, tickers, years)

Rules that matter for correctness (a wrong number stated confidently is the worst outcome):
- Fiscal year Y of company C is read from the filing whose own fiscal year (dei:DocumentFiscalYearFocus) is Y,
  from the context that covers that filing's own fiscal period (a ~1-year duration ending at the period end, or
  the instant at the period end) with no dimensions (the consolidated total). A later filing's prior-year
  comparative is used only when no FY Y filing is indexed, and the answer says so.
- A metric maps to an ordered list of concepts; the first with a value wins. Duplicated facts (the same figure in
  the statements and in MD&A) must agree within their stated precision, or the metric is not answered.
- A metric qualified by words the facts cannot resolve ("iPhone revenue", "revenue in Europe") is answered only
  when a dimension member of the filing matches those words; otherwise the question falls through to retrieval.
- Every computed figure (growth, margins, ratios, sums, differences) is computed here, and the answer shows the
  formula and every input with its citation.

No streamlit here; the app, the CLI and the tests share it.
"""

from __future__ import annotations

import bisect
import json
import logging
import math
import re
import sqlite3
import sys
import threading
import time
from collections import Counter, defaultdict
from contextlib import closing
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Callable, Iterable, Iterator

log = logging.getLogger(__name__)

SCHEMA_VERSION = "1"
DB_NAME = "facts.sqlite3"
ANNUAL_FORMS = ("10-K", "10-K/A", "10-KT", "10-KT/A", "20-F", "20-F/A", "40-F", "40-F/A")
ANNUAL_DAYS = (350, 380)  # a fiscal year: 52/53-week years are 364 or 371 days

# ==============================================================================================================
# Labels

WELL_KNOWN_LABELS = {
    "us-gaap:Revenues": "Total revenues",
    "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax": "Revenue from contracts with customers",
    "us-gaap:RevenueFromContractWithCustomerIncludingAssessedTax": "Revenue from contracts with customers (incl. assessed tax)",
    "us-gaap:SalesRevenueNet": "Net sales",
    "us-gaap:RevenuesNetOfInterestExpense": "Total revenues, net of interest expense",
    "us-gaap:CostOfRevenue": "Cost of revenue",
    "us-gaap:CostOfGoodsAndServicesSold": "Cost of goods and services sold",
    "us-gaap:GrossProfit": "Gross profit",
    "us-gaap:OperatingIncomeLoss": "Operating income (loss)",
    "us-gaap:OperatingExpenses": "Operating expenses",
    "us-gaap:CostsAndExpenses": "Total costs and expenses",
    "us-gaap:NetIncomeLoss": "Net income (loss) attributable to the company",
    "us-gaap:ProfitLoss": "Net income (loss) including noncontrolling interests",
    "us-gaap:NetIncomeLossAvailableToCommonStockholdersBasic": "Net income available to common stockholders",
    "us-gaap:EarningsPerShareDiluted": "Diluted earnings per share",
    "us-gaap:EarningsPerShareBasic": "Basic earnings per share",
    "us-gaap:EarningsPerShareBasicAndDiluted": "Basic and diluted earnings per share",
    "us-gaap:Assets": "Total assets",
    "us-gaap:AssetsCurrent": "Total current assets",
    "us-gaap:Liabilities": "Total liabilities",
    "us-gaap:LiabilitiesCurrent": "Total current liabilities",
    "us-gaap:LiabilitiesAndStockholdersEquity": "Total liabilities and stockholders' equity",
    "us-gaap:StockholdersEquity": "Total stockholders' equity",
    "us-gaap:StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest": "Total equity including noncontrolling interests",
    "us-gaap:CashAndCashEquivalentsAtCarryingValue": "Cash and cash equivalents",
    "us-gaap:CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents": "Cash, cash equivalents and restricted cash",
    "us-gaap:NetCashProvidedByUsedInOperatingActivities": "Net cash provided by (used in) operating activities",
    "us-gaap:NetCashProvidedByUsedInInvestingActivities": "Net cash provided by (used in) investing activities",
    "us-gaap:NetCashProvidedByUsedInFinancingActivities": "Net cash provided by (used in) financing activities",
    "us-gaap:PaymentsToAcquirePropertyPlantAndEquipment": "Payments for property, plant and equipment",
    "us-gaap:PaymentsToAcquireProductiveAssets": "Purchases of property and equipment (productive assets)",
    "us-gaap:ResearchAndDevelopmentExpense": "Research and development expense",
    "us-gaap:SellingGeneralAndAdministrativeExpense": "Selling, general and administrative expense",
    "us-gaap:IncomeTaxExpenseBenefit": "Provision for (benefit from) income taxes",
    "us-gaap:LongTermDebt": "Long-term debt, including current portion",
    "us-gaap:LongTermDebtNoncurrent": "Long-term debt, non-current",
    "us-gaap:LongTermDebtCurrent": "Long-term debt, current portion",
    "us-gaap:EffectiveIncomeTaxRateContinuingOperations": "Effective income tax rate",
    "us-gaap:WeightedAverageNumberOfDilutedSharesOutstanding": "Weighted-average diluted shares outstanding",
    "us-gaap:WeightedAverageNumberOfSharesOutstandingBasic": "Weighted-average basic shares outstanding",
    "us-gaap:CommonStockSharesOutstanding": "Common shares outstanding (balance sheet)",
    "dei:EntityCommonStockSharesOutstanding": "Shares of common stock outstanding (cover page)",
    "dei:EntityPublicFloat": "Public float (aggregate market value held by non-affiliates)",
    "us-gaap:StockRepurchaseProgramRemainingAuthorizedRepurchaseAmount1": "Remaining authorized stock repurchase amount",
    "us-gaap:PaymentsForRepurchaseOfCommonStock": "Payments for repurchase of common stock",
    "us-gaap:PaymentsOfDividends": "Dividends paid",
    "us-gaap:PaymentsOfDividendsCommonStock": "Dividends paid on common stock",
    "us-gaap:ShareBasedCompensation": "Share-based compensation",
    "us-gaap:DepreciationDepletionAndAmortization": "Depreciation, depletion and amortization",
}

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def split_camel(name: str) -> list[str]:
    """'RevenueFromContractWithCustomer' -> ['Revenue', 'From', ...]; 'IPhone' -> ['iPhone']."""
    words = _CAMEL.sub(" ", name).split()
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        # A lone capital before a word is a product prefix: 'I Phone' -> 'iPhone', 'E Commerce' -> 'eCommerce'.
        if len(w) == 1 and w.isupper() and i + 1 < len(words) and words[i + 1][:1].isupper() and w not in "A":
            out.append(w.lower() + words[i + 1])
            i += 2
            continue
        out.append(w)
        i += 1
    return out


def concept_label(concept: str) -> str:
    """A readable label: the table of well-known concepts, else the CamelCase name split into words."""
    if concept in WELL_KNOWN_LABELS:
        return WELL_KNOWN_LABELS[concept]
    words = split_camel(concept.split(":")[-1])
    if not words:
        return concept
    rest = [w if (w.isupper() or any(c.isupper() for c in w[1:])) else w.lower() for w in words[1:]]
    return " ".join([words[0]] + rest)


def member_words(member: str) -> list[str]:
    """'tsla:AutomotiveSalesMember' -> ['automotive', 'sales']; 'aapl:IPhoneMember' -> ['iphone']."""
    local = member.split(":")[-1]
    local = re.sub(r"(Member|Segment|SegmentMember)$", "", local)
    local = re.sub(r"Segment$", "", local)
    return [w.lower() for w in split_camel(local) if w]


def member_label(member: str) -> str:
    local = re.sub(r"(?:Segment)?Member$", "", member.split(":")[-1])
    return " ".join(split_camel(local)) or member


def _lc(label: str) -> str:
    """'Diluted EPS' -> 'diluted EPS': lower-case for mid-sentence use, acronyms kept."""
    return " ".join(w if sum(c.isupper() for c in w) > 1 else w.lower() for w in label.split())


def dims_label(dims: dict) -> str:
    return "; ".join(f"{concept_label(axis).removesuffix(' axis')} = {member_label(m)}" for axis, m in dims.items())


# ==============================================================================================================
# Units and formatting

_SCALE_WORD = {3: "thousand", 6: "million", 9: "billion"}
_CURRENCY = re.compile(r"(usd|eur|gbp|jpy|cny|cad|chf|aud|inr|krw|sek|dkk|nok|brl|mxn|hkd|sgd|twd)", re.I)


def unit_kind(unit: str | None) -> str:
    """money / per_share / shares / pure / other, from an ix unitRef id ('usd', 'usdPerShare', 'shares', ...)."""
    u = re.sub(r"[^a-z/]", "", (unit or "").lower())
    if not u:
        return "other"
    if "share" in u and ("per" in u or "/" in u) and _CURRENCY.search(u):
        return "per_share"
    if u in ("shares", "share") or (u.endswith("shares") and not _CURRENCY.search(u)):
        return "shares"
    if u in ("pure", "percent", "ratio", "number") or u.startswith("pure"):
        return "pure"
    if _CURRENCY.search(u) and "per" not in u:
        return "money"
    return "other"


def currency_of(unit: str | None) -> str:
    m = _CURRENCY.search(unit or "")
    return m.group(1).upper() if m else ""


def _places(text: str | None) -> int:
    m = re.search(r"\.(\d+)\s*$", (text or "").strip().rstrip(")%"))
    return len(m.group(1)) if m else 0


def format_money(value: float, scale: int = 6, places: int = 0, currency: str = "USD") -> str:
    sign = "-" if value < 0 else ""
    cur = "$" if currency in ("USD", "") else f"{currency} "
    v = abs(value)
    if scale in _SCALE_WORD:
        return f"{sign}{cur}{v / 10 ** scale:,.{places}f} {_SCALE_WORD[scale]}"
    return f"{sign}{cur}{v:,.{places}f}"


def format_amount(value: float, kind: str, *, scale: int = 0, places: int | None = None, unit: str = "") -> str:
    """A value as an analyst writes it: '$391,035 million', '$6.08 per share', '15,115,823,000 shares', '24.1%'."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    if kind == "money":
        return format_money(value, scale if scale in _SCALE_WORD else 0, places or 0, currency_of(unit) or "USD")
    if kind == "per_share":
        cur = currency_of(unit) or "USD"
        sign = "-" if value < 0 else ""
        sym = "$" if cur == "USD" else f"{cur} "
        return f"{sign}{sym}{abs(value):,.{2 if places is None else max(places, 2)}f} per share"
    if kind == "shares":
        return f"{value:,.0f} shares"
    if kind in ("pure", "percent"):
        p = 2 if places is None else places
        return f"{value * 100:,.{p}f}%"
    if kind == "ratio":
        return f"{value:,.{2 if places is None else places}f}"
    return f"{value:,.{places or 0}f} {unit}".strip()


def _nice_date(iso: str | None) -> str:
    try:
        d = date.fromisoformat(str(iso))
    except (TypeError, ValueError):
        return str(iso or "")
    return f"{d.strftime('%B')} {d.day}, {d.year}"


def _days(start: str | None, end: str | None) -> int | None:
    try:
        return (date.fromisoformat(end) - date.fromisoformat(start)).days
    except (TypeError, ValueError):
        return None


def _tolerance(decimals) -> float:
    """Half a unit of the stated precision: decimals=-6 -> 500,000."""
    if decimals in (None, "", "INF", "inf"):
        return 0.0
    try:
        return 0.5 * 10 ** (-int(decimals))
    except (TypeError, ValueError):
        return 0.0


def _precision(decimals) -> int:
    if decimals in (None, "", "INF", "inf"):
        return 99
    try:
        return int(decimals)
    except (TypeError, ValueError):
        return 99


# ==============================================================================================================
# The store

SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_info (
    key TEXT PRIMARY KEY,
    value TEXT
);
CREATE TABLE IF NOT EXISTS filings (
    doc_id TEXT PRIMARY KEY,
    ticker TEXT,
    company TEXT,
    cik TEXT,
    form TEXT,
    fiscal_year INTEGER,
    fiscal_year_source TEXT,
    period_start TEXT,
    period_end TEXT,
    filing_date TEXT,
    accession TEXT,
    url TEXT,
    source TEXT,
    path TEXT,
    sha256 TEXT,
    fact_count INTEGER NOT NULL DEFAULT 0,
    indexed_at TEXT
);
CREATE INDEX IF NOT EXISTS filings_ticker_fy ON filings (ticker, fiscal_year);
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY,
    doc_id TEXT NOT NULL REFERENCES filings (doc_id) ON DELETE CASCADE,
    concept TEXT NOT NULL,
    label TEXT,
    value REAL,
    text TEXT,
    unit TEXT,
    context_id TEXT,
    period_start TEXT,
    period_end TEXT,
    instant INTEGER NOT NULL DEFAULT 0,
    dimensions TEXT NOT NULL DEFAULT '{}',
    dim_count INTEGER NOT NULL DEFAULT 0,
    decimals TEXT,
    scale INTEGER NOT NULL DEFAULT 0,
    char_start INTEGER NOT NULL DEFAULT -1,
    char_end INTEGER NOT NULL DEFAULT -1,
    chunk_id TEXT,
    section TEXT,
    page INTEGER,
    row_label TEXT
);
CREATE INDEX IF NOT EXISTS facts_doc_concept ON facts (doc_id, concept);
CREATE INDEX IF NOT EXISTS facts_concept ON facts (concept);
"""

FILING_COLUMNS = (
    "doc_id", "ticker", "company", "cik", "form", "fiscal_year", "fiscal_year_source", "period_start",
    "period_end", "filing_date", "accession", "url", "source", "path", "sha256", "fact_count", "indexed_at",
)
FACT_COLUMNS = (
    "doc_id", "concept", "label", "value", "text", "unit", "context_id", "period_start", "period_end", "instant",
    "dimensions", "dim_count", "decimals", "scale", "char_start", "char_end", "chunk_id", "section", "page",
    "row_label",
)


@dataclass
class FactRow:
    """One stored fact occurrence (the same figure shown twice in a filing is two rows)."""

    doc_id: str
    concept: str
    label: str
    value: float | None
    text: str
    unit: str
    context_id: str
    period_start: str | None
    period_end: str | None
    instant: bool
    dimensions: dict
    decimals: str | None
    scale: int
    char_start: int
    char_end: int
    chunk_id: str | None
    section: str | None
    page: int | None
    row_label: str = ""  # the table row's label (or the text before the figure on its line)

    @classmethod
    def from_db(cls, row: sqlite3.Row) -> "FactRow":
        d = dict(row)
        return cls(
            doc_id=d["doc_id"], concept=d["concept"], label=d["label"] or "", value=d["value"], text=d["text"] or "",
            unit=d["unit"] or "", context_id=d["context_id"] or "", period_start=d["period_start"],
            period_end=d["period_end"], instant=bool(d["instant"]), dimensions=json.loads(d["dimensions"] or "{}"),
            decimals=d["decimals"], scale=int(d["scale"] or 0), char_start=int(d["char_start"]),
            char_end=int(d["char_end"]), chunk_id=d["chunk_id"], section=d["section"], page=d["page"],
            row_label=d.get("row_label") or "",
        )

    @property
    def days(self) -> int | None:
        return None if self.instant else _days(self.period_start, self.period_end)

    @property
    def kind(self) -> str:
        return unit_kind(self.unit)

    def display(self) -> str:
        return format_amount(self.value, self.kind, scale=self.scale, places=_places(self.text), unit=self.unit)

    def period_text(self) -> str:
        if self.instant or not self.period_start:
            return f"as of {_nice_date(self.period_end)}"
        return f"{self.period_start} to {self.period_end}"


def chunk_spans_from_nodes(nodes_path: Path) -> list[dict]:
    """The chunk spans of an index shard's nodes.jsonl: id, char_start, char_end, section, page_start."""
    spans = []
    with open(nodes_path, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            m = row.get("metadata") or {}
            if m.get("char_start") is None or m.get("char_end") is None:
                continue
            spans.append({"id": row["id"], "char_start": int(m["char_start"]), "char_end": int(m["char_end"]),
                          "section": m.get("section"), "page_start": m.get("page_start")})
    return spans


def map_to_chunks(facts, chunks: list[dict]) -> list[dict | None]:
    """For each fact, the chunk whose [char_start, char_end) holds the fact's span (None when hidden or outside)."""
    ordered = sorted(chunks, key=lambda c: (c["char_start"], c["char_end"]))
    starts = [c["char_start"] for c in ordered]
    out: list[dict | None] = []
    for f in facts:
        fs = getattr(f, "char_start", -1)
        if fs is None or fs < 0:
            out.append(None)
            continue
        i = bisect.bisect_right(starts, fs) - 1
        # Chunks do not overlap: the last chunk starting at or before the fact holds it if it reaches past it.
        hit = ordered[i] if i >= 0 and fs < ordered[i]["char_end"] else None
        out.append(hit)
    return out


class FactStore:
    """SQLite store of every filing's facts (storage/facts.sqlite3). Cheap to create; one connection per call,
    so it is safe across Streamlit threads and beside a CLI writer (WAL, busy timeout)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._ready = False
        self._lock = threading.Lock()

    @classmethod
    def for_settings(cls, settings) -> "FactStore":
        return cls(Path(settings.storage_dir) / DB_NAME)

    def exists(self) -> bool:
        return self.path.exists()

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(str(self.path), timeout=30.0)
        con.row_factory = sqlite3.Row
        con.execute("PRAGMA foreign_keys = ON")
        if not self._ready:
            with self._lock:
                try:
                    con.execute("PRAGMA journal_mode = WAL")
                except sqlite3.OperationalError:
                    pass
                con.executescript(SCHEMA)
                cols = {r[1] for r in con.execute("PRAGMA table_info(facts)")}
                if "row_label" not in cols:  # a store made before row labels were kept
                    con.execute("ALTER TABLE facts ADD COLUMN row_label TEXT")
                con.execute("INSERT OR REPLACE INTO schema_info (key, value) VALUES ('version', ?)",
                            (SCHEMA_VERSION,))
                con.commit()
                self._ready = True
        return con

    # ---- writing
    def add_filing(self, meta: dict, facts: Iterable, chunks: list[dict] | None = None, text: str | None = None) -> int:
        """Replace a filing's facts. `facts` are rag.parse.Fact objects; `chunks` are the index chunks' spans
        ({id, char_start, char_end, section, page_start}) used to cite each fact's chunk; `text` is the parsed
        filing text the facts' spans point into (for each figure's row label). Returns the count."""
        facts = [f for f in facts if getattr(f, "concept", None)]
        placed = map_to_chunks(facts, chunks or [])
        doc_id = str(meta["doc_id"])
        rows = []
        for f, chunk in zip(facts, placed, strict=True):
            if f.value is None and not str(f.concept).lower().startswith("dei:"):
                continue
            dims = dict(f.dimensions or {})
            instant = f.period_start in (None, "")
            rows.append((
                doc_id, f.concept, concept_label(f.concept), f.value, (f.text or "")[:500], f.unit or "",
                f.context_id or "", f.period_start or None, f.period_end or None, int(instant),
                json.dumps(dims, sort_keys=True), len(dims), f.decimals, int(f.scale or 0),
                int(f.char_start if f.char_start is not None else -1), int(f.char_end if f.char_end is not None else -1),
                chunk["id"] if chunk else None, chunk.get("section") if chunk else None,
                chunk.get("page_start") if chunk else None,
                _row_label(text, f.char_start) if text else None,
            ))
        filing = {k: meta.get(k) for k in FILING_COLUMNS}
        filing["doc_id"] = doc_id
        filing["ticker"] = (str(meta.get("ticker") or "").upper()) or None
        filing["form"] = (str(meta.get("form") or "").upper()) or None
        filing["fiscal_year"] = int(meta["fiscal_year"]) if meta.get("fiscal_year") not in (None, "") else None
        filing["period_start"] = meta.get("period_start") or _own_period_start(facts, meta.get("period_end"))
        filing["fact_count"] = len(rows)
        filing["indexed_at"] = time.strftime("%Y-%m-%dT%H:%M:%S")
        with closing(self._connect()) as con, con:
            con.execute("DELETE FROM facts WHERE doc_id = ?", (doc_id,))
            con.execute(
                f"INSERT OR REPLACE INTO filings ({', '.join(FILING_COLUMNS)}) "
                f"VALUES ({', '.join('?' for _ in FILING_COLUMNS)})",
                tuple(filing[k] for k in FILING_COLUMNS),
            )
            con.executemany(
                f"INSERT INTO facts ({', '.join(FACT_COLUMNS)}) VALUES ({', '.join('?' for _ in FACT_COLUMNS)})", rows
            )
        return len(rows)

    def remove(self, doc_ids: Iterable[str]) -> int:
        ids = [str(d) for d in doc_ids]
        if not ids or not self.exists():
            return 0
        marks = ", ".join("?" for _ in ids)
        with closing(self._connect()) as con, con:
            con.execute(f"DELETE FROM facts WHERE doc_id IN ({marks})", ids)
            cur = con.execute(f"DELETE FROM filings WHERE doc_id IN ({marks})", ids)
            return cur.rowcount

    def prune(self, keep_doc_ids: Iterable[str]) -> list[str]:
        """Drop filings that are not in `keep_doc_ids` (the live index); returns what was dropped."""
        keep = set(map(str, keep_doc_ids))
        gone = [f["doc_id"] for f in self.filings() if f["doc_id"] not in keep]
        self.remove(gone)
        return gone

    # ---- reading
    def has(self, doc_id: str) -> bool:
        if not self.exists():
            return False
        with closing(self._connect()) as con:
            return con.execute("SELECT 1 FROM filings WHERE doc_id = ?", (str(doc_id),)).fetchone() is not None

    def filings(self, ticker: str | None = None, doc_ids: Iterable[str] | None = None) -> list[dict]:
        if not self.exists():
            return []
        sql, args = "SELECT * FROM filings", []
        if ticker:
            sql += " WHERE ticker = ?"
            args.append(ticker.upper())
        with closing(self._connect()) as con:
            rows = [dict(r) for r in con.execute(sql + " ORDER BY ticker, fiscal_year DESC, form", args)]
        if doc_ids is not None:
            allowed = set(map(str, doc_ids))
            rows = [r for r in rows if r["doc_id"] in allowed]
        return rows

    def filing(self, doc_id: str) -> dict | None:
        if not self.exists():
            return None
        with closing(self._connect()) as con:
            row = con.execute("SELECT * FROM filings WHERE doc_id = ?", (str(doc_id),)).fetchone()
        return dict(row) if row else None

    def facts(self, doc_id: str, concepts: Iterable[str] | None = None) -> list[FactRow]:
        if not self.exists():
            return []
        sql, args = "SELECT * FROM facts WHERE doc_id = ?", [str(doc_id)]
        if concepts is not None:
            concepts = list(concepts)
            if not concepts:
                return []
            sql += f" AND concept IN ({', '.join('?' for _ in concepts)})"
            args += concepts
        with closing(self._connect()) as con:
            return [FactRow.from_db(r) for r in con.execute(sql + " ORDER BY id", args)]

    def docs_with(self, concepts: Iterable[str], period_ends: Iterable[str]) -> list[str]:
        """Filings with a consolidated (no-dimension) value of one of `concepts` at one of `period_ends`."""
        concepts, ends = list(concepts), list(period_ends)
        if not concepts or not ends or not self.exists():
            return []
        sql = (f"SELECT DISTINCT doc_id FROM facts WHERE dim_count = 0 AND value IS NOT NULL "
               f"AND concept IN ({', '.join('?' for _ in concepts)}) AND period_end IN ({', '.join('?' for _ in ends)})")
        with closing(self._connect()) as con:
            return [r[0] for r in con.execute(sql, concepts + ends)]

    def count(self, doc_id: str | None = None) -> int:
        if not self.exists():
            return 0
        with closing(self._connect()) as con:
            if doc_id:
                return con.execute("SELECT COUNT(*) FROM facts WHERE doc_id = ?", (doc_id,)).fetchone()[0]
            return con.execute("SELECT COUNT(*) FROM facts").fetchone()[0]

    def tickers(self) -> list[str]:
        return sorted({f["ticker"] for f in self.filings() if f.get("ticker")})


def _row_label(text: str, start: int | None) -> str | None:
    """The label of the table row a figure sits in ('Total net sales'); None for a figure in prose."""
    if start is None or start < 0 or start > len(text):
        return None
    line = text[text.rfind("\n", 0, start) + 1:start]
    if "|" not in line:
        return None
    label = re.sub(r"[\s$(]+$", "", line.split("|")[0]).strip(" :.-")
    return label[:200] or None


def _own_period_start(facts, period_end: str | None) -> str | None:
    """The start of the filing's own fiscal period: the most common start of the ~1-year consolidated durations
    that end at the period end."""
    if not period_end:
        return None
    starts = Counter(
        f.period_start for f in facts
        if f.period_start and f.period_end == period_end and not f.dimensions
        and ANNUAL_DAYS[0] <= (_days(f.period_start, f.period_end) or 0) <= ANNUAL_DAYS[1]
    )
    if starts:
        return starts.most_common(1)[0][0]
    quarter = Counter(f.period_start for f in facts if f.period_start and f.period_end == period_end
                      and not f.dimensions)
    return quarter.most_common(1)[0][0] if quarter else None


# ==============================================================================================================
# Index hooks (rag/index.py calls these)


def record_filing(settings, doc, meta: dict, shard_dir: Path | None) -> int:
    """Store a just-indexed filing's facts, each mapped to the chunk (node id) that shows it."""
    chunks = []
    if shard_dir is not None and (Path(shard_dir) / "nodes.jsonl").exists():
        chunks = chunk_spans_from_nodes(Path(shard_dir) / "nodes.jsonl")
    return FactStore.for_settings(settings).add_filing(meta, doc.facts, chunks, text=doc.text)


def backfill_filing(settings, entry: dict, shard_dir: Path | None) -> int | None:
    """For a filing indexed before facts were stored (or whose facts were lost): parse it again and store its
    facts. Returns the count, or None when it already has facts or its file is gone."""
    store = FactStore.for_settings(settings)
    if store.has(entry["doc_id"]):
        return None
    path = Path(entry.get("path") or "")
    if not path.is_file():
        return None
    from .parse import parse_file

    doc = parse_file(path)
    meta = dict(doc.meta)
    meta.update({k: v for k, v in entry.items() if v not in (None, "")})
    return record_filing(settings, doc, meta, shard_dir)


def forget_filings(settings, doc_ids: Iterable[str]) -> int:
    return FactStore.for_settings(settings).remove(doc_ids)


# ==============================================================================================================
# Metrics: analysts' words -> concepts (ordered: the first concept with a value wins)


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    phrases: tuple[str, ...]
    concepts: tuple[str, ...] = ()
    period: str = "duration"  # duration | instant | cover (a cover-page fact dated after the period end)
    kind: str = "money"  # money | per_share | shares | pure | percent | ratio
    members: bool = False  # may be narrowed by a dimension member ("iPhone net sales", "subscription revenue")
    derive: tuple | None = None  # ("sub" | "add" | "div", metric a, metric b): always computed
    fallback: tuple | None = None  # the same, used only when no concept has a value
    ext: str | None = None  # regex on a company extension concept's local name: the last resort
    formula: str = ""  # the computed figure's definition in words
    listed: bool = True  # offered on the Financials page
    veto: str | None = None  # words after the mention that mean something else ("how much cash did it return")


def _m(key, label, phrases, concepts=(), **kw) -> Metric:
    return Metric(key, label, tuple(phrases), tuple(concepts), **kw)


_G = "us-gaap:"
METRICS: list[Metric] = [
    _m("revenue", "Total revenue",
       [r"total\s+net\s+revenues?", r"total\s+revenues?", r"net\s+revenues?", r"total\s+net\s+sales", r"net\s+sales",
        r"total\s+sales", r"revenues?", r"sales", r"top[\s-]line", r"turnover"],
       [_G + "Revenues", _G + "RevenueFromContractWithCustomerExcludingAssessedTax",
        _G + "RevenueFromContractWithCustomerIncludingAssessedTax", _G + "SalesRevenueNet", _G + "SalesRevenueGoodsNet",
        _G + "RevenuesNetOfInterestExpense"], members=True),
    _m("cost_of_revenue", "Cost of revenue",
       [r"(?:total\s+)?costs?\s+of\s+(?:net\s+)?(?:revenues?|sales|goods\s+sold|goods\s+and\s+services\s+sold)",
        r"cogs"],
       [_G + "CostOfRevenue", _G + "CostOfGoodsAndServicesSold", _G + "CostOfGoodsSold",
        _G + "CostOfGoodsAndServiceExcludingDepreciationDepletionAndAmortization"], members=True),
    _m("gross_profit", "Gross profit", [r"gross\s+profits?"], [_G + "GrossProfit"], members=True,
       fallback=("sub", "revenue", "cost_of_revenue"), formula="total revenue − cost of revenue"),
    _m("operating_income", "Operating income",
       [r"operating\s+(?:income|profits?|earnings|loss(?:es)?)(?:\s*\(loss\))?",
        r"(?:income|earnings|profit)\s+(?:\(loss\)\s+)?from\s+operations", r"loss\s+from\s+operations"],
       [_G + "OperatingIncomeLoss"], members=True),
    _m("operating_expenses", "Total operating expenses", [r"(?:total\s+)?operating\s+expenses", r"opex"],
       [_G + "OperatingExpenses"]),
    _m("costs_and_expenses", "Total costs and expenses", [r"(?:total\s+)?costs\s+and\s+expenses"],
       [_G + "CostsAndExpenses"]),
    _m("net_income", "Net income",
       [r"net\s+(?:income|earnings|profits?|loss(?:es)?)(?:\s*\(loss\))?", r"profits?", r"bottom[\s-]line"],
       [_G + "NetIncomeLoss", _G + "ProfitLoss", _G + "NetIncomeLossAvailableToCommonStockholdersBasic"]),
    _m("pretax_income", "Income before income taxes",
       [r"(?:income|earnings|profit)\s+(?:\(loss\)\s+)?before\s+(?:provision\s+for\s+)?(?:income\s+)?taxes",
        r"pre-?\s?tax\s+(?:income|profit|earnings)"],
       [_G + "IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItemsNoncontrollingInterest",
        _G + "IncomeLossFromContinuingOperationsBeforeIncomeTaxesMinorityInterestAndIncomeLossFromEquityMethodInvestments"]),
    _m("income_tax", "Income tax expense",
       [r"(?:provision\s+for|benefit\s+from)\s+income\s+taxes", r"income\s+tax(?:es)?(?:\s+expense|\s+provision)?",
        r"tax\s+expense"],
       [_G + "IncomeTaxExpenseBenefit"]),
    _m("effective_tax_rate", "Effective tax rate", [r"effective\s+(?:income\s+)?tax\s+rate"],
       [_G + "EffectiveIncomeTaxRateContinuingOperations"], kind="pure",
       fallback=("div", "income_tax", "pretax_income"), formula="income tax expense / income before income taxes"),
    _m("eps_diluted", "Diluted EPS",
       [r"diluted\s+(?:eps|earnings\s+per\s+(?:common\s+)?share|net\s+income\s+per\s+(?:common\s+)?share)",
        r"(?:eps|earnings\s+per\s+(?:common\s+)?share|net\s+income\s+per\s+(?:common\s+)?share)(?:\s*[,(-]?\s*diluted\)?)?"],
       [_G + "EarningsPerShareDiluted", _G + "EarningsPerShareBasicAndDiluted"], kind="per_share"),
    _m("eps_basic", "Basic EPS",
       [r"basic\s+(?:eps|earnings\s+per\s+(?:common\s+)?share|net\s+income\s+per\s+(?:common\s+)?share)",
        r"(?:eps|earnings\s+per\s+(?:common\s+)?share)\s*[,(-]?\s*basic\)?"],
       [_G + "EarningsPerShareBasic", _G + "EarningsPerShareBasicAndDiluted"], kind="per_share"),
    _m("rnd", "Research and development expense",
       [r"research\s+and\s+development(?:\s+(?:expenses?|costs?|spending))?", r"r\s*&\s*d(?:\s+(?:expenses?|spending))?"],
       [_G + "ResearchAndDevelopmentExpense", _G + "ResearchAndDevelopmentExpenseExcludingAcquiredInProcessCost",
        _G + "ResearchAndDevelopmentExpenseSoftwareExcludingAcquiredInProcessCost"]),
    _m("sga", "Selling, general and administrative expense",
       [r"selling,?\s+general,?\s+and\s+administrative(?:\s+(?:expenses?|costs?))?", r"sg\s*&\s*a"],
       [_G + "SellingGeneralAndAdministrativeExpense"]),
    _m("sales_marketing", "Sales and marketing expense",
       [r"(?:sales|selling)\s+and\s+marketing(?:\s+expenses?)?"], [_G + "SellingAndMarketingExpense"]),
    _m("gna", "General and administrative expense", [r"general\s+and\s+administrative(?:\s+expenses?)?"],
       [_G + "GeneralAndAdministrativeExpense"]),
    _m("interest_expense", "Interest expense", [r"interest\s+expense"],
       [_G + "InterestExpense", _G + "InterestExpenseNonoperating", _G + "InterestExpenseDebt"]),
    _m("net_interest_income", "Net interest income", [r"net\s+interest\s+income"], [_G + "InterestIncomeExpenseNet"]),
    _m("dna", "Depreciation and amortization",
       [r"depreciation,?\s+(?:depletion\s+)?and\s+amortization", r"d\s*&\s*a"],
       [_G + "DepreciationDepletionAndAmortization", _G + "DepreciationAmortizationAndAccretionNet",
        _G + "DepreciationAndAmortization"]),
    _m("sbc", "Stock-based compensation",
       [r"(?:stock|share)[\s-]based\s+compensation(?:\s+expense)?", r"stock\s+compensation(?:\s+expense)?"],
       [_G + "ShareBasedCompensation", _G + "AllocatedShareBasedCompensationExpense"]),
    _m("operating_cash_flow", "Operating cash flow",
       [r"(?:net\s+)?cash\s+(?:flows?\s+)?(?:provided\s+by|generated\s+(?:by|from)|from)\s+(?:\(used\s+in\)\s+)?"
        r"operati(?:ng\s+activities|ons)",
        r"operating\s+cash\s+flows?", r"cash\s+flows?\s+from\s+operati(?:ons|ng\s+activities)", r"ocf"],
       [_G + "NetCashProvidedByUsedInOperatingActivities",
        _G + "NetCashProvidedByUsedInOperatingActivitiesContinuingOperations"]),
    _m("investing_cash_flow", "Investing cash flow",
       [r"(?:net\s+)?cash\s+(?:flows?\s+)?(?:used\s+in|provided\s+by|from)\s+(?:\(used\s+in\)\s+)?investing\s+activities",
        r"investing\s+cash\s+flows?"],
       [_G + "NetCashProvidedByUsedInInvestingActivities",
        _G + "NetCashProvidedByUsedInInvestingActivitiesContinuingOperations"]),
    _m("financing_cash_flow", "Financing cash flow",
       [r"(?:net\s+)?cash\s+(?:flows?\s+)?(?:used\s+in|provided\s+by|from)\s+(?:\(used\s+in\)\s+)?financing\s+activities",
        r"financing\s+cash\s+flows?"],
       [_G + "NetCashProvidedByUsedInFinancingActivities",
        _G + "NetCashProvidedByUsedInFinancingActivitiesContinuingOperations"]),
    _m("capex", "Capital expenditures",
       [r"capital\s+expenditures?", r"capex", r"capital\s+spending",
        r"(?:purchases?|payments?\s+for|acquisitions?)\s+of\s+property,?\s+(?:plant,?\s+)?and\s+equipment",
        r"payments?\s+for\s+property,?\s+(?:plant,?\s+)?and\s+equipment"],
       [_G + "PaymentsToAcquirePropertyPlantAndEquipment", _G + "PaymentsToAcquireProductiveAssets"],
       ext=r"^(?:PurchasesOf|PaymentsFor|PaymentsToAcquire)Property(?:Plant)?AndEquipment"),
    _m("free_cash_flow", "Free cash flow", [r"free\s+cash\s+flows?", r"fcf"],
       derive=("sub", "operating_cash_flow", "capex"), formula="operating cash flow − capital expenditures"),
    _m("dividends_paid", "Dividends paid",
       [r"(?:cash\s+)?dividends\s+paid", r"payments?\s+(?:of|for)\s+dividends", r"dividend\s+payments"],
       [_G + "PaymentsOfDividends", _G + "PaymentsOfDividendsCommonStock"]),
    _m("dps", "Dividends declared per share",
       [r"dividends?\s+(?:declared\s+|paid\s+)?per\s+(?:common\s+)?share"],
       [_G + "CommonStockDividendsPerShareDeclared", _G + "CommonStockDividendsPerShareCashPaid"], kind="per_share"),
    _m("buybacks", "Share repurchases",
       [r"(?:share|stock)\s+repurchases?", r"(?:share\s+|stock\s+)?buybacks?",
        r"repurchases?\s+of\s+(?:its\s+)?(?:common\s+)?(?:stock|shares)",
        r"payments?\s+for\s+repurchases?\s+of\s+common\s+stock"],
       [_G + "PaymentsForRepurchaseOfCommonStock"]),
    _m("repurchase_remaining", "Remaining share repurchase authorization",
       [r"remaining\s+(?:\w+\s+){0,2}?(?:repurchase\s+)?(?:authority|authorization)",
        r"(?:repurchase\s+)?(?:authority|authorization)\s+(?:that\s+)?remain\w*",
        r"(?:stock|share)\s+repurchase\s+(?:authority|authorization)\s+(?:that\s+)?remain\w*"],
       [_G + "StockRepurchaseProgramRemainingAuthorizedRepurchaseAmount1"], period="instant"),
    _m("total_assets", "Total assets", [r"total\s+assets", r"assets"], [_G + "Assets"], period="instant"),
    _m("current_assets", "Total current assets", [r"(?:total\s+)?current\s+assets"], [_G + "AssetsCurrent"],
       period="instant"),
    _m("total_liabilities", "Total liabilities", [r"total\s+liabilities", r"liabilities"], [_G + "Liabilities"],
       period="instant"),
    _m("current_liabilities", "Total current liabilities", [r"(?:total\s+)?current\s+liabilities"],
       [_G + "LiabilitiesCurrent"], period="instant"),
    _m("liabilities_and_equity", "Total liabilities and equity",
       [r"total\s+liabilities\s+and\s+(?:(?:stock|share)holders'?\s+|shareowners'?\s+)?equity"],
       [_G + "LiabilitiesAndStockholdersEquity"], period="instant"),
    _m("equity", "Stockholders' equity",
       [r"(?:total\s+)?(?:stock|share)holders?'?s?'?\s+equity", r"(?:total\s+)?shareowners?'?s?'?\s+equity",
        r"total\s+equity", r"book\s+value"],
       [_G + "StockholdersEquity", _G + "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest"],
       period="instant"),
    _m("cash", "Cash and cash equivalents",
       [r"cash\s+and\s+(?:cash\s+)?equivalents", r"cash(?:\s+balance|\s+on\s+hand|\s+position)?"],
       [_G + "CashAndCashEquivalentsAtCarryingValue", _G + "Cash",
        _G + "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents"], period="instant",
       veto=r"\b(?:return|spen[dt]|pa(?:y|id)|use[ds]?|generat|rais|invest|burn|distribut|flow|held|hold|from)"),
    _m("inventory", "Inventories", [r"inventor(?:y|ies)"], [_G + "InventoryNet"], period="instant"),
    _m("receivables", "Accounts receivable",
       [r"accounts\s+receivable(?:,?\s+net)?", r"trade\s+receivables?"],
       [_G + "AccountsReceivableNetCurrent", _G + "ReceivablesNetCurrent"], period="instant"),
    _m("payables", "Accounts payable", [r"accounts\s+payable"], [_G + "AccountsPayableCurrent"], period="instant"),
    _m("goodwill", "Goodwill", [r"goodwill"], [_G + "Goodwill"], period="instant"),
    _m("ppe", "Property, plant and equipment, net",
       [r"property,?\s+(?:plant,?\s+)?and\s+equipment(?:,?\s+net)?", r"pp\s*&\s*e"],
       [_G + "PropertyPlantAndEquipmentNet"], period="instant"),
    _m("retained_earnings", "Retained earnings (accumulated deficit)",
       [r"retained\s+earnings", r"accumulated\s+deficit"], [_G + "RetainedEarningsAccumulatedDeficit"],
       period="instant"),
    _m("deferred_revenue", "Deferred revenue (contract liabilities)",
       [r"deferred\s+revenues?", r"unearned\s+revenues?", r"contract\s+liabilit(?:y|ies)"],
       [_G + "ContractWithCustomerLiability", _G + "DeferredRevenue", _G + "ContractWithCustomerLiabilityCurrent",
        _G + "DeferredRevenueCurrent"], period="instant"),
    _m("long_term_debt", "Long-term debt (non-current)",
       [r"long[\s-]term\s+debt(?:,?\s+non[\s-]?current)?",
        r"non[\s-]?current\s+(?:portion\s+of\s+)?(?:long[\s-]term\s+|term\s+)?debt"],
       [_G + "LongTermDebtNoncurrent", _G + "LongTermDebtAndCapitalLeaseObligations", _G + "LongTermDebt"],
       period="instant"),
    _m("ltd_current", "Current portion of long-term debt",
       [r"current\s+portion\s+of\s+(?:long[\s-]term\s+|term\s+)?debt", r"current\s+(?:term\s+)?debt"],
       [_G + "LongTermDebtCurrent", _G + "LongTermDebtAndCapitalLeaseObligationsCurrent"], period="instant"),
    _m("total_debt", "Total term debt (current + non-current)",
       [r"total\s+(?:term|long[\s-]term)\s+debt", r"term\s+debt",
        r"long[\s-]term\s+debt,?\s+including\s+(?:the\s+)?current\s+(?:portion|maturities)"],
       [_G + "LongTermDebt", _G + "LongTermDebtAndCapitalLeaseObligationsIncludingCurrentMaturities"],
       period="instant", fallback=("add", "ltd_current", "long_term_debt"),
       formula="current portion + non-current portion of long-term debt"),
    _m("shares_outstanding", "Shares outstanding",
       [r"(?:common\s+)?shares\s+(?:of\s+(?:\w+\s+)?(?:common\s+)?stock\s+)?(?:were\s+|are\s+)?(?:issued\s+and\s+)?"
        r"outstanding",
        r"outstanding\s+(?:common\s+)?shares", r"share\s+count"],
       ["dei:EntityCommonStockSharesOutstanding", _G + "CommonStockSharesOutstanding"], period="cover",
       kind="shares"),
    _m("weighted_diluted", "Weighted-average diluted shares",
       [r"weighted[\s-]average\s+(?:number\s+of\s+)?diluted\s+shares(?:\s+outstanding)?",
        r"diluted\s+(?:weighted[\s-]average\s+)?shares(?:\s+outstanding)?"],
       [_G + "WeightedAverageNumberOfDilutedSharesOutstanding"], kind="shares"),
    _m("weighted_basic", "Weighted-average basic shares",
       [r"weighted[\s-]average\s+(?:number\s+of\s+)?(?:basic\s+)?shares(?:\s+outstanding)?",
        r"basic\s+(?:weighted[\s-]average\s+)?shares(?:\s+outstanding)?"],
       [_G + "WeightedAverageNumberOfSharesOutstandingBasic"], kind="shares"),
    _m("public_float", "Public float", [r"public\s+float", r"aggregate\s+market\s+value"], ["dei:EntityPublicFloat"],
       period="cover"),
    # Computed metrics: always from the two reported figures, with the formula shown.
    _m("gross_margin", "Gross margin",
       [r"gross\s+(?:profit\s+)?margins?(?:\s+(?:percentage|rate|ratio))?"],
       derive=("div", "gross_profit", "revenue"), kind="percent", formula="gross profit / total revenue"),
    _m("operating_margin", "Operating margin",
       [r"operating\s+(?:profit\s+|income\s+)?margins?(?:\s+(?:percentage|rate|ratio))?"],
       derive=("div", "operating_income", "revenue"), kind="percent", formula="operating income / total revenue"),
    _m("net_margin", "Net profit margin",
       [r"net\s+(?:profit\s+|income\s+)?margins?", r"profit\s+margins?"],
       derive=("div", "net_income", "revenue"), kind="percent", formula="net income / total revenue"),
    _m("fcf_margin", "Free cash flow margin", [r"free\s+cash\s+flow\s+margins?", r"fcf\s+margins?"],
       derive=("div", "free_cash_flow", "revenue"), kind="percent", formula="free cash flow / total revenue"),
    _m("current_ratio", "Current ratio", [r"current\s+ratio"],
       derive=("div", "current_assets", "current_liabilities"), kind="ratio",
       formula="total current assets / total current liabilities"),
    _m("debt_to_equity", "Debt-to-equity (total liabilities / equity)",
       [r"debt[\s-]to[\s-]equity(?:\s+ratio)?", r"liabilities[\s-]to[\s-]equity(?:\s+ratio)?"],
       derive=("div", "total_liabilities", "equity"), kind="ratio",
       formula="total liabilities / stockholders' equity"),
    _m("roe", "Return on equity (year-end equity)",
       [r"return\s+on\s+(?:(?:stock|share)holders'?\s+)?equity", r"roe"],
       derive=("div", "net_income", "equity"), kind="percent", formula="net income / year-end stockholders' equity"),
    _m("roa", "Return on assets (year-end assets)", [r"return\s+on\s+(?:total\s+)?assets", r"roa"],
       derive=("div", "net_income", "total_assets"), kind="percent", formula="net income / year-end total assets"),
]
METRIC_BY_KEY = {m.key: m for m in METRICS}
# Fallback concepts whose meaning differs from the metric's label enough to say which was used.
NOTE_CONCEPTS = {
    _G + "ProfitLoss", _G + "NetIncomeLossAvailableToCommonStockholdersBasic", _G + "RevenuesNetOfInterestExpense",
    _G + "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest",
    _G + "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents", _G + "LongTermDebt",
    _G + "LongTermDebtAndCapitalLeaseObligations", _G + "LongTermDebtAndCapitalLeaseObligationsIncludingCurrentMaturities",
    _G + "EarningsPerShareBasicAndDiluted", _G + "ContractWithCustomerLiabilityCurrent", _G + "DeferredRevenueCurrent",
    _G + "CommonStockSharesOutstanding", _G + "PaymentsToAcquireProductiveAssets",
    _G + "CostOfGoodsAndServiceExcludingDepreciationDepletionAndAmortization",
}
_COMPILED = [
    (m, re.compile(r"(?<![\w&-])(?:" + p + r")(?![\w&-])")) for m in METRICS for p in m.phrases
]


def is_metric_phrase(text: str) -> bool:
    """Is the whole text one of the metric phrases ('EBITDA' is not, 'COGS', 'ROE' and 'SG&A' are)."""
    low = _norm(text).strip()
    return any(rx.fullmatch(low) for _, rx in _COMPILED)


def metric(key: str) -> Metric:
    return METRIC_BY_KEY[key]


# ==============================================================================================================
# Reading one filing's facts


@dataclass
class FactGroup:
    """Every occurrence of one fact (concept, period, dimensions, unit) in a filing."""

    concept: str
    period_start: str | None
    period_end: str | None
    dims: dict
    unit: str
    rows: list[FactRow]
    best: FactRow  # the most precise occurrence, preferring the financial statements for the citation
    conflict: bool  # occurrences that disagree beyond their stated precision

    @property
    def instant(self) -> bool:
        return self.period_start in (None, "")

    @property
    def value(self) -> float:
        return self.best.value

    @classmethod
    def build(cls, rows: list[FactRow]) -> "FactGroup":
        ordered = sorted(rows, key=lambda r: (-_precision(r.decimals), _cite_rank(r),
                                              r.char_start if r.char_start >= 0 else 1 << 40))
        best = ordered[0]
        conflict = any(
            abs(r.value - best.value) > _tolerance(r.decimals) + _tolerance(best.decimals) + 1e-9 * abs(best.value)
            for r in rows
        )
        return cls(best.concept, best.period_start, best.period_end, best.dimensions, best.unit, rows, best, conflict)


def _cite_rank(r: FactRow) -> int:
    if r.char_start < 0 or not r.chunk_id:
        return 3
    return {"Item 8": 0, "Item 7": 1}.get(r.section or "", 2)


class FilingView:
    """One filing's facts grouped for selection, and the fiscal year-ends it reports (its own first)."""

    def __init__(self, filing: dict, rows: list[FactRow]):
        self.filing = filing
        groups: dict[tuple, list[FactRow]] = defaultdict(list)
        for r in rows:
            if r.value is None or not math.isfinite(r.value):
                continue
            groups[(r.concept, r.period_start, r.period_end, json.dumps(r.dimensions, sort_keys=True), r.unit)].append(r)
        self.groups = [FactGroup.build(v) for v in groups.values()]
        self.by_concept: dict[str, list[FactGroup]] = defaultdict(list)
        for g in self.groups:
            self.by_concept[g.concept].append(g)
        self.year_ends = self._year_ends()

    @property
    def doc_id(self) -> str:
        return self.filing["doc_id"]

    @property
    def fiscal_year(self) -> int | None:
        return self.filing.get("fiscal_year")

    @property
    def annual(self) -> bool:
        return (self.filing.get("form") or "").upper() in ANNUAL_FORMS

    def _year_ends(self) -> list[str]:
        ends: Counter = Counter()
        for g in self.groups:
            if g.dims or g.instant:
                continue
            d = _days(g.period_start, g.period_end)
            if d is not None and ANNUAL_DAYS[0] <= d <= ANNUAL_DAYS[1]:
                ends[g.period_end] += 1
        pe = self.filing.get("period_end")
        if not ends:
            return [pe] if pe else []
        if pe in ends:
            current = pe
        else:
            near = [e for e in ends if pe and abs(_days(e, pe) or 999) <= 7]
            if near:
                current = max(near, key=lambda e: ends[e])
            else:
                top = ends.most_common(1)[0][1]
                current = max(e for e, c in ends.items() if c >= max(2, top // 4))
        out = [current]
        for e in sorted(ends, reverse=True):
            if e >= out[-1]:
                continue
            gap = _days(e, out[-1]) or 0
            if ANNUAL_DAYS[0] - 5 <= gap <= ANNUAL_DAYS[1] + 5:
                out.append(e)
        return out

    def find(self, concept: str, k: int, period: str, member=None) -> FactGroup | str | None:
        """The consolidated (or member) fact of `concept` for the fiscal year k years before this filing's own.
        Returns the group, "conflict" when the candidates disagree, or None."""
        if period == "cover":
            return self._cover(concept) if k == 0 else None
        if k >= len(self.year_ends):
            return None
        end = self.year_ends[k]
        cands = []
        for g in self.by_concept.get(concept, ()):
            if g.period_end != end:
                continue
            if period == "instant" and not g.instant:
                continue
            if period == "duration":
                d = _days(g.period_start, g.period_end)
                if g.instant or d is None or not ANNUAL_DAYS[0] <= d <= ANNUAL_DAYS[1]:
                    continue
            if member is None:
                if g.dims:
                    continue
            elif len(g.dims) != 1 or not member(g.dims):
                continue
            cands.append(g)
        return _pick(cands)

    def _cover(self, concept: str) -> FactGroup | str | None:
        cands = [g for g in self.by_concept.get(concept, ()) if not g.dims]
        if not cands:
            return None
        latest = max(g.period_end or "" for g in cands)
        return _pick([g for g in cands if (g.period_end or "") == latest])

    def cover_classes(self, concept: str) -> list[FactGroup]:
        """Cover-page values per share class (GOOGL reports A, B and C and no total)."""
        cands = [g for g in self.by_concept.get(concept, ())
                 if len(g.dims) == 1 and "ClassOfStock" in next(iter(g.dims))]
        if not cands:
            return []
        latest = max(g.period_end or "" for g in cands)
        return [g for g in cands if (g.period_end or "") == latest]

    def extension(self, pattern: str, k: int, period: str) -> FactGroup | str | None:
        rx = re.compile(pattern)
        hits = []
        for concept in self.by_concept:
            prefix, _, local = concept.partition(":")
            if prefix in ("us-gaap", "dei", "srt", "ifrs-full") or not rx.search(local):
                continue
            found = self.find(concept, k, period)
            if found is not None:
                hits.append(found)
        if any(h == "conflict" for h in hits) or len({h.value for h in hits if not isinstance(h, str)}) > 1:
            return "conflict"
        return hits[0] if hits else None


def _label_score(m: Metric, g: FactGroup) -> int:
    """2: a row of the filing is labelled as the metric ('Research and development'); 1: a row label starts so;
    0: no row says so ('Charges for acquired in-process research and development'); -1: nothing to judge by."""
    labels = [r.row_label for r in g.rows if r.row_label]
    if not labels:
        return -1
    best = 0
    for label in labels:
        text = re.sub(r"\s+", " ", _norm(label)).strip(" :,")
        text = re.sub(r"\s*\(\d\)$", "", text)  # a footnote mark: 'Depreciation and amortization (1)'
        for mm, rx in _COMPILED:
            if mm is not m:
                continue
            if rx.fullmatch(text) or rx.fullmatch(re.sub(r"\s*\(.*?\)\s*", " ", text).strip()):
                best = max(best, 2)
            elif rx.match(text):
                best = max(best, 1)
    return best


def _by_label(m: Metric, candidates: list[FactGroup]) -> FactGroup:
    """The first concept in priority order, unless a filing tags it on a row that is not the metric (JNJ tags
    'Charges for acquired in-process research and development' as ResearchAndDevelopmentExpense) or only in
    prose, while another candidate sits on a row labelled exactly as the metric ('Research and development
    expense') with a figure at least 1.5 times apart."""
    first = candidates[0]
    if _label_score(m, first) > 0:
        return first
    for g in candidates[1:]:
        a, b = abs(first.value), abs(g.value)
        if min(a, b) == 0 or max(a, b) / min(a, b) < 1.5:
            continue
        if _label_score(m, g) == 2:
            return g
    return first


def _primary_statement(chosen: FactGroup, candidates: list[FactGroup]) -> FactGroup:
    """Of the concepts that report the same figure, the one printed first in the statements: Tesla tags 'Total
    revenues' on its income statement as RevenueFromContractWithCustomer... and as Revenues only in a note, and
    the statement is the source an analyst checks."""
    same = [g for g in candidates
            if abs(g.value - chosen.value) <= _tolerance(g.best.decimals) + _tolerance(chosen.best.decimals)
            + 1e-9 * abs(chosen.value)]

    def place(g: FactGroup) -> tuple:
        r = g.best
        return _cite_rank(r), r.char_start if r.char_start >= 0 else 1 << 40

    return min(same, key=place) if same else chosen


def _pick(cands: list[FactGroup]) -> FactGroup | str | None:
    if not cands:
        return None
    if any(g.conflict for g in cands):
        return "conflict"
    if len(cands) > 1:
        cands = sorted(cands, key=lambda g: abs((_days(g.period_start, g.period_end) or 365) - 365))
        first = cands[0]
        for g in cands[1:]:
            if abs(g.value - first.value) > _tolerance(g.best.decimals) + _tolerance(first.best.decimals) + 1e-9 * abs(first.value):
                return "conflict"
    return cands[0]


# ==============================================================================================================
# Values: a reported fact or a figure computed from them


@dataclass
class Value:
    metric: Metric
    amount: float
    kind: str  # money / per_share / shares / pure / percent / ratio
    ticker: str
    company: str
    fiscal_year: int
    filing: dict  # the filing the figure was read from
    comparative: bool = False  # read from a later filing's prior-year column
    group: FactGroup | None = None  # reported figures
    inputs: list["Value"] = field(default_factory=list)  # computed figures
    op: str | None = None  # sub / add / div
    member: str | None = None  # the dimension member that narrowed it (label)
    member_axis: str | None = None
    scale: int = 6
    places: int = 0
    unit: str = "usd"

    @property
    def reported(self) -> bool:
        return self.group is not None

    @property
    def fact(self) -> FactRow | None:
        return self.group.best if self.group else None

    @property
    def label(self) -> str:
        return f"{self.metric.label} — {self.member}" if self.member else self.metric.label

    @property
    def period_end(self) -> str | None:
        if self.group:
            return self.group.period_end
        ends = [v.period_end for v in self.inputs if v.period_end]
        return max(ends) if ends else None

    @property
    def period_start(self) -> str | None:
        if self.group:
            return self.group.period_start
        starts = [v.period_start for v in self.inputs if v.period_start]
        return min(starts) if starts else None

    def display(self) -> str:
        places = 2 if self.kind in ("percent", "ratio") else self.places
        text = format_amount(self.amount, self.kind, scale=self.scale, places=places, unit=self.unit)
        if self.kind == "money" and self.scale == 3 and abs(self.amount) >= 1e8:
            text += f" ({format_amount(self.amount, 'money', scale=6, places=1, unit=self.unit)})"
        return text

    def who(self) -> str:
        return f"{self.company} ({self.ticker})" if self.company else self.ticker

    def when(self) -> str:
        """'FY2024 (fiscal year ended September 28, 2024)' or '... (as of September 28, 2024)'."""
        end = self.period_end
        leaves = self.reported_leaves()
        if end and leaves and all(v.group.concept.startswith("dei:") for v in leaves):
            return f"FY{self.fiscal_year} 10-K cover page (as of {_nice_date(end)})"
        if not end:
            return f"FY{self.fiscal_year}"
        if self.metric.period in ("instant", "cover") or (self.group and self.group.instant):
            return f"FY{self.fiscal_year} (as of {_nice_date(end)})"
        return f"FY{self.fiscal_year} (fiscal year ended {_nice_date(end)})"

    def reported_leaves(self) -> list["Value"]:
        if self.reported:
            return [self]
        out = []
        for v in self.inputs:
            out.extend(v.reported_leaves())
        return out

    def to_dict(self) -> dict:
        f = self.fact
        return {
            "metric": self.metric.key, "label": self.label, "ticker": self.ticker, "company": self.company,
            "fiscal_year": self.fiscal_year, "value": self.amount, "display": self.display(), "kind": self.kind,
            "concept": f.concept if f else None, "period_start": self.period_start, "period_end": self.period_end,
            "dimensions": f.dimensions if f else {}, "doc_id": self.filing.get("doc_id"),
            "form": self.filing.get("form"), "filing_fiscal_year": self.filing.get("fiscal_year"),
            "comparative": self.comparative, "chunk_id": f.chunk_id if f else None,
            "section": f.section if f else None, "page": f.page if f else None,
            "formula": None if self.reported else self.metric.formula or _OP_WORD.get(self.op or "", ""),
        }


_OP_SIGN = {"sub": "−", "add": "+", "div": "/"}
_OP_WORD = {"sub": "difference", "add": "sum", "div": "ratio"}


def _combine(metric_: Metric, op: str, a: Value, b: Value) -> Value | None:
    if op in ("sub", "add"):
        if a.kind != b.kind or (a.kind == "money" and currency_of(a.unit) != currency_of(b.unit)):
            return None
        amount = a.amount - b.amount if op == "sub" else a.amount + b.amount
        kind = a.kind
    else:
        if b.amount == 0 or (a.kind == "money" and b.kind == "money" and currency_of(a.unit) != currency_of(b.unit)):
            return None
        amount = a.amount / b.amount
        kind = "percent" if metric_.kind in ("percent", "pure") else "ratio"
    return Value(
        metric=metric_, amount=amount, kind=kind, ticker=a.ticker, company=a.company, fiscal_year=a.fiscal_year,
        filing=a.filing, comparative=a.comparative or b.comparative, inputs=[a, b], op=op,
        scale=min(a.scale, b.scale), places=max(a.places, b.places) if a.scale == b.scale else max(a.places, b.places, 3),
        unit=a.unit,
    )


def _money_text(amount: float, kind: str, scale: int, places: int, unit: str) -> str:
    return format_amount(amount, kind, scale=scale, places=places, unit=unit)


# ==============================================================================================================
# Understanding the question

_STOP = set("""
a an the its it their his her our your my this that these those of in for to from by on at as with and or vs versus
what was were is are be been being how much many did does do which who whose whom when where had has have
more less higher lower greater larger bigger smaller than compare compared comparing comparison between
total net consolidated annual annualized reported report reports reporting gaap overall full whole year years yearly
fiscal fy company company's companies firm firms corporation business each both all respective respectively same
latest most recent last prior previous current this ended ending end period periods
generate generated generating earn earned record recorded post posted book booked deliver delivered achieve
achieved make made bring brought show shows showed give tell list me us please approximately about roughly exactly
exact amount amounts value values level levels figure figures number numbers combined sum cumulative aggregate
growth grow grew change changed changes increase increased decrease decreased decline declined difference
percentage percent share ratio margin proportion yoy rate
year-over-year over across during through since until up down so also just only then there here
attributable available common basic diluted reported stated disclosed statement statements income-statement
million millions billion billions thousand thousands usd dollars dollar
fiscal-year report-period filing filings 10-k 10-q form annual-report
came come comes coming totaled totalled totaling amounted reached stood derived generate rise rose fall fell
""".split())
# Words that never narrow a metric, even capitalised ("Total Revenue").
_CORE_STOP = set("""
a an the its their of in for to from by on at as with and or what was were is are how much many did does do which
total net consolidated annual reported gaap overall full year fiscal fy company company's
""".split())
_MONTH_WORDS = set("january february march april may june july august september october november december".split())
_PREPS = {"from", "in", "by", "of", "for", "within", "at", "on"}
# After "revenue in/from/by ...": only these words (and companies, years, dates) leave the metric unqualified.
_AFTER_OK = set("""
the its their our his her fiscal year years fy calendar latest most recent last prior previous current ended ending
end period both each and or to compared vs versus respectively company company's companies whole full entire
reported total a an this that same as per share
""".split())
_EXCLUDE = {"excluding", "excl", "except", "ex", "without"}
_WORD_RX = re.compile(r"[a-z0-9][a-z0-9&'’.-]*[a-z0-9&]|[a-z0-9]")

_NARRATIVE = re.compile(
    r"\b(?:why|explain\w*|describ\w*|discuss\w*|polic(?:y|ies)|recogni[sz]\w*|risks?|drivers?|drove|driven|"
    r"reasons?|strateg\w*|how\s+does|how\s+do|what\s+factors|factors?|impact\w*|affect\w*|guidance|outlook|"
    r"forecast\w*|project(?:ed|ion|ions)|expect\w*|anticipat\w*|segments?|geograph\w*|regions?|regional|breakdown|"
    r"broken\s+down|quarter\w*|q[1-4]|three\s+months|six\s+months|nine\s+months|non-gaap|adjusted|pro\s+forma|"
    r"covenants?|maturit\w*|interest\s+rates?|fair\s+value|accounting\s+for|defin\w+|methodolog\w*|"
    r"employees?|headcount|customers?)\b"
)
_GROWTH = re.compile(
    r"\b(?:grow|grew|growth|grown|increase[sd]?|decrease[sd]?|decline[sd]?|declining|change[sd]?|rise|rose|risen|"
    r"fell|fall|fallen|drop(?:ped)?|jump(?:ed)?|yoy|year[\s-]over[\s-]year)\b"
)
_PCT_OF = re.compile(
    r"\b(?:percent(?:age)?|share|proportion|portion|fraction)\s+of\b|%\s+of\b|"
    r"\bas\s+an?\s+(?:percent(?:age)?|share|proportion|fraction)\s+of\b"
)
_LATEST = re.compile(
    r"\b(?:latest|most\s+recent|last|current)\s+(?:full\s+)?(?:fiscal\s+)?(?:year|annual|10-?k|filing|report|fy)\b"
)
_RATIO_OF = re.compile(r"\bratio\s+(?:of|between)\b")
_DIFF_OF = re.compile(r"\bdifference\s+between\b")
_COMPARE_CUES = re.compile(r"\b(?:from|compared|versus|vs\.?|prior|previous|preceding|last\s+year|a\s+year\s+earlier)\b")
_SUM = re.compile(r"\b(?:combined|sum|cumulative|aggregate|altogether|in\s+total|together|add(?:ed)?\s+up)\b")
_TOTAL_OVER = re.compile(r"\btotal\b.*\b(?:over|across)\b")
_FROM_TO = re.compile(
    r"\bfrom\s+(?:fiscal\s+(?:year\s+)?|fy\s*)?'?(\d{2,4})\b.{0,40}?\bto\s+(?:fiscal\s+(?:year\s+)?|fy\s*)?'?(\d{2,4})\b"
)
_YEAR_RX = re.compile(r"\b(?:fy|fiscal(?:\s+year)?)\s*'?(\d{2}|\d{4})\b|\b((?:19|20)\d{2})\b")
_DATE_RX = re.compile(r"\b(" + "|".join(_MONTH_WORDS) + r")\s+(\d{1,2}),?\s+((?:19|20)\d{2})\b")


def _norm(text: str) -> str:
    return (text or "").replace("’", "'").replace("‘", "'").replace("–", "-").replace("—", "-").lower()


def _plain(word: str) -> str:
    w = word.strip(".'").removesuffix("'s").removesuffix("'")
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


@dataclass
class Mention:
    metric: Metric
    start: int
    end: int
    words: list[str]  # the metric phrase's words
    before: list[str] = field(default_factory=list)  # content words just before it (a qualifier)
    after: list[str] = field(default_factory=list)  # content words after "from/in/by ..." (a qualifier)
    excluded: list[str] = field(default_factory=list)  # words after "excluding"

    @property
    def qualified(self) -> bool:
        return bool(self.before or self.after)

    def spec(self) -> tuple:
        return (self.metric.key, tuple(self.before), tuple(self.after))


def find_mentions(question: str, company_words: set[str] = frozenset()) -> list[Mention]:
    """Metric phrases in the question, longest first without overlaps, with the words that qualify them."""
    low = _norm(question)
    cands = []
    for m, rx in _COMPILED:
        for hit in rx.finditer(low):
            cands.append((hit.start(), hit.end(), m))
    cands.sort(key=lambda c: (-(c[1] - c[0]), c[0]))
    chosen: list[tuple[int, int, Metric]] = []
    for s, e, m in cands:
        if any(s < ce and cs < e for cs, ce, _ in chosen):
            continue
        chosen.append((s, e, m))
    chosen.sort()
    tokens = [(t.start(), t.end(), t.group()) for t in _WORD_RX.finditer(low)]
    spans = [(s, e) for s, e, _ in chosen]

    def inside_mention(pos: int) -> bool:
        return any(s <= pos < e for s, e in spans)

    def is_stop(word: str) -> bool:
        w = word.strip(".'")
        base = w.removesuffix("'s").removesuffix("'")
        return (
            base in _STOP or w in _STOP or base in company_words or base in _MONTH_WORDS
            or bool(re.fullmatch(r"[\d.,$%'-]+|fy\d+|q\d|\d+(?:st|nd|rd|th)", base))
        )

    out = []
    for s, e, m in chosen:
        words = [t[2] for t in tokens if s <= t[0] < e]
        mention = Mention(m, s, e, words)
        prev = [t for t in tokens if t[1] <= s]
        for ts, te, w in reversed(prev):
            proper = question[ts:ts + 1].isupper() and mention.before and question[prev[-1][0]:prev[-1][0] + 1].isupper()
            if inside_mention(ts) or len(mention.before) >= 3:
                break
            if is_stop(w) and not (proper and w in _STOP and w not in _CORE_STOP):
                break
            if w.endswith(("'s", "s'")):
                break  # "Apple's revenue": a possessive before the metric names its owner, not a qualifier
            if low[te:s].strip(" -") and any(ch in low[te:s] for ch in ",;:()?"):
                break
            mention.before.insert(0, _plain(w))
        nxt = [t for t in tokens if t[0] >= e]
        if nxt:
            gap = low[e:nxt[0][0]]
            first = nxt[0][2]
            if first in _EXCLUDE or first.startswith("exclud"):
                for ts, _te, w in nxt[1:4]:
                    if is_stop(w) or inside_mention(ts):
                        break
                    mention.excluded.append(_plain(w))
            elif first in _PREPS and not any(ch in gap for ch in ",;:?"):
                for ts, _te, w in nxt[1:5]:
                    base = w.strip(".'").removesuffix("'s").removesuffix("'")
                    if base in ("the", "its", "their", "our"):
                        continue
                    if inside_mention(ts) or base in _AFTER_OK or base in _PREPS or (is_stop(w) and base not in _STOP):
                        break
                    mention.after.append(_plain(w))
            elif first == "per" and m.kind != "per_share":
                mention.after.append("per")
            elif not any(ch in gap for ch in ",;:()?.") and not is_stop(first) and not inside_mention(nxt[0][0]):
                mention.after.append(_plain(first))
        out.append(mention)
    return out


_SHARE_FROM = re.compile(
    r"\b(?:came|come|comes|coming|generated|derived|was|were|is|are)?\s*(?:from|by|in)\s+(?:the\s+|its\s+)?"
    r"([a-z][\w&.'-]*(?:\s+[a-z][\w&.'-]*){0,4}?)\s*(?=\b(?:in|during|for|of)\b|[?.,;(]|$)"
)


def _share_part(question: str, low: str, whole: Mention, after: int, company_words: set[str]) -> Mention | None:
    """'What percentage of revenue came from Greater China?': the part, as the whole's metric narrowed by the
    words after 'from' (resolved later to a dimension member, or not at all)."""
    if not whole.metric.members:
        return None
    for m in _SHARE_FROM.finditer(low, max(after, whole.end)):
        found = _WORD_RX.findall(m.group(1))
        while found and found[0] in ("the", "its", "their", "our", "a", "an"):
            found = found[1:]
        words = [_plain(w) for w in found]
        if words and not all(w in _STOP or w in company_words or w in _MONTH_WORDS or w.isdigit() for w in found):
            return Mention(whole.metric, m.start(1), m.end(1), list(whole.words), after=words)
    return None


def _member_matcher(mention: Mention):
    """A predicate on a fact's dimensions: its single member's words equal a run of the question's words that
    covers every qualifier word. Returns (predicate, length of the matched run) pairs, longest first."""
    quals = mention.before + mention.after
    if not quals:
        return None
    phrase = [_plain(w) for w in mention.words]
    seq = mention.before + phrase if mention.before else phrase + mention.after
    if mention.before and mention.after:
        seq = mention.before + phrase + mention.after
    need = set(quals)
    windows = []
    for i in range(len(seq)):
        for j in range(i + 1, min(len(seq), i + 7) + 1):
            win = seq[i:j]
            if need <= set(win):
                windows.append("".join(win))
    excluded = set(mention.excluded)

    def words_of(dims: dict) -> list[str]:
        return [_plain(w) for w in member_words(next(iter(dims.values())))]

    def match(dims: dict) -> int:
        mw = words_of(dims)
        joined = "".join(mw)
        if not joined or (excluded & set(mw)):
            return 0
        return max((len(w) for w in windows if w == joined), default=0)

    return match


# Where each reported metric is printed: the primary statement an analyst turns to for it. A computed metric lives
# where its inputs do ("inventory turnover" needs the income statement and the balance sheet).
_STATEMENT_OF = {
    "income statement": (
        "revenue", "cost_of_revenue", "gross_profit", "operating_income", "operating_expenses", "costs_and_expenses",
        "net_income", "pretax_income", "income_tax", "eps_diluted", "eps_basic", "rnd", "sga", "sales_marketing",
        "gna", "interest_expense", "net_interest_income", "weighted_diluted", "weighted_basic"),
    "balance sheet": (
        "total_assets", "current_assets", "total_liabilities", "current_liabilities", "liabilities_and_equity",
        "equity", "cash", "inventory", "receivables", "payables", "goodwill", "ppe", "retained_earnings",
        "deferred_revenue", "long_term_debt", "ltd_current", "total_debt"),
    "cash flow statement": (
        "operating_cash_flow", "investing_cash_flow", "financing_cash_flow", "capex", "dividends_paid", "buybacks",
        "dna", "sbc"),
}
# Words that ask for prose about a figure rather than the figure ("what drove gross margin"). Narrower than
# _NARRATIVE, which also keeps the facts layer from answering segment, quarterly or adjusted figures: those still
# come from a statement's neighbourhood, and a question that defines its metric ("defined as") wants figures.
_PROSE_INTENT = re.compile(
    r"\b(?:why|explain\w*|describ\w*|discuss\w*|polic(?:y|ies)|risks?|drivers?|drove|driven|reasons?|strateg\w*|"
    r"what\s+factors|factors?|impact\w*|affect\w*|guidance|outlook|forecast\w*|expect\w*|anticipat\w*)\b"
)
_STATEMENTS_BY_METRIC = {key: name for name, keys in _STATEMENT_OF.items() for key in keys}


def metric_statements(metric_: Metric) -> list[str]:
    """The primary statements that print a metric, or its inputs when it is computed."""
    own = _STATEMENTS_BY_METRIC.get(metric_.key)
    if own:
        return [own]
    out: list[str] = []
    for op in (metric_.derive, metric_.fallback):
        for key in (op or ())[1:]:
            for name in metric_statements(METRIC_BY_KEY[key]):
                if name not in out:
                    out.append(name)
    return out


def statements_asked_for(question: str) -> list[str]:
    """The primary statements a question for reported figures needs ("Amazon's FY2017 days payable outstanding:
    accounts payable / COGS" -> balance sheet, income statement), in the order the question names the metrics.
    None for a question about prose (drivers, risks, policies), whose answer sits in MD&A or the notes."""
    low = _norm(question)
    if _PROSE_INTENT.search(low):
        return []
    out: list[str] = []
    for mention in find_mentions(question):
        veto = mention.metric.veto
        if veto and re.search(veto, low[mention.end:mention.end + 60]):
            continue
        for name in metric_statements(mention.metric):
            if name not in out:
                out.append(name)
    return out


def _company_words(filings: list[dict]) -> tuple[set[str], dict[str, str]]:
    from .retrieve import short_names

    words: set[str] = set()
    aliases: dict[str, str] = {}
    for f in filings:
        t = (f.get("ticker") or "").upper()
        if not t:
            continue
        aliases[t.lower()] = t
        words.add(t.lower())
        for name in short_names(f.get("company") or ""):
            aliases.setdefault(name, t)
            words.update(_WORD_RX.findall(name))
    return words, aliases


# ==============================================================================================================
# Answers


@dataclass
class FactAnswer:
    """Exact figures for a question: `block` is text whose lines cite [F1], [F2] ... = `citations` (answer.py's
    Citation, kind "fact"), for rag.answer's facts hook. `results` are the computed figures."""

    block: str
    citations: list
    values: list[Value]
    results: list[dict]
    notes: list[str]
    operation: str

    def to_dict(self) -> dict:
        return {"block": self.block, "operation": self.operation, "notes": self.notes, "results": self.results,
                "values": [v.to_dict() for v in self.values]}


class _Unresolved(Exception):
    pass


ChunkLookup = Callable[[str], "tuple[str, dict] | None"]


class FactsLayer:
    """Selection, question answering and answer checks over the fact store. `chunk_lookup(chunk_id)` returns the
    chunk's (text, metadata) from the live index; `live_doc_ids()` the doc ids of the live index (facts of other
    filings are ignored)."""

    def __init__(self, settings=None, *, store: FactStore | None = None, chunk_lookup: ChunkLookup | None = None,
                 live_doc_ids: Callable[[], Iterable[str]] | None = None):
        if store is None:
            if settings is None:
                from .config import get_settings

                settings = get_settings()
            store = FactStore.for_settings(settings)
        self.store = store
        self.chunk_lookup = chunk_lookup
        self.live_doc_ids = live_doc_ids
        self._views: dict[tuple, FilingView] = {}
        self._lock = threading.Lock()

    # ---- filings and views
    def filings(self, ticker: str | None = None) -> list[dict]:
        live = None
        if self.live_doc_ids is not None:
            try:
                live = list(self.live_doc_ids())
            except Exception:  # noqa: BLE001 - no index: use every stored filing
                live = None
        return self.store.filings(ticker=ticker, doc_ids=live)

    def annual_filings(self, ticker: str) -> dict[int, dict]:
        """FY -> the annual filing of that fiscal year (the one with most facts when there are several)."""
        out: dict[int, dict] = {}
        for f in self.filings(ticker):
            if (f.get("form") or "").upper() not in ANNUAL_FORMS or f.get("fiscal_year") is None:
                continue
            fy = int(f["fiscal_year"])
            if fy not in out or (f.get("fact_count") or 0) > (out[fy].get("fact_count") or 0):
                out[fy] = f
        return out

    def view(self, filing: dict) -> FilingView:
        key = (filing["doc_id"], filing.get("indexed_at"))
        with self._lock:
            hit = self._views.get(key)
        if hit is None:
            hit = FilingView(filing, self.store.facts(filing["doc_id"]))
            with self._lock:
                if len(self._views) > 64:
                    self._views.clear()
                self._views[key] = hit
        return hit

    def warm(self) -> int:
        """Build the views of the indexed filings ahead of the first question (~0.1 s each), as the index itself
        is loaded ahead; returns how many."""
        filings = self.filings()[:64]
        for f in filings:
            self.view(f)
        return len(filings)

    def locate(self, ticker: str, year: int) -> tuple[FilingView, int, bool] | None:
        """The filing to read FY `year` from: its own 10-K, else a later 10-K's comparative column."""
        annual = self.annual_filings(ticker)
        if year in annual:
            return self.view(annual[year]), 0, False
        for later in (year + 1, year + 2):
            if later in annual:
                v = self.view(annual[later])
                k = later - year
                if k < len(v.year_ends):
                    return v, k, True
        return None

    # ---- values
    def value(self, metric_: Metric | str, ticker: str, year: int, mention: Mention | None = None) -> Value | None:
        """The figure of a metric for one company and fiscal year (None when the facts cannot say)."""
        m = metric(metric_) if isinstance(metric_, str) else metric_
        try:
            return self._value(m, ticker.upper(), int(year), mention)
        except _Unresolved:
            return None

    def _value(self, m: Metric, ticker: str, year: int, mention: Mention | None) -> Value:
        if mention is not None and mention.qualified:
            if not m.members:
                raise _Unresolved(f"{m.label} cannot be narrowed to {' '.join(mention.before + mention.after)}")
            return self._member_value(m, ticker, year, mention)
        if m.derive:
            return self._derived(m, m.derive, ticker, year)
        where = self.locate(ticker, year)
        if where is None:
            raise _Unresolved(f"no FY{year} filing of {ticker}")
        view, k, comparative = where
        candidates: list[FactGroup] = []
        for concept in m.concepts:
            period = m.period
            if period == "cover" and not concept.startswith("dei:"):
                period = "instant"  # a balance-sheet count at the period end, not the cover date
            elif period == "cover" and comparative:
                continue
            found = view.find(concept, k, period)
            if found == "conflict":
                if not candidates:
                    raise _Unresolved(f"{concept} has disagreeing values")
                continue
            if found is not None:
                candidates.append(found)
                if period == "cover":
                    break
            elif period == "cover" and not candidates:
                total = self._cover_classes(m, view, concept, year)
                if total is not None:
                    return total
        if candidates:
            return self._reported(m, _primary_statement(_by_label(m, candidates), candidates), view, year, comparative)
        if m.ext:
            found = view.extension(m.ext, k, m.period)
            if found == "conflict":
                raise _Unresolved("extension concepts disagree")
            if found is not None:
                return self._reported(m, found, view, year, comparative)
        if m.fallback:
            return self._derived(m, m.fallback, ticker, year)
        raise _Unresolved(f"no {m.label} in the FY{year} data of {ticker}")

    def _cover_classes(self, m: Metric, view: FilingView, concept: str, year: int) -> Value | None:
        """A cover-page count given per share class only (GOOGL: A, B, C): their sum, each class cited."""
        classes = view.cover_classes(concept)
        if len(classes) < 2:
            return None
        parts = [self._reported(m, g, view, year, False, member=member_label(next(iter(g.dims.values()))))
                 for g in classes]
        total = parts[0]
        for p in parts[1:]:
            total = _combine(m, "add", total, p) if total is not None else None
        return total

    def _derived(self, m: Metric, spec: tuple, ticker: str, year: int) -> Value:
        op, a_key, b_key = spec
        a = self._value(metric(a_key), ticker, year, None)
        b = self._value(metric(b_key), ticker, year, None)
        out = _combine(m, op, a, b)
        if out is None:
            raise _Unresolved("inputs cannot be combined")
        return out

    def _member_value(self, m: Metric, ticker: str, year: int, mention: Mention) -> Value:
        where = self.locate(ticker, year)
        if where is None:
            raise _Unresolved(f"no FY{year} filing of {ticker}")
        view, k, comparative = where
        match = _member_matcher(mention)
        if match is None:
            raise _Unresolved("no qualifier")
        best_len, hits = 0, []
        for concept in m.concepts:
            for g in view.by_concept.get(concept, ()):
                if len(g.dims) != 1:
                    continue
                n = match(g.dims)
                if not n:
                    continue
                found = view.find(concept, k, m.period, member=lambda d, g=g: d == g.dims)
                if found is None or found == "conflict":
                    if found == "conflict":
                        raise _Unresolved("member values disagree")
                    continue
                if n > best_len:
                    best_len, hits = n, [(concept, found)]
                elif n == best_len and all(found is not h for _, h in hits):
                    hits.append((concept, found))
        if not hits:
            raise _Unresolved("no dimension member matches " + " ".join(mention.before + mention.after))
        # The same member on several concepts/axes must agree; the first concept in priority order is cited.
        first = hits[0][1]
        for _, g in hits[1:]:
            if abs(g.value - first.value) > _tolerance(g.best.decimals) + _tolerance(first.best.decimals) + 1e-9 * abs(first.value):
                raise _Unresolved("several members match with different values")
        member = next(iter(first.dims.values()))
        return self._reported(m, first, view, year, comparative, member=member_label(member),
                              axis=next(iter(first.dims)))

    def _reported(self, m: Metric, g: FactGroup, view: FilingView, year: int, comparative: bool,
                  member: str | None = None, axis: str | None = None) -> Value:
        f = g.best
        kind = unit_kind(f.unit)
        if m.kind in ("per_share", "shares", "pure") and kind != m.kind:
            kind = m.kind if kind == "other" else kind
        if kind not in ("money", "per_share", "shares", "pure"):
            raise _Unresolved(f"{f.concept} has unit {f.unit}")
        places = _places(f.text)
        scale = f.scale if kind == "money" else 0
        if kind == "money" and scale not in _SCALE_WORD and abs(f.value) >= 1e6:
            scale, places = 6, 0 if abs(f.value) % 1e6 == 0 else 3
        return Value(
            metric=m, amount=f.value, kind=kind, ticker=(view.filing.get("ticker") or "").upper(),
            company=view.filing.get("company") or "", fiscal_year=year, filing=view.filing, comparative=comparative,
            group=g, member=member, member_axis=axis, scale=scale, places=places, unit=f.unit,
        )

    # ---- questions
    def answer_for(self, question: str, tickers: Iterable[str] = (), years: Iterable[int] = (),
                   unknown_companies: Iterable[str] = ()) -> FactAnswer | None:
        """Exact figures for a question that asks for reported or computed metrics of named companies; None when
        the facts cannot answer it (the caller falls through to the retrieval answer)."""
        try:
            return self._answer_for(question, [t.upper() for t in tickers], [int(y) for y in years],
                                    list(unknown_companies))
        except _Unresolved as exc:
            log.debug("facts cannot answer %r: %s", question, exc)
            return None

    def _answer_for(self, question: str, tickers: list[str], years: list[int], unknown: list[str]) -> FactAnswer | None:
        low = _norm(question)
        if _NARRATIVE.search(low):
            return None
        all_filings = self.filings()
        words, aliases = _company_words(all_filings)
        # A name the question treats as a company that no indexed filing has: the question is about a company
        # the facts cannot speak for (names of indexed companies are ignored here).
        unknown = [u for u in unknown if _norm(u) not in aliases and not set(_WORD_RX.findall(_norm(u))) <= words]
        if unknown:
            return None
        mentions = find_mentions(question, words)
        if not mentions:
            return None
        inferred_note = None
        if not tickers:
            inferred = self._company_by_date(low, mentions, all_filings)
            if inferred is None:
                return None
            ticker, year, inferred_note = inferred
            tickers, years = [ticker], [year]
        for mt in mentions:
            if mt.metric.veto and re.search(mt.metric.veto, low[mt.end:mt.end + 60]):
                return None  # the words around it mean something else
        specs: list[Mention] = []
        for mt in mentions:
            if mt.spec() not in {s.spec() for s in specs}:
                specs.append(mt)
        if len(specs) > 3:
            return None
        notes: list[str] = [inferred_note] if inferred_note else []
        plan_years = self._years(low, tickers, years, all_filings, aliases, specs, notes)
        growth = bool(_GROWTH.search(low)) or (
            len(tickers) == 1 and len(set(years)) >= 2 and bool(re.search(r"\bcompared?\b|\bversus\b|\bvs\b", low)))
        pct = _PCT_OF.search(low)
        ratio = _RATIO_OF.search(low)
        diff = _DIFF_OF.search(low)
        summing = bool(_SUM.search(low)) or (bool(_TOTAL_OVER.search(low)) and
                                               max(len(v) for v in plan_years.values()) >= 2)
        if pct and len(specs) == 1 and not growth:
            part = _share_part(question, low, specs[0], pct.end(), words)
            if part is not None:
                specs = [part, specs[0]] if part.start < specs[0].start else [specs[0], part]
        if (pct or ratio) and len(specs) != 2 and not growth:
            return None  # a share or ratio of something the facts cannot name
        r = _Renderer(self)
        if len(specs) == 2 and (pct or ratio or (diff and len(tickers) == 1)):
            if pct:
                den = next((s for s in specs if s.start >= pct.end()), specs[-1])
                num = specs[0] if den is specs[1] else specs[1]
                r.two_metric(num, den, tickers, plan_years, "div_pct")
            elif ratio:
                r.two_metric(specs[0], specs[1], tickers, plan_years, "div")
            else:
                r.two_metric(specs[0], specs[1], tickers, plan_years, "sub")
        else:
            for spec in specs:
                if growth and not summing:
                    r.growth(spec, tickers, plan_years, _from_to(low))
                elif summing:
                    r.total(spec, tickers, plan_years)
                else:
                    r.lookup(spec, tickers, plan_years)
        if not r.values:
            return None
        if r.missing and not r.lines:
            return None
        return r.finish(notes)

    def _company_by_date(self, low: str, mentions: list[Mention], filings: list[dict]) -> tuple | None:
        """No company named, but the exact date of a cover-page figure ("shares outstanding as of October 18,
        2024"): the one indexed annual filing that reports the metric at that date, if exactly one does."""
        dates = [f"{m.group(3)}-{_month_index(m.group(1)) + 1:02d}-{int(m.group(2)):02d}" for m in _DATE_RX.finditer(low)]
        if not dates or len(mentions) != 1 or mentions[0].qualified or mentions[0].metric.period != "cover":
            return None  # only cover-page dates are particular to one filing; a year-end date is not
        m = mentions[0].metric
        by_doc = {f["doc_id"]: f for f in filings
                  if (f.get("form") or "").upper() in ANNUAL_FORMS and f.get("ticker") and f.get("fiscal_year")}
        hits = set()
        for doc_id in self.store.docs_with(m.concepts, dates):
            f = by_doc.get(doc_id)
            if f is not None:
                hits.add((f["ticker"].upper(), int(f["fiscal_year"]), f.get("company") or f["ticker"]))
        if len({h[0] for h in hits}) != 1 or len(hits) != 1:
            return None
        ticker, year, company = hits.pop()
        note = (f"No company was named: the only indexed 10-K that reports {_lc(m.label)} as of "
                f"{_nice_date(dates[0])} is {company}'s ({ticker}) FY{year} 10-K.")
        return ticker, year, note

    def _years(self, low: str, tickers: list[str], years: list[int], filings: list[dict], aliases: dict,
               specs: list[Mention], notes: list[str]) -> dict[str, list[int]]:
        growth = bool(_GROWTH.search(low))
        out: dict[str, list[int]] = {}
        pairs = _pair_years(low, tickers, years, filings, aliases) if years else None
        if pairs:
            return {t: [y] for t, y in pairs.items()}
        latest_named = bool(_LATEST.search(low))
        if not years or latest_named:
            latest = {}
            for t in tickers:
                fys = sorted(self.annual_filings(t))
                if not fys:
                    raise _Unresolved(f"no annual filing of {t}")
                latest[t] = fys[-1]
                out[t] = [fys[-1] - 1, fys[-1]] if growth else [fys[-1]]
            said = ", ".join(f"{t} FY{y}" for t, y in latest.items())
            if latest_named:
                notes.append(f"Latest indexed 10-K per company: {said}.")
            else:
                notes.append(f"No fiscal year was named: using the latest indexed 10-K ({said}).")
            if len(set(latest.values())) > 1:
                notes.append("The companies' latest fiscal years differ (and so may their fiscal year-ends).")
            return out
        for t in tickers:
            ys = sorted(set(years))
            if growth and len(ys) == 1:
                ys = [ys[0] - 1, ys[0]]
            out[t] = ys
        return out

    # ---- checking an answer
    def check_answer(self, text: str, question: str = "", tickers: Iterable[str] = (),
                     years: Iterable[int] = ()) -> list[str]:
        """Warnings for figures in an answer that contradict the XBRL fact for the metric, company and fiscal year
        the sentence talks about. Figures that equal some other fact of the company are left alone."""
        try:
            return self._check(text or "", list(tickers), [int(y) for y in years])
        except Exception:  # noqa: BLE001 - a check must never break an answer
            log.exception("fact check failed")
            return []

    def _check(self, text: str, tickers: list[str], years: list[int]) -> list[str]:
        filings = self.filings()
        if not filings or not text.strip():
            return []
        words, aliases = _company_words(filings)
        known = {(f.get("ticker") or "").upper() for f in filings}
        context_tickers = [t.upper() for t in tickers if t.upper() in known]
        warnings: list[str] = []
        done: set = set()
        for sentence in _sentences(text):
            low = _norm(sentence)
            mentions = [m for m in find_mentions(sentence, words) if not m.qualified]
            if not mentions:
                continue
            named = _tickers_in(low, aliases) or context_tickers
            if len(named) != 1:
                continue
            ticker = named[0]
            fys = sorted(self.annual_filings(ticker))
            ys = [y for y in _years_in(low, filings) if y in fys or y + 1 in fys]
            if not ys:
                ys = years if len(years) == 1 else ([fys[-1]] if not years and fys else [])
            if len(set(ys)) != 1:
                continue
            year = ys[0]
            numbers = _numbers(sentence)
            if not numbers:
                continue
            cues = bool(_GROWTH.search(low) or _COMPARE_CUES.search(low))
            # Each figure belongs to the metric named closest before it (or, failing that, right after it).
            owned: dict[int, list[tuple[dict, bool]]] = defaultdict(list)
            for n in numbers:
                before = [i for i, m in enumerate(mentions) if m.end <= n["start"]]
                if before:
                    i = before[-1]
                    gap = low[mentions[i].end:n["start"]]
                    gap = re.sub(r"\b(?:19|20)\d{2}\b", "", gap)
                    owned[i].append((n, len(gap) <= 30 and not re.search(r"\d", gap)))
                else:
                    owned[0].append((n, False))
            for i, nums in owned.items():
                mt = mentions[i]
                key = (mt.metric.key, ticker, year)
                if key in done:
                    continue
                v = self.value(mt.metric, ticker, year)
                if v is None:
                    continue
                problem = self._contradiction(v, nums, ticker, year, cues)
                if problem:
                    done.add(key)
                    where = (f" ({v.fact.concept}, {v.fact.period_text()})" if v.fact else f" (= {v.metric.formula})")
                    warnings.append(
                        f"Check this figure: the answer gives {_lc(v.label)} of {v.who()} for FY{year} as "
                        f"{problem}, but the filing's XBRL data says {v.display()}{where}."
                    )
        return warnings

    def _contradiction(self, v: Value, nums: list[tuple[dict, bool]], ticker: str, year: int,
                       cues: bool) -> str | None:
        """What is wrong with the figures a sentence gives for `v` (None when one states it correctly or none is
        about it)."""
        percent = v.kind in ("percent", "pure")
        expected = v.amount * (100 if percent else 1)
        precision = 0.01 if percent else min(
            (10 ** -_precision(leaf.fact.decimals) if _precision(leaf.fact.decimals) < 99 else 0.0)
            for leaf in v.reported_leaves()
        ) if v.reported_leaves() else 0.0
        suspects = []
        for n, direct in nums:
            if n["pct"] != percent:
                continue
            if v.kind == "per_share" and n["scale"] not in (None, 1):
                continue
            interps = n["candidates"] if v.kind == "money" else [(n["value"], n["unit"])]
            for c, u in interps:
                tol = 0.5 * u if u <= precision * 1.0001 else u
                if abs(c - expected) <= tol + 1e-9 * abs(expected):
                    return None  # the sentence states the right figure
            best = None
            for c, u in interps:
                if expected == 0 or c == 0 or (c > 0) != (expected > 0):
                    continue
                ratio = c / expected
                if 0.5 <= ratio <= 2.0 and (best is None or abs(ratio - 1) < abs(best[0] / expected - 1)):
                    best = (c, u)
            if best is not None:
                suspects.append((n, direct, best))
        for n, direct, (c, u) in suspects:
            other_year = None
            for y in (year - 1, year + 1):
                w = self.value(v.metric, ticker, y)
                if w is not None and abs(w.amount * (100 if percent else 1) - c) <= u:
                    other_year = y
                    break
            if other_year is not None:
                if cues:
                    continue  # "up from $X in 2023": the other year's figure, named as such
                return f"{n['raw']} (that is the FY{other_year} figure)"
            if not direct and any(abs(c - o) <= 0.5 * u for o in self._company_values(ticker)):
                continue  # another real figure of the company, not tied to this metric in the sentence
            return n["raw"]
        return None

    def _company_values(self, ticker: str) -> list[float]:
        vals = []
        for f in self.filings(ticker):
            for g in self.view(f).groups:
                vals.append(g.value)
                if unit_kind(g.unit) == "pure":
                    vals.append(g.value * 100)
        return vals

    # ---- tables (Financials page, CLI)
    def history(self, tickers: Iterable[str], metric_keys: Iterable[str]) -> list[dict]:
        """Long-format rows (company, metric, fiscal year, value, citation) over every fiscal year the indexed
        filings report, own years first and earlier years from comparatives (labelled)."""
        rows = []
        for t in [t.upper() for t in tickers]:
            annual = self.annual_filings(t)
            if not annual:
                continue
            years = set(annual)
            for fy in annual:
                v = self.view(annual[fy])
                years.update(fy - k for k in range(1, len(v.year_ends)))
            for key in metric_keys:
                m = metric(key)
                for year in sorted(years):
                    val = self.value(m, t, year)
                    if val is None:
                        continue
                    row = val.to_dict()
                    row["source"] = self._source_label(val)
                    row["inputs"] = [] if val.reported else [
                        {**leaf.to_dict(), "source": self._source_label(leaf)} for leaf in val.reported_leaves()
                    ]
                    rows.append(row)
        return rows

    def _source_label(self, v: Value) -> str:
        f = v.filing
        base = f"{f.get('form') or ''} FY{f.get('fiscal_year')}"
        if v.comparative:
            base += " (prior-year comparative)"
        if not v.reported:
            return base + " · computed"
        fact = v.fact
        if fact.section:
            base += f" · {fact.section}"
        if fact.page:
            base += f" p. {fact.page}"
        return base

    def chunk(self, chunk_id: str | None) -> tuple[str, dict] | None:
        if not chunk_id or self.chunk_lookup is None:
            return None
        try:
            return self.chunk_lookup(chunk_id)
        except Exception:  # noqa: BLE001
            return None


def _from_to(low: str) -> tuple[int, int] | None:
    m = _FROM_TO.search(low)
    if not m:
        return None

    def year(raw: str) -> int:
        return int(raw) + (2000 if len(raw) == 2 else 0)

    return year(m.group(1)), year(m.group(2))


def _years_in(low: str, filings: list[dict]) -> list[int]:
    """Fiscal years named in a text; a period-end date names the filing whose period ends then."""
    out = []
    for m in _DATE_RX.finditer(low):
        iso = f"{m.group(3)}-{_month_index(m.group(1)) + 1:02d}-{int(m.group(2)):02d}"
        hit = [f for f in filings if f.get("period_end") == iso and f.get("fiscal_year")]
        out.append(int(hit[0]["fiscal_year"]) if hit else int(m.group(3)))
    for m in _YEAR_RX.finditer(low):
        raw = m.group(1) or m.group(2)
        out.append(int(raw) + (2000 if len(raw) == 2 else 0))
    return out


def _month_index(name: str) -> int:
    return ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
            "november", "december"].index(name)


def _pair_years(low: str, tickers: list[str], years: list[int], filings: list[dict],
                aliases: dict) -> dict[str, int] | None:
    """'Adobe (fiscal 2024) or Salesforce (fiscal 2025)': each company with the year named right after it."""
    if len(tickers) < 2 or len(set(years)) != len(tickers):
        return None
    marks = []
    for name, t in aliases.items():
        if t not in tickers:
            continue
        for m in re.finditer(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", low):
            marks.append((m.start(), "c", t))
    months = "|".join(_MONTH_WORDS)
    for m in re.finditer(r"\b(?:" + months + r")\s+\d{1,2},?\s+(?:19|20)\d{2}\b|"
                         r"\b(?:fy|fiscal(?:\s+year)?)\s*'?(?:\d{2}|\d{4})\b|\b(?:19|20)\d{2}\b", low):
        ys = _years_in(m.group(), filings)
        if ys:
            marks.append((m.start(), "y", ys[0]))
    marks.sort()
    pairs: dict[str, int] = {}
    current = None
    for _, kind, val in marks:
        if kind == "c":
            current = val
        elif current is not None and current not in pairs:
            pairs[current] = val
    if set(pairs) == set(tickers) and set(pairs.values()) == set(years):
        return pairs
    return None


def _tickers_in(low: str, aliases: dict) -> list[str]:
    out = []
    for name, t in sorted(aliases.items(), key=lambda kv: -len(kv[0])):
        if len(name) <= 2:
            continue
        if re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", low) and t not in out:
            out.append(t)
    return out


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?;])\s+(?=[A-Z(\[$-])|\n+", text) if s.strip()]


_NUM_RX = re.compile(
    r"(?P<neg>-|−|\()?\s?(?P<cur>\$|usd\s?)?\s?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\)?"
    r"\s*(?P<suf>%|percent\b|trillion\b|billion\b|million\b|thousand\b|bn\b|mn\b|[bmk]\b)?",
    re.I,
)
_SUFFIX = {"trillion": 1e12, "billion": 1e9, "bn": 1e9, "b": 1e9, "million": 1e6, "mn": 1e6, "m": 1e6,
           "thousand": 1e3, "k": 1e3}


def _numbers(sentence: str) -> list[dict]:
    """Figures in a sentence with every plausible reading: (value, rounding unit) pairs."""
    out = []
    for m in _NUM_RX.finditer(sentence):
        raw = m.group(0).strip()
        digits = m.group("num")
        suf = (m.group("suf") or "").lower()
        if not m.group("cur") and not suf and re.fullmatch(r"(19|20)\d{2}", digits):
            continue  # a year
        if re.fullmatch(r"\d", digits) and not m.group("cur") and not suf:
            continue  # a citation number or a list index
        if sentence[max(0, m.start() - 1):m.start()] == "[":
            continue
        value = float(digits.replace(",", ""))
        places = len(digits.split(".")[1]) if "." in digits else 0
        step = 10.0 ** (-places)
        if m.group("neg"):
            value = -value
        pct = suf in ("%", "percent")
        if pct:
            out.append({"raw": raw, "value": value, "unit": step, "pct": True, "scale": None, "candidates": [],
                        "start": m.start()})
            continue
        if suf in _SUFFIX:
            f = _SUFFIX[suf]
            cands = [(value * f, step * f)]
            scale = f
        else:
            cands = [(value, step), (value * 1e6, step * 1e6), (value * 1e3, step * 1e3)]
            scale = None if m.group("cur") is None else 1
        out.append({"raw": raw, "value": value, "unit": step, "pct": False, "scale": scale, "candidates": cands,
                    "start": m.start()})
    return out


class _Renderer:
    """Builds the facts block: one line per figure or computation, every reported input cited [F#]."""

    def __init__(self, layer: FactsLayer):
        self.layer = layer
        self.lines: list[str] = []
        self.values: list[Value] = []
        self.results: list[dict] = []
        self.cited: list[Value] = []
        self._cite_ix: dict[tuple, int] = {}
        self.missing: list[str] = []
        self.notes: list[str] = []
        self.operation = "lookup"

    # ---- pieces
    def _get(self, spec: Mention, ticker: str, year: int) -> Value | None:
        try:
            v = self.layer._value(spec.metric, ticker, year, spec)
        except _Unresolved as exc:
            self.missing.append(f"{ticker} FY{year} {spec.metric.label}: {exc}")
            return None
        self.values.append(v)
        for leaf in [v] + v.reported_leaves():
            if leaf.comparative:
                gap = int(leaf.filing.get("fiscal_year") or 0) - int(leaf.fiscal_year)
                kind = "prior-year comparatives" if gap == 1 else f"comparatives ({gap} years back)"
                note = (f"No FY{leaf.fiscal_year} 10-K of {leaf.ticker} is indexed: its FY{leaf.fiscal_year} figures "
                        f"are the {kind} reported in the FY{leaf.filing.get('fiscal_year')} "
                        f"{leaf.filing.get('form') or '10-K'}.")
                if note not in self.notes:
                    self.notes.append(note)
        return v

    def ref(self, v: Value) -> str:
        g = v.group
        key = (v.filing.get("doc_id"), g.concept, g.period_start, g.period_end, json.dumps(g.dims, sort_keys=True))
        if key not in self._cite_ix:
            self.cited.append(v)
            self._cite_ix[key] = len(self.cited)
        return f"[F{self._cite_ix[key]}]"

    def expr(self, v: Value) -> str:
        """A figure with its citation, or a computed one as the arithmetic of its cited inputs."""
        if v.reported:
            return f"{v.member + ' ' if v.member and v.metric.period == 'cover' else ''}{v.display()} {self.ref(v)}"
        if v.op == "add":
            parts = _flatten_add(v)
            return "(" + " + ".join(self.expr(p) for p in parts) + ")" if len(parts) > 1 else self.expr(parts[0])
        a, b = v.inputs
        inner = f"{self.expr(a)} {_OP_SIGN[v.op]} {self.expr(b)}"
        return f"({inner})" if not (a.reported and b.reported) or v.op != "div" else inner

    def full(self, v: Value) -> str:
        if v.reported:
            note = ""
            f = v.fact
            if v.member:
                note = f" (XBRL {f.concept}, {dims_label(f.dimensions)})"
            elif (f.concept in NOTE_CONCEPTS and f.concept != v.metric.concepts[0]) or \
                    not f.concept.startswith(("us-gaap:", "dei:")):
                note = f" (reported as {f.concept}: {concept_label(f.concept)})"
            return f"{v.display()} {self.ref(v)}{note}"
        formula = v.metric.formula or ("sum of share classes" if v.op == "add" else "")
        inner = self.expr(v)
        if inner.startswith("(") and inner.endswith(")") and v.op != "div":
            inner = inner[1:-1]
        return f"{v.display()} = {formula} = {inner}" if formula else f"{v.display()} = {inner}"

    def _result(self, label: str, value: float, display: str, formula: str, inputs: list[Value], **extra) -> None:
        self.results.append({"label": label, "value": value, "display": display, "formula": formula,
                             "inputs": [i.to_dict() for i in inputs], **extra})

    # ---- operations
    def lookup(self, spec: Mention, tickers: list[str], plan_years: dict[str, list[int]]) -> None:
        per_ticker: dict[str, list[Value]] = {}
        for t in tickers:
            for y in plan_years.get(t, []):
                v = self._get(spec, t, y)
                if v is None:
                    continue
                per_ticker.setdefault(t, []).append(v)
                self.lines.append(f"- {v.who()} · {v.label} · {v.when()}: {self.full(v)}")
                if not v.reported:
                    self._result(f"{v.label}, {v.ticker} FY{v.fiscal_year}", v.amount, v.display(),
                                 v.metric.formula, v.reported_leaves())
        if len(per_ticker) >= 2:
            self.compare(spec, per_ticker)

    def compare(self, spec: Mention, per_ticker: dict[str, list[Value]]) -> None:
        self.operation = "compare"
        single = all(len(vs) == 1 for vs in per_ticker.values())
        groups: list[list[Value]] = []
        if single:
            groups.append([vs[0] for vs in per_ticker.values()])
        else:
            common = set.intersection(*({v.fiscal_year for v in vs} for vs in per_ticker.values()))
            for y in sorted(common):
                groups.append([v for vs in per_ticker.values() for v in vs if v.fiscal_year == y])
        for vals in groups:
            if len(vals) < 2 or len({(v.kind, currency_of(v.unit)) for v in vals}) != 1:
                continue
            ranked = sorted(vals, key=lambda v: v.amount, reverse=True)
            label = _lc(ranked[0].label)
            hi, lo = ranked[0], ranked[1]
            when = "" if single and len({v.fiscal_year for v in vals}) > 1 else f" in FY{hi.fiscal_year}"
            years = {v.ticker: f"FY{v.fiscal_year}" for v in vals}
            if hi.kind in ("percent", "pure"):
                pts = (hi.amount - lo.amount) * 100
                diff_text = f"{pts:.2f} percentage points"
                diff_val = pts
            else:
                d = _combine(hi.metric, "sub", hi, lo)
                diff_text = d.display() if d else format_amount(hi.amount - lo.amount, hi.kind)
                diff_val = hi.amount - lo.amount
            line = (f"- Comparison: {hi.who()} had the higher {label}{when}: {hi.display()} ({years[hi.ticker]}) vs "
                    f"{lo.display()} for {lo.who()} ({years[lo.ticker]}); difference {diff_text} "
                    f"= {hi.display()} − {lo.display()}")
            if hi.kind == "money" and lo.amount > 0:
                line += f" ({(hi.amount / lo.amount - 1) * 100:.2f}% higher)"
            if len(ranked) > 2:
                line += "; ranking: " + " > ".join(f"{v.ticker} {v.display()}" for v in ranked)
            self.lines.append(line + ".")
            self._result(f"Difference in {label}: {hi.ticker} − {lo.ticker}", diff_val, diff_text,
                         f"{hi.ticker} − {lo.ticker}", [hi, lo], larger=hi.ticker)

    def growth(self, spec: Mention, tickers: list[str], plan_years: dict[str, list[int]],
               from_to: tuple[int, int] | None) -> None:
        self.operation = "growth"
        rates: dict[str, float] = {}
        for t in tickers:
            ys = plan_years.get(t, [])
            if not ys:
                continue
            base, target = from_to if from_to and set(from_to) <= set(ys) | set(from_to) else (min(ys), max(ys))
            if base == target:
                base = target - 1
            a, b = self._get(spec, t, base), self._get(spec, t, target)
            if a is None or b is None:
                continue
            for y in sorted(set(ys) - {base, target}):
                mid = self._get(spec, t, y)
                if mid is not None:
                    self.lines.append(f"- {mid.who()} · {mid.label} · {mid.when()}: {self.full(mid)}")
            label = a.label
            if a.kind in ("percent", "pure"):
                pts = (b.amount - a.amount) * 100
                self.lines.append(
                    f"- {a.who()} · {label}: FY{base} {self.full(a)} → FY{target} {self.full(b)}; change "
                    f"{pts:+.2f} percentage points")
                self._result(f"Change in {_lc(label)}, {t} FY{base}→FY{target}", pts,
                             f"{pts:+.2f} percentage points", "later − earlier", [a, b])
                continue
            d = _combine(a.metric, "sub", b, a)
            if d is None:
                continue
            sign = "+" if d.amount > 0 else ""
            line = (f"- {a.who()} · {label}: FY{base} {self.full(a)} → FY{target} {self.full(b)}; "
                    f"change {sign}{d.display()}")
            if a.amount > 0:
                pct = (b.amount - a.amount) / a.amount * 100
                rates[t] = pct
                line += (f" ({pct:+.2f}%) = ({b.display()} − {a.display()}) / {a.display()}")
                self._result(f"Growth in {_lc(label)}, {t} FY{base}→FY{target}", pct, f"{pct:+.2f}%",
                             "(later − earlier) / earlier", [a, b], change=d.amount, change_display=d.display())
            else:
                line += f" = {b.display()} − {a.display()} (no percentage: the FY{base} figure is not positive)"
                self._result(f"Change in {_lc(label)}, {t} FY{base}→FY{target}", d.amount, d.display(),
                             "later − earlier", [a, b])
            self.lines.append(line)
        if len(rates) >= 2:
            ranked = sorted(rates.items(), key=lambda kv: kv[1], reverse=True)
            self.lines.append("- Comparison: " + " > ".join(f"{t} {r:+.2f}%" for t, r in ranked)
                              + f"; {ranked[0][0]} grew faster.")

    def total(self, spec: Mention, tickers: list[str], plan_years: dict[str, list[int]]) -> None:
        if spec.metric.period != "duration" or spec.metric.kind not in ("money", "shares"):
            self.lookup(spec, tickers, plan_years)
            return
        self.operation = "sum"
        for t in tickers:
            ys = sorted(plan_years.get(t, []))
            vals = [self._get(spec, t, y) for y in ys]
            if len(ys) < 2 or any(v is None for v in vals):
                continue
            total = vals[0]
            for v in vals[1:]:
                total = _combine(spec.metric, "add", total, v)
                if total is None:
                    break
            if total is None:
                continue
            years = " + ".join(f"FY{y}" for y in ys)
            self.lines.append(f"- {vals[0].who()} · {vals[0].label}, {years}: {total.display()} = "
                              + " + ".join(self.expr(v) for v in vals))
            self._result(f"{vals[0].label}, {t} {years}", total.amount, total.display(), "sum over fiscal years",
                         vals)

    def two_metric(self, num: Mention, den: Mention, tickers: list[str], plan_years: dict[str, list[int]],
                   mode: str) -> None:
        self.operation = {"div_pct": "percentage", "div": "ratio", "sub": "difference"}[mode]
        for t in tickers:
            for y in plan_years.get(t, []):
                a, b = self._get(num, t, y), self._get(den, t, y)
                if a is None or b is None:
                    continue
                if mode in ("div_pct", "div"):
                    if b.amount == 0 or a.kind != b.kind:
                        continue
                    r = a.amount / b.amount
                    if mode == "div_pct":
                        shown = f"{r * 100:.2f}%"
                        what = f"{a.label} as a percentage of {_lc(b.label)}"
                        val = r * 100
                    else:
                        shown = f"{r:.2f}"
                        what = f"Ratio of {_lc(a.label)} to {_lc(b.label)}"
                        val = r
                    self.lines.append(f"- {a.who()} · {a.when()}: {what} = {shown} = {self.full(a)} / {self.full(b)}")
                    self._result(f"{what}, {t} FY{y}", val, shown, f"{a.label} / {b.label}", [a, b])
                else:
                    d = _combine(a.metric, "sub", a, b)
                    if d is None:
                        continue
                    self.lines.append(f"- {a.who()} · {a.when()}: {a.label} − {_lc(b.label)} = {d.display()} "
                                      f"= {self.full(a)} − {self.full(b)}")
                    self._result(f"{a.label} − {b.label}, {t} FY{y}", d.amount, d.display(),
                                 f"{a.label} − {b.label}", [a, b])

    # ---- the block
    def finish(self, notes: list[str]) -> FactAnswer | None:
        if not self.lines:
            return None
        lines = list(self.lines)
        for note in notes + self.notes:
            lines.append(f"Note: {note}")
        if self.missing:
            lines.append("Not in the XBRL data: " + "; ".join(self.missing[:4]) + ".")
        citations = [self._citation(v, i + 1) for i, v in enumerate(self.cited)]
        return FactAnswer(block="\n".join(lines), citations=citations, values=self.values, results=self.results,
                          notes=notes + self.notes, operation=self.operation)

    def _citation(self, v: Value, number: int):
        from .answer import Citation

        f = v.fact
        filing = v.filing
        chunk = self.layer.chunk(f.chunk_id)
        text, meta = chunk if chunk else ("", {})
        dims = f" [{dims_label(f.dimensions)}]" if f.dimensions else ""
        xbrl = (f"XBRL fact: {f.concept} ({concept_label(f.concept)}){dims} = {f.text} "
                f"({'scale ' + str(f.scale) + ', ' if f.scale else ''}decimals {f.decimals}) -> {v.display()}, "
                f"{f.period_text()}; {filing.get('form') or ''} FY{filing.get('fiscal_year')}")
        return Citation(
            number=number, chunk_id=f.chunk_id, doc_id=filing.get("doc_id"), ticker=filing.get("ticker"),
            company=filing.get("company"), form=filing.get("form"), fiscal_year=filing.get("fiscal_year"),
            section=meta.get("section") or f.section, section_title=meta.get("section_title"),
            page_start=meta.get("page_start") or f.page, page_end=meta.get("page_end") or f.page, score=1.0,
            text=(text.strip() + "\n\n" + xbrl).strip() if text else xbrl,
            char_start=meta.get("char_start"), char_end=meta.get("char_end"),
            source=filing.get("source") or filing.get("path"), url=filing.get("url"), kind="fact",
        )


def _flatten_add(v: Value) -> list[Value]:
    if v.op != "add":
        return [v]
    out = []
    for i in v.inputs:
        out.extend(_flatten_add(i))
    return out


# ==============================================================================================================
# The engine's wrapper: check the finished answer against the facts


class CheckedStream:
    """Wraps an AnswerStream: yields its pieces, then (for a language-model answer) adds a warning for every
    figure that contradicts the XBRL fact of the metric and period it talks about. `.facts` is the FactAnswer
    that was given to the answer (None when the question was not answered from facts)."""

    def __init__(self, inner, layer: FactsLayer, question: str, tickers=(), years=(), facts: FactAnswer | None = None):
        self.inner = inner
        self.layer = layer
        self.question = question
        self.tickers = list(tickers)
        self.years = list(years)
        self.facts = facts
        self._checked = False

    def __iter__(self) -> Iterator[str]:
        yield from self.inner
        self.check()

    def check(self) -> None:
        res = getattr(self.inner, "result", None)
        if self._checked or res is None:
            return
        self._checked = True
        if res.refused or res.extractive or not (res.answer or "").strip():
            return
        for w in self.layer.check_answer(res.answer, self.question, self.tickers, self.years):
            if w not in res.warnings:
                res.warnings.append(w)

    @property
    def result(self):
        return self.inner.result

    def consume(self):
        for _ in self:
            pass
        return self.result

    def __getattr__(self, name):
        return getattr(self.inner, name)


# ==============================================================================================================
# The CLI: python -m rag facts TICKER [--fy 2024] [--concept Revenues]


def print_facts(ticker: str, settings, fiscal_year: int | None = None, concept: str | None = None, out=None) -> int:
    """Print a company's facts: per filing, the key figures of its own fiscal year and its consolidated facts, or
    every fact whose concept or label contains `concept`. Returns the exit code."""
    try:
        return _print_facts(ticker, settings, fiscal_year, concept, out or sys.stdout)
    except BrokenPipeError:  # `python -m rag facts AAPL | head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _print_facts(ticker: str, settings, fiscal_year: int | None, concept: str | None, out) -> int:
    store = FactStore.for_settings(settings)
    layer = FactsLayer(settings, store=store)
    ticker = (ticker or "").upper()
    filings = store.filings(ticker=ticker)
    if not filings:
        known = store.tickers()
        hint = (f" Companies with facts: {', '.join(known)}." if known else
                " No filing has facts yet: they are stored when filings are indexed "
                "(python -m rag index PATH; running it again on already indexed filings adds their facts).")
        print(f"No XBRL facts stored for {ticker}.{hint}", file=sys.stderr)
        return 1
    if fiscal_year is not None:
        chosen = [f for f in filings if f.get("fiscal_year") == int(fiscal_year)]
        if not chosen:
            years = ", ".join(f"FY{f.get('fiscal_year')}" for f in filings)
            print(f"No FY{fiscal_year} filing of {ticker} has facts; indexed: {years}.", file=sys.stderr)
            return 1
        filings = chosen
    pattern = (concept or "").strip().lower()
    shown = 0
    for f in filings:
        view = layer.view(f)
        own_end = view.year_ends[0] if view.year_ends else f.get("period_end")
        period = f"{f.get('period_start') or '?'} to {own_end or '?'}"
        print(f"\n{f.get('company') or ticker} ({ticker}) · {f.get('form')} FY{f.get('fiscal_year')} · fiscal period "
              f"{period} · doc {f['doc_id']} · {f.get('fact_count', 0)} facts", file=out)
        if not pattern:
            if view.annual and f.get("fiscal_year") is not None:
                print("\n  Key figures (consolidated, this filing's own fiscal year):", file=out)
                for m in METRICS:
                    if not m.listed:
                        continue
                    v = layer.value(m, ticker, int(f["fiscal_year"])) if layer.locate(ticker, int(f["fiscal_year"])) \
                        and layer.locate(ticker, int(f["fiscal_year"]))[0].doc_id == f["doc_id"] else None
                    if v is None:
                        continue
                    src = v.fact.concept if v.reported else f"computed: {v.metric.formula}"
                    print(f"  {m.label:<44} {v.display():>26}  {src}", file=out)
                    shown += 1
            groups = [g for g in view.groups if not g.dims and g.period_end == own_end]
            print(f"\n  Consolidated facts for the period ending {own_end} ({len(groups)}; --concept NAME lists every "
                  "fact of a concept, dimensions and prior years included):", file=out)
        else:
            groups = [g for g in view.groups
                      if pattern in g.concept.lower() or pattern in concept_label(g.concept).lower()]
            print(f"\n  Facts matching {concept!r}: {len(groups)}", file=out)
        groups.sort(key=lambda g: (g.concept, g.dims != {}, -(int((g.period_end or '0000')[:4])),
                                   g.period_end or "", json.dumps(g.dims, sort_keys=True)))
        for g in groups:
            r = g.best
            when = r.period_text()
            occurrences = f" ×{len(g.rows)}" if len(g.rows) > 1 else ""
            warn = "  (!) occurrences disagree" if g.conflict else ""
            print(f"  {g.concept:<60} {r.display():>26}  {when:<26} {concept_label(g.concept)}{occurrences}{warn}",
                  file=out)
            if g.dims:
                print(f"  {'':<60}   [{dims_label(g.dims)}]", file=out)
            shown += 1
        print(file=out)
    return 0 if shown else 1
