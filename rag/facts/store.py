"""The fact store: every inline XBRL fact of an indexed filing, written at index time, in SQLite or (team mode)
PostgreSQL through the same queries (rag.facts.tables); each fact keeps its period, dimensions, precision and the
chunk that shows it."""

from __future__ import annotations

import bisect
import json
import logging
import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..parse import parse_file
from .labels import ANNUAL_DAYS, concept_label, days_between, decimal_places, format_amount, nice_date, unit_kind
from .pdf_cover import PDF_COVER_SOURCE, cover_facts
from .pdf_tables import PDF_TABLE_SOURCE, table_facts
from .tables import DB_NAME, FACT_COLUMNS, FILING_COLUMNS, EmbeddedTables, ServedTables

log = logging.getLogger(__name__)


_PDF_PLACES = {PDF_TABLE_SOURCE: "statement table", PDF_COVER_SOURCE: "cover page"}  # Fact.source -> its place


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
    source: str = "xbrl"  # "xbrl", "pdf-table" (a PDF's statement table) or "pdf-cover" (a PDF's cover page)

    @property
    def from_pdf(self) -> bool:
        """Read from a PDF's printed page (a statement table or the cover), not from XBRL data."""
        return self.source in _PDF_PLACES

    def pdf_place(self) -> str:
        """Where on the PDF the figure was read, in words for the reader ("statement table", "cover page")."""
        return _PDF_PLACES.get(self.source, "")

    def provenance(self) -> str:
        """Where the figure was read, in words for the reader."""
        return f"read from the PDF's {self.pdf_place()}" if self.from_pdf else "XBRL fact"

    @classmethod
    def from_db(cls, row) -> "FactRow":
        d = dict(row)  # an sqlite3.Row or a served row, read by column name
        return cls(
            doc_id=d["doc_id"], concept=d["concept"], label=d["label"] or "", value=d["value"], text=d["text"] or "",
            unit=d["unit"] or "", context_id=d["context_id"] or "", period_start=d["period_start"],
            period_end=d["period_end"], instant=bool(d["instant"]), dimensions=json.loads(d["dimensions"] or "{}"),
            decimals=d["decimals"], scale=int(d["scale"] or 0), char_start=int(d["char_start"]),
            char_end=int(d["char_end"]), chunk_id=d["chunk_id"], section=d["section"], page=d["page"],
            row_label=d.get("row_label") or "", source=d.get("source") or "xbrl",
        )

    @property
    def days(self) -> int | None:
        return None if self.instant else days_between(self.period_start, self.period_end)

    @property
    def kind(self) -> str:
        return unit_kind(self.unit)

    def display(self) -> str:
        return format_amount(self.value, self.kind, scale=self.scale, places=decimal_places(self.text), unit=self.unit)

    def period_text(self) -> str:
        if self.instant or not self.period_start:
            return f"as of {nice_date(self.period_end)}"
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
    """Every filing's facts: in storage/facts.sqlite3, or with `database_url` in team mode's PostgreSQL (the same
    methods and results; rag.facts.tables holds what differs). Cheap to create."""

    def __init__(self, path: Path | None = None, *, database_url: str | None = None):
        if (path is None) == (database_url is None):
            raise ValueError("a fact store lives in a file (path) or a database (database_url), one of them")
        self.tables = ServedTables(database_url) if database_url else EmbeddedTables(Path(path))
        self.path = self.tables.path

    @classmethod
    def for_settings(cls, settings) -> "FactStore":
        if settings.served:
            return cls(database_url=settings.database_url)
        return cls(Path(settings.storage_dir) / DB_NAME)

    @property
    def served(self) -> bool:
        return self.tables.served

    def exists(self) -> bool:
        return self.tables.exists()

    def problem(self) -> str | None:
        """Why the store cannot be read now (FactStoreUnavailable's message), or None: one cheap read."""
        return self.tables.problem()

    # ---- writing
    def add_filing(self, meta: dict, facts: Iterable, chunks: list[dict] | None = None, text: str | None = None,
                   *, run: str | None = None, within=None) -> int:
        """Replace a filing's facts. `facts` are rag.parse.Fact objects; `chunks` are the index chunks' spans
        ({id, char_start, char_end, section, page_start}) used to cite each fact's chunk; `text` is the parsed
        filing text the facts' spans point into (for each figure's row label). With `run`, the rows are staged
        for that indexing run and nobody reads them until `publish_run(run)`. On the served store, `within` (a
        psycopg connection in the caller's open transaction) writes them in that transaction, so a filing's facts
        commit with its chunks. Returns the count."""
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
                _row_label(text, f.char_start) if text else None, getattr(f, "source", "xbrl") or "xbrl",
            ))
        filing = {k: meta.get(k) for k in FILING_COLUMNS}
        filing["doc_id"] = doc_id
        filing["ticker"] = (str(meta.get("ticker") or "").upper()) or None
        filing["form"] = (str(meta.get("form") or "").upper()) or None
        filing["fiscal_year"] = int(meta["fiscal_year"]) if meta.get("fiscal_year") not in (None, "") else None
        filing["period_start"] = meta.get("period_start") or _own_period_start(facts, meta.get("period_end"))
        filing["fact_count"] = len(rows)
        filing["indexed_at"] = time.strftime("%Y-%m-%dT%H:%M:%S")
        filing_row = tuple(filing[k] for k in FILING_COLUMNS)
        with self.tables.session(within) as con:
            if run is None:
                _replace_filing(self.tables, con, filing_row, rows)
            else:  # one writer at a time: a doc_id staged earlier is this run's own (the same filing twice)
                con.execute("DELETE FROM pending_facts WHERE doc_id = ?", (doc_id,))
                con.execute("DELETE FROM pending_filings WHERE doc_id = ?", (doc_id,))
                con.execute(f"INSERT INTO pending_filings (run, {', '.join(FILING_COLUMNS)}) "
                            f"VALUES (?, {', '.join('?' for _ in FILING_COLUMNS)})", (run, *filing_row))
                con.executemany(f"INSERT INTO pending_facts (run, {', '.join(FACT_COLUMNS)}) "
                                f"VALUES (?, {', '.join('?' for _ in FACT_COLUMNS)})", [(run, *r) for r in rows])
        return len(rows)

    def copy_filing(self, source: "FactStore", doc_id: str) -> int | None:
        """The filing's row and facts as `source` holds them, written here in place of any this store had (one
        transaction; the facts keep their order). Returns the count, or None when `source` has no such filing."""
        with source.tables.session() as con:
            filing = con.execute("SELECT * FROM filings WHERE doc_id = ?", (str(doc_id),)).fetchone()
            if filing is None:
                return None
            rows = [tuple(r[k] for k in FACT_COLUMNS) for r in con.execute(
                f"SELECT {', '.join(FACT_COLUMNS)} FROM facts WHERE doc_id = ? ORDER BY id", (str(doc_id),))]
        with self.tables.session() as con:
            _replace_filing(self.tables, con, tuple(filing[k] for k in FILING_COLUMNS), rows)
        return len(rows)

    def publish_run(self, run: str) -> int:
        """Make an indexing run's staged facts the filings' facts, in one transaction (each replaces what its
        filing had). Returns how many filings it published."""
        if not self.exists():
            return 0
        with self.tables.session() as con:
            return _publish_staged(con, run)

    def settle(self, published_run: str | None, live_filings: dict[str, dict] | None) -> dict:
        """Bring the facts in line with the live index after a writer was killed, in one transaction: the run
        that published `published_run` (the live generation) but died before moving its facts gets them moved;
        every other run's staged facts are dropped; with `live_filings` (the live manifest's doc_id -> record),
        filings the index does not hold, or holds with other bytes, lose their facts, and a correction the
        index published gets into the filing's row. Returns counts of what it did."""
        done = {"published": 0, "dropped": 0, "orphans": 0}
        if not self.exists():
            return done
        with self.tables.session() as con:
            if published_run:
                done["published"] = _publish_staged(con, published_run)
            done["dropped"] = con.execute("DELETE FROM pending_filings").rowcount
            con.execute("DELETE FROM pending_facts")
            if live_filings is None:
                return done
            stale = [r["doc_id"] for r in con.execute("SELECT doc_id, sha256 FROM filings")
                     if r["doc_id"] not in live_filings
                     or (r["sha256"] and live_filings[r["doc_id"]].get("sha256") not in (None, r["sha256"]))]
            for doc_id in stale:
                con.execute("DELETE FROM facts WHERE doc_id = ?", (doc_id,))
                con.execute("DELETE FROM filings WHERE doc_id = ?", (doc_id,))
            done["orphans"] = len(stale)
            for doc_id, record in live_filings.items():
                fields = _corrected_fields(record)
                if fields:
                    con.execute(f"UPDATE filings SET {', '.join(f'{k} = ?' for k in fields)} WHERE doc_id = ?",
                                (*fields.values(), doc_id))
        return done

    def remove(self, doc_ids: Iterable[str], *, within=None) -> int:
        """Delete the filings' rows and facts (on the served store, in the caller's transaction with `within`)."""
        ids = [str(d) for d in doc_ids]
        if not ids or not self.exists():
            return 0
        marks = ", ".join("?" for _ in ids)
        with self.tables.session(within) as con:
            for doc_id in sorted(ids):  # one order for every writer: two removals never wait for each other's locks
                self.tables.lock_filing(con, doc_id)
            con.execute(f"DELETE FROM facts WHERE doc_id IN ({marks})", ids)
            return con.execute(f"DELETE FROM filings WHERE doc_id IN ({marks})", ids).rowcount

    def update_filing(self, doc_id: str, fields: dict) -> bool:
        """Correct a filing's row (a user's fix of its company, ticker, form, fiscal year or period); its facts
        stay. Fields that are not filing columns are ignored. Returns whether the filing has a row."""
        values = {k: v for k, v in fields.items() if k in FILING_COLUMNS and k != "doc_id"}
        if not self.exists():
            return False
        with self.tables.session() as con:
            if not values:
                return con.execute("SELECT 1 FROM filings WHERE doc_id = ?", (str(doc_id),)).fetchone() is not None
            cur = con.execute(f"UPDATE filings SET {', '.join(f'{k} = ?' for k in values)} WHERE doc_id = ?",
                              (*values.values(), str(doc_id)))
            return cur.rowcount > 0

    # ---- reading
    def has(self, doc_id: str) -> bool:
        if not self.exists():
            return False
        with self.tables.session() as con:
            return con.execute("SELECT 1 FROM filings WHERE doc_id = ?", (str(doc_id),)).fetchone() is not None

    def filings(self, ticker: str | None = None, doc_ids: Iterable[str] | None = None) -> list[dict]:
        if not self.exists():
            return []
        sql, args = "SELECT * FROM filings", []
        if ticker:
            sql += " WHERE ticker = ?"
            args.append(ticker.upper())
        # NULLs placed as SQLite places them by default, so both backends list in one order.
        order = " ORDER BY ticker NULLS FIRST, fiscal_year DESC NULLS LAST, form NULLS FIRST"
        with self.tables.session() as con:
            rows = [dict(r) for r in con.execute(sql + order, args)]
        if doc_ids is not None:
            allowed = set(map(str, doc_ids))
            rows = [r for r in rows if r["doc_id"] in allowed]
        return rows

    def filing(self, doc_id: str) -> dict | None:
        if not self.exists():
            return None
        with self.tables.session() as con:
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
        with self.tables.session() as con:
            return [FactRow.from_db(r) for r in con.execute(sql + " ORDER BY id", args)]

    def docs_with(self, concepts: Iterable[str], period_ends: Iterable[str]) -> list[str]:
        """Filings with a consolidated (no-dimension) value of one of `concepts` at one of `period_ends`."""
        concepts, ends = list(concepts), list(period_ends)
        if not concepts or not ends or not self.exists():
            return []
        sql = (f"SELECT DISTINCT doc_id FROM facts WHERE dim_count = 0 AND value IS NOT NULL "
               f"AND concept IN ({', '.join('?' for _ in concepts)}) AND period_end IN ({', '.join('?' for _ in ends)})")
        with self.tables.session() as con:
            return [r["doc_id"] for r in con.execute(sql, concepts + ends)]

    def count(self, doc_id: str | None = None) -> int:
        if not self.exists():
            return 0
        with self.tables.session() as con:
            if doc_id:
                return con.execute("SELECT COUNT(*) AS n FROM facts WHERE doc_id = ?", (doc_id,)).fetchone()["n"]
            return con.execute("SELECT COUNT(*) AS n FROM facts").fetchone()["n"]

    def tickers(self) -> list[str]:
        return sorted({f["ticker"] for f in self.filings() if f.get("ticker")})


def _replace_filing(tables, con, filing_row: tuple, rows: list[tuple]) -> None:
    """A filing's row and facts in place of what it had, under the filing's lock (served: the index's writer of
    the same filing waits, writers of other filings do not)."""
    doc_id = filing_row[0]
    tables.lock_filing(con, doc_id)
    con.execute("DELETE FROM facts WHERE doc_id = ?", (doc_id,))
    con.execute("DELETE FROM filings WHERE doc_id = ?", (doc_id,))
    con.execute(f"INSERT INTO filings ({', '.join(FILING_COLUMNS)}) "
                f"VALUES ({', '.join('?' for _ in FILING_COLUMNS)})", filing_row)
    con.executemany(f"INSERT INTO facts ({', '.join(FACT_COLUMNS)}) "
                    f"VALUES ({', '.join('?' for _ in FACT_COLUMNS)})", rows)


def _publish_staged(con, run: str) -> int:
    staged = "SELECT doc_id FROM pending_filings WHERE run = ?"
    con.execute(f"DELETE FROM facts WHERE doc_id IN ({staged})", (run,))
    con.execute(f"DELETE FROM filings WHERE doc_id IN ({staged})", (run,))
    filing_cols, fact_cols = ", ".join(FILING_COLUMNS), ", ".join(FACT_COLUMNS)
    count = con.execute(f"INSERT INTO filings ({filing_cols}) SELECT {filing_cols} FROM pending_filings "
                        "WHERE run = ?", (run,)).rowcount
    con.execute(f"INSERT INTO facts ({fact_cols}) SELECT {fact_cols} FROM pending_facts WHERE run = ? "
                "ORDER BY rowid", (run,))
    con.execute("DELETE FROM pending_facts WHERE run = ?", (run,))
    con.execute("DELETE FROM pending_filings WHERE run = ?", (run,))
    return count


def _corrected_fields(record: dict) -> dict:
    """The filing-row values a user's correction set in the index record (what update_filing writes)."""
    keys = [k for name in record.get("corrected") or () for k in (name, f"{name}_source")]
    return {k: record[k] for k in keys if k in FILING_COLUMNS and k != "doc_id" and k in record}


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
        and ANNUAL_DAYS[0] <= (days_between(f.period_start, f.period_end) or 0) <= ANNUAL_DAYS[1]
    )
    if starts:
        return starts.most_common(1)[0][0]
    quarter = Counter(f.period_start for f in facts if f.period_start and f.period_end == period_end
                      and not f.dimensions)
    return quarter.most_common(1)[0][0] if quarter else None


# ==============================================================================================================
# Index hooks (rag/index.py calls these)


def record_filing(settings, doc, meta: dict, shard_dir: Path | None, *, run: str | None = None,
                  chunks: list[dict] | None = None, within=None) -> int:
    """Store a just-indexed filing's facts, each mapped to the chunk (node id) that shows it: the chunk spans are
    `chunks`, else read from the shard's nodes.jsonl. With `run`, staged until that indexing run publishes
    (FactStore.publish_run); served, `within` writes them in the index's own transaction (FactStore.add_filing)."""
    if chunks is None:
        chunks = []
        if shard_dir is not None and (Path(shard_dir) / "nodes.jsonl").exists():
            chunks = chunk_spans_from_nodes(Path(shard_dir) / "nodes.jsonl")
    return FactStore.for_settings(settings).add_filing(meta, filing_facts(doc, meta), chunks, text=doc.text, run=run,
                                                       within=within)


def filing_facts(doc, meta: dict) -> list:
    """The facts a filing is stored with: its XBRL facts, or for a PDF (which has none) the figures its primary
    statements' tables print (rag.facts.pdf_tables) and the share count its cover states (rag.facts.pdf_cover)."""
    if doc.facts or not str(meta.get("path") or "").lower().endswith(".pdf"):
        return doc.facts
    return table_facts(doc, meta) + cover_facts(doc)


def backfill_filing(settings, entry: dict, shard_dir: Path | None) -> int | None:
    """For a filing indexed before facts were stored (or whose facts were lost): parse it again and store its
    facts. Returns the count, or None when it already has facts or its file is gone."""
    store = FactStore.for_settings(settings)
    if store.has(entry["doc_id"]):
        return None
    path = Path(entry.get("path") or "")
    if not path.is_file():
        return None
    doc = parse_file(path)
    meta = dict(doc.meta)
    meta.update({k: v for k, v in entry.items() if v not in (None, "")})
    return record_filing(settings, doc, meta, shard_dir)


def forget_filings(settings, doc_ids: Iterable[str], *, within=None) -> int:
    return FactStore.for_settings(settings).remove(doc_ids, within=within)


