"""Parsed filings -> one persisted hybrid index (FAISS dense vectors + BM25) under storage/index/.

Layout:
    storage/index/CURRENT                 name of the live generation (replaced atomically)
    storage/index/generations/<name>/     a complete, self-contained index: manifest.json, nodes.jsonl,
                                          vectors.faiss (IndexFlatIP, row i == nodes.jsonl line i), bm25/
    storage/index/shards/<key>/           per filing: nodes.jsonl + vectors.npy + text.txt + sections.json,
                                          keyed by the file's sha256 and the chunking settings
    storage/index/.writer.lock            serialises writers (two app sessions, or the CLI beside the app);
                                          .writer.lock.holder says whose turn it is (see writer_lock.py)

Why generations: a writer builds the next index beside the live one and switches CURRENT with one os.replace,
so a crash or kill part-way leaves the previous index loadable, and readers keep answering from it meanwhile.
A killed writer's leftovers (CURRENT's and a shard's .<name>.<hex>.tmp, the .tmp-* folders a shard or a generation
is built in, a generation CURRENT never named, the facts it staged) are cleared by the next writer (_recover).
Why shards: they are the embedding cache. An unchanged filing (same bytes, same settings) costs no parse and
no embedding; adding one embeds only its chunks; removing one drops its shard, so no vector is left behind.
FAISS and BM25 are rebuilt from the shards on every change: flat inner-product search and bm25s indexing of a
few tens of thousands of chunks take seconds, far less than embedding.
Why a write failure stops the run (StorageError, see errors.py): a full or read-only disk fails every filing after
it alike; nothing of the run is published, and a generation whose facts cannot follow it live is taken back.
A shard is embedded and written a batch of chunks at a time, so a long filing costs no more memory than a short one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import bm25s
import faiss
import numpy as np
from filelock import Timeout

from .. import parse as parse_module
from ..config import Settings, get_settings
from ..embedding import get_embed_model, get_tokenizer, max_model_tokens
from ..facts import FactStore, backfill_filing, forget_filings, record_filing
from ..parse import ParsedFiling
from .chunking import FilingChunker, chunker_version
from .columns import metadata_columns
from .corrections import USER_SOURCE, checked_corrections, with_record
from .errors import IndexBusy, IndexError_, StorageError, storage_error
from .filings import FILING_META_KEYS, PathRefused, filing_files, filing_meta, indexable, shared_ticker
from .loaded import LoadedIndex, keyword_stemmer
from .nodes import node_to_json, read_nodes
from .transforms import EmbedChangedChunks, embedded_batches
from .vector_store import FilingVectorStore
from .writer_lock import LockWait, WriterLock

__all__ = ["IndexBusy", "IndexError_", "IndexReport", "IndexStore", "StorageError", "keyword_stemmer"]

log = logging.getLogger(__name__)

Progress = Callable[[str, str, float], None]  # (filing name, stage, fraction of this filing done)

# What a failed write leaves, said after the reason.
UNCHANGED = "Nothing was published: the index and its facts are as they were."


# --------------------------------------------------------------------------------------------------------------
# The store (write side + loading)


@dataclass
class IndexReport:
    """What one indexing run did, per filing and in total (the benchmark prints it)."""

    rows: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    build_seconds: float = 0.0
    total_seconds: float = 0.0
    changed: bool = False

    @property
    def embed_seconds(self) -> float:
        return sum(r.get("embed_s", 0.0) for r in self.rows)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# The temporaries a writer makes, by name, so that the next writer can remove what a killed one left:
# _write_text_atomic's files (CURRENT, a shard's nodes.jsonl), and the folders a shard and a generation are built in.
_ATOMIC_TMP_GLOB = ".*.tmp"
_BUILD_DIR_PREFIX = ".tmp-"


def _write_text_atomic(path: Path, content: str) -> None:
    os.replace(_written_beside(path, content), path)
    _fsync_dir(path.parent)


def _written_beside(path: Path, content: str) -> Path:
    """A temporary beside `path` holding `content`, on disk (fsynced); removed again if it cannot be written."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(content)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


class IndexStore:
    """The persisted index of one storage folder. Cheap to create; `load()` returns the live generation."""

    def __init__(self, settings: Settings | None = None, *, on_lock_wait: LockWait | None = None):
        """on_lock_wait: told (a message) when a write waits for another writer, as it waits and when it goes on;
        by default the messages are logged."""
        self.settings = settings or get_settings()
        self.root = self.settings.index_dir
        self.on_lock_wait = on_lock_wait
        self._embed = None

    # ---- paths and identity
    @property
    def fingerprint(self) -> str:
        """Names a shard's chunking and embedding settings."""
        raw = (f"{self.settings.embed_model}|{self.settings.chunk_tokens}/{self.settings.statement_chunk_tokens}"
               f"|{chunker_version()}")
        if self.settings.embed_backend != "torch":
            # Vectors differ by backend; torch adds nothing so indexes made before backends existed stay current.
            raw += f"|{self.settings.embed_backend}"
        return hashlib.sha256(raw.encode()).hexdigest()[:10]

    def current_generation(self) -> str | None:
        """The live generation's name: a cheap check for 'has another process changed the index?'."""
        try:
            name = (self.root / "CURRENT").read_text().strip()
        except FileNotFoundError:
            return None
        return name or None

    def _writer(self, what: str, timeout: float) -> WriterLock:
        """The writer lock, taken (waiting up to `timeout` s, saying for whom); IndexBusy when it stays taken."""
        lock = WriterLock(self.root, what=what, on_wait=self.on_lock_wait)
        try:
            lock.acquire(timeout)
        except Timeout as exc:
            raise IndexBusy("another indexing run holds the index; try again when it finishes") from exc
        except OSError as exc:  # read-only storage, a full disk: no other writer is to blame
            raise self._storage_error(exc, f"start the {what}", "Nothing was changed.") from exc
        return lock

    def _storage_error(self, exc: BaseException, doing: str, outcome: str = UNCHANGED) -> BaseException:
        """`exc` as the StorageError it amounts to, or `exc` itself when it is no failure to write."""
        return storage_error(exc, self.settings.storage_dir, doing, outcome) or exc

    @contextmanager
    def _writes(self, doing: str, outcome: str = UNCHANGED):
        """Around the index's writes: a full disk, read-only storage or an I/O error becomes one StorageError
        that names the storage folder and its free space, rather than the writing library's own words."""
        try:
            yield
        except StorageError:
            raise
        except Exception as exc:
            problem = self._storage_error(exc, doing, outcome)
            if problem is exc:
                raise
            raise problem from exc

    def _acquire(self, what: str, timeout: float) -> WriterLock:
        """The writer lock, held, with what a killed writer left cleared away (see _recover)."""
        lock = self._writer(what, timeout)
        try:
            with self._writes(f"clear what an interrupted writer left before the {what}", "Nothing was changed."):
                self._recover()
        except BaseException:
            lock.release()
            raise
        return lock

    def _recover(self) -> None:
        """Runs first under the writer lock: a writer killed part-way (kill -9, power loss) leaves temporaries,
        perhaps a generation it built but never switched CURRENT to, and its filings' staged facts. Readers
        never read any of these, so removing them is safe while they read."""
        live = self.current_generation()
        for path in self.root.glob(_ATOMIC_TMP_GLOB):  # CURRENT's temporary
            path.unlink(missing_ok=True)
        gens = self.root / "generations"
        if gens.is_dir():
            for path in gens.iterdir():
                # Every generation is named after the time its run started, under the lock: one named after the
                # live one was never published.
                unpublished = path.name != live and (live is None or path.name > live)
                if path.name.startswith(_BUILD_DIR_PREFIX) or unpublished:
                    shutil.rmtree(path, ignore_errors=True)
        shards = self.root / "shards"
        if shards.is_dir():
            for path in shards.iterdir():
                if path.name.startswith(_BUILD_DIR_PREFIX):
                    shutil.rmtree(path, ignore_errors=True)
                elif path.is_dir():  # a complete shard stays: it is the embedding cache of the next run
                    for tmp in path.glob(_ATOMIC_TMP_GLOB):  # nodes.jsonl's temporary (a correction)
                        tmp.unlink(missing_ok=True)
        self._facts_settle(live)

    @staticmethod
    def _new_generation_name() -> str:
        """Names sort as the runs started (UTC, microseconds before the random part), which _recover relies on."""
        now = time.time()
        return f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime(now))}-{int(now % 1 * 1e6):06d}{uuid.uuid4().hex[:4]}"

    # ---- reading
    def load(self) -> LoadedIndex:
        """The last complete index (an empty one when nothing was indexed yet)."""
        for _ in range(3):
            name = self.current_generation()
            if name is None:
                return self._empty()
            gen = self.root / "generations" / name
            try:
                manifest = json.loads((gen / "manifest.json").read_text())
                nodes = read_nodes(gen / "nodes.jsonl")
                vectors = faiss.read_index(str(gen / "vectors.faiss"))
                bm25 = self._load_bm25(gen / "bm25") if nodes else None
            except FileNotFoundError:
                # A writer replaced and pruned this generation while we read it: read the new one.
                time.sleep(0.05)
                continue
            if vectors.ntotal != len(nodes):
                raise IndexError_(f"index generation {name} is inconsistent: {vectors.ntotal} vectors, {len(nodes)} chunks")
            columns = metadata_columns(nodes)
            return LoadedIndex(name, manifest, nodes, FilingVectorStore(vectors, nodes, columns), bm25, self.root,
                               columns)
        raise IndexError_("the index kept changing while loading; try again")

    def _empty(self) -> LoadedIndex:
        columns = metadata_columns([])
        return LoadedIndex("", {"filings": {}}, [], FilingVectorStore(faiss.IndexFlatIP(1), [], columns), None,
                           self.root, columns)

    @staticmethod
    def _load_bm25(path: Path):
        return bm25s.BM25.load(str(path), load_corpus=False)

    def list_filings(self) -> list[dict]:
        return sorted_filings(self._manifest().get("filings", {}).values())

    def _manifest(self) -> dict:
        name = self.current_generation()
        if not name:
            return {"filings": {}}
        try:
            return json.loads((self.root / "generations" / name / "manifest.json").read_text())
        except FileNotFoundError:
            return {"filings": {}}

    # ---- writing
    @property
    def embedding_loaded(self) -> bool:
        """Has the embedding model been loaded yet (the UI says so rather than block on it)?"""
        return self._embed is not None

    def query_embed_model(self, index: LoadedIndex):
        """The embedding that reads queries against `index`: the model and backend that made its vectors (the
        manifest records them; older indexes were made with PyTorch), whatever the current setting says. A query
        embedded another way would land beside, not on, the chunks it should find."""
        model = index.manifest.get("embed_model") or self.settings.embed_model
        backend = index.manifest.get("embed_backend") or "torch"
        if model == self.settings.embed_model and backend == self.settings.embed_backend:
            return self.embed_model()
        return get_embed_model(model, self.settings.embed_batch_size, backend=backend,
                               models_dir=self.settings.models_dir)

    def embed_model(self):
        if self._embed is None:
            self._embed = get_embed_model(self.settings.embed_model, self.settings.embed_batch_size,
                                          backend=self.settings.embed_backend, models_dir=self.settings.models_dir)
        return self._embed

    def chunker(self) -> FilingChunker:
        limit = max_model_tokens(self.settings.embed_model) - 2  # [CLS] and [SEP]
        return FilingChunker(get_tokenizer(self.settings.embed_model), min(self.settings.chunk_tokens, limit),
                             self.settings.statement_chunk_tokens)

    def add(
        self,
        paths: Iterable[str | Path],
        *,
        overrides: dict | None = None,
        progress: Progress | None = None,
        lock_timeout: float = 600.0,
        parsed: dict[str, ParsedFiling] | None = None,
    ) -> IndexReport:
        """Index files (folders are walked). Unchanged filings are skipped; failures are reported per filing and
        the others go on. Publishes one new generation at the end, if anything changed.

        Raises, before taking the writer lock, FileNotFoundError for a path that does not exist and PathRefused
        for one that is no regular file (a FIFO or a device would never finish reading). A write that fails (a
        full disk, read-only storage) stops the run with StorageError and publishes nothing of it."""
        files = list(filing_files(paths))
        report = IndexReport()
        started = time.perf_counter()
        lock = self._acquire("indexing run", lock_timeout)
        try:
            manifest = self._manifest()
            filings = dict(manifest.get("filings", {}))
            live_sha = {doc_id: f.get("sha256") for doc_id, f in filings.items()}
            # The run's facts are staged under the name of the generation it will publish (see _recover).
            generation = self._new_generation_name()
            by_hash = {f["sha256"]: doc_id for doc_id, f in filings.items() if f.get("fingerprint") == self.fingerprint}
            for path in files:
                name = path.name
                row = {"file": str(path), "status": "skipped", "parse_s": 0.0, "chunks": 0, "embed_s": 0.0}
                try:
                    t0 = time.perf_counter()
                    indexable(path, self.settings.max_file_mb)  # stat only, before a byte is read
                    sha = parse_module.file_sha256(path)
                    if sha in by_hash:
                        row.update(doc_id=by_hash[sha], chunks=filings[by_hash[sha]].get("chunks", 0))
                        if live_sha.get(by_hash[sha]) == sha:  # not one this run indexed: those wait to publish
                            self._facts_backfill(filings[by_hash[sha]])  # facts hook (rag/facts.py)
                        report.rows.append(row)
                        if progress:
                            progress(name, "unchanged", 1.0)
                        continue
                    doc, meta = self._read_filing(path, sha, row, t0, parsed, overrides, filings.values(), progress)
                    old = filings.get(meta["doc_id"])
                    reuse = self._reusable_vectors(old, manifest)
                    entry = self._build_shard(doc, meta, row, progress=progress, name=name, reuse=reuse)
                    self._facts_record(doc, meta, entry, generation)  # facts hook (rag/facts.py)
                    if old and old.get("sha256") in by_hash:
                        by_hash.pop(old["sha256"], None)
                    filings[meta["doc_id"]] = entry
                    by_hash[sha] = meta["doc_id"]
                    row.update(status="indexed", doc_id=meta["doc_id"])
                    report.changed = True
                    if progress:
                        progress(name, "indexed", 1.0)
                except StorageError:  # the disk, not the filing: every filing after it would fail alike
                    raise
                except Exception as exc:  # noqa: BLE001 - one bad filing must not stop the others
                    _failed(report, row, path, exc, progress)
                report.rows.append(row)
            if report.changed:
                t0 = time.perf_counter()
                self._publish(filings, generation)
                report.build_seconds = time.perf_counter() - t0
        finally:
            lock.release()
        report.total_seconds = time.perf_counter() - started
        return report

    def remove(self, keys: Iterable[str], *, lock_timeout: float = 600.0) -> list[str]:
        """Remove filings by accession/doc id or by file path. Returns the doc ids removed."""
        keys = [str(k) for k in keys]
        lock = self._acquire("removal", lock_timeout)
        try:
            filings = dict(self._manifest().get("filings", {}))
            removed = []
            for doc_id, entry in list(filings.items()):
                paths = {entry.get("path") or ""}
                for key in keys:
                    as_path = str(Path(key).resolve()) if key else ""
                    if key == doc_id or key == entry.get("accession") or as_path in paths:
                        removed.append(doc_id)
                        filings.pop(doc_id)
                        break
            if removed:
                self._publish(filings)
                self._facts_forget(removed)  # facts hook (rag/facts.py)
        finally:
            lock.release()
        return removed

    def update_filing(self, doc_id: str, changes: dict, *, lock_timeout: float = 600.0) -> dict:
        """Correct what was read from a filing (company, ticker, form, fiscal_year, fiscal_period; None leaves a
        field as it is) without re-embedding it: the filing's record, its chunks' metadata (in its shard and in a
        new generation, published as add/remove publish) and its facts-store row change; no vector is computed.

        Metadata only: each chunk's text keeps the header line it was embedded and keyword-indexed with (company,
        form, fiscal year), since changing text would change what was embedded. Filters, citations, the Library and
        the facts read the metadata. Returns the updated record (unchanged, and nothing published, when no value
        differs). Raises InvalidCorrection (a ValueError) naming each bad value, IndexError_ for an unknown
        doc_id, IndexBusy while another writer holds the index."""
        lock = self._acquire("metadata correction", lock_timeout)
        try:
            filings = dict(self._manifest().get("filings", {}))
            if doc_id not in filings:
                raise IndexError_(f"no indexed filing has the id {doc_id!r}")
            fields = checked_corrections(changes, filings[doc_id])
            if not fields:
                return dict(filings[doc_id])
            for key in ("fiscal_year", "fiscal_period"):
                if key in fields:
                    fields[f"{key}_source"] = USER_SOURCE
            corrected = sorted(set(filings[doc_id].get("corrected") or ()) | {k for k in fields if k in changes})
            entry = {**filings[doc_id], **fields, "corrected": corrected}
            filings[doc_id] = entry
            with self._writes("rewrite the filing's chunks"):
                self._rewrite_shard_metadata(entry)
            self._publish(filings)
            self._facts_update(doc_id, fields)
        finally:
            lock.release()
        return dict(entry)

    def _rewrite_shard_metadata(self, entry: dict) -> None:
        """The shard's chunks with the record's metadata, replaced in one step (texts and vectors untouched)."""
        path = self.root / "shards" / entry["shard"] / "nodes.jsonl"
        nodes = with_record(read_nodes(path), entry)
        _write_text_atomic(path, "".join(node_to_json(node) + "\n" for node in nodes))

    # ---- facts hook (rag/facts.py): each filing's inline XBRL facts in storage/facts.sqlite3, mapped to chunks.
    # A filing goes live with its facts or not at all; the other hooks only log a failure (the next writer settles).
    def _facts_record(self, doc: ParsedFiling, meta: dict, entry: dict, generation: str) -> None:
        """Stage the filing's facts for `generation`: a failed write stops the run (StorageError), any other
        failure fails this filing, so no filing is indexed without its facts."""
        try:
            with self._writes("store the filing's XBRL facts"):
                record_filing(self.settings, doc, meta, self.root / "shards" / entry["shard"], run=generation)
        except StorageError:
            raise
        except Exception as exc:
            raise IndexError_(f"its XBRL facts could not be stored ({exc})") from exc

    def _facts_backfill(self, entry: dict) -> None:
        """An unchanged filing indexed before facts were stored (or whose facts DB is gone) gets its facts."""
        try:
            with self._writes("store the XBRL facts of an indexed filing"):
                backfill_filing(self.settings, entry, self.root / "shards" / entry["shard"])
        except StorageError:
            raise
        except Exception:  # noqa: BLE001
            log.exception("storing the XBRL facts of %s failed", entry.get("doc_id"))

    def _facts_publish(self, generation: str) -> None:
        """The facts staged for `generation`, made live right after it went live (raises when they cannot be: see
        _go_live). A kill in between leaves them staged; the next writer's _recover publishes them, as their
        generation is live."""
        FactStore.for_settings(self.settings).publish_run(generation)

    def _facts_settle(self, live: str | None) -> None:
        """The facts store brought in line with the live index (see FactStore.settle). The filings it holds are
        compared only when the live manifest reads; an unreadable one must not cost every filing its facts."""
        try:
            live_filings: dict | None = {}
            if live is not None:
                try:
                    manifest = json.loads((self.root / "generations" / live / "manifest.json").read_text())
                    live_filings = dict(manifest.get("filings", {}))
                except (OSError, ValueError) as exc:
                    log.warning("the live index manifest does not read (%s); facts of other filings stay", exc)
                    live_filings = None
            done = FactStore.for_settings(self.settings).settle(live, live_filings)
            if any(done.values()):
                log.info("facts store settled after an interrupted run: %s", done)
        except Exception as exc:  # noqa: BLE001
            if self._storage_error(exc, "settle the XBRL facts") is exc:
                log.exception("settling the XBRL facts with the live index failed")
            else:  # the run's own first write will say so, once, in its own words
                log.info("settling the XBRL facts with the live index failed: %s", exc)

    def _facts_forget(self, doc_ids: list[str]) -> None:
        try:
            forget_filings(self.settings, doc_ids)
        except Exception:  # noqa: BLE001
            log.exception("removing the XBRL facts of %s failed", doc_ids)

    def _facts_update(self, doc_id: str, fields: dict) -> None:
        try:
            FactStore.for_settings(self.settings).update_filing(doc_id, fields)
        except Exception:  # noqa: BLE001
            log.exception("correcting the facts' record of %s failed", doc_id)

    @staticmethod
    def _read_filing(path: Path, sha: str, row: dict, t0: float, parsed: dict | None, overrides,
                     known: Iterable[dict], progress: Progress | None) -> tuple[ParsedFiling, dict]:
        """A file parsed (or taken from `parsed`) and its filing record read, with the ticker an indexed filing of
        the same filer uses when the file names none; the parse time and any notes go into the run's `row`."""
        if progress:
            progress(path.name, "parsing", 0.05)
        doc = (parsed or {}).get(str(path)) or parse_module.parse_file(path)
        row["parse_s"] = time.perf_counter() - t0
        meta = filing_meta(path, doc, sha, overrides)
        shared = None if meta.get("ticker") else shared_ticker(meta, known)
        if shared:
            meta["ticker"] = shared
        if meta.get("notes"):  # what the file says that was not used, and why
            row["notes"] = list(meta["notes"])
        return doc, meta

    def _reusable_vectors(self, entry: dict | None, manifest: dict) -> dict[str, np.ndarray]:
        """Chunk text -> vector from the filing's previous shard, when the same embedding model and backend made
        it. A chunker change or an amended file then re-embeds only the chunks whose text changed."""
        if not entry or not entry.get("shard"):
            return {}
        model = entry.get("embed_model") or manifest.get("embed_model")
        backend = entry.get("embed_backend") or manifest.get("embed_backend") or "torch"  # older shards: torch
        shard = self.root / "shards" / entry["shard"]
        same = model == self.settings.embed_model and backend == self.settings.embed_backend
        if not same or not (shard / "vectors.npy").exists():
            return {}
        try:
            nodes = read_nodes(shard / "nodes.jsonl")
            vectors = np.load(shard / "vectors.npy")
        except (OSError, ValueError) as exc:  # a damaged old shard only costs its reuse
            log.warning("cannot reuse the vectors of %s: %s", shard, exc)
            return {}
        if len(nodes) != len(vectors):
            return {}
        return {node.text: vectors[i] for i, node in enumerate(nodes)}

    def _build_shard(self, doc: ParsedFiling, meta: dict, row: dict, *, progress, name,
                     reuse: dict[str, np.ndarray] | None = None) -> dict:
        key = f"{meta['sha256'][:16]}-{self.fingerprint}"
        final = self.root / "shards" / key
        if not (final / "vectors.npy").exists():
            count = self._write_shard(doc, meta, row, final, progress=progress, name=name, reuse=reuse or {})
        else:
            count = sum(1 for _ in open(final / "nodes.jsonl", encoding="utf-8"))
        row["chunks"] = count
        entry = {k: meta.get(k) for k in FILING_META_KEYS}
        entry.update(sha256=meta["sha256"], fingerprint=self.fingerprint, embed_model=self.settings.embed_model,
                     embed_backend=self.settings.embed_backend, shard=key, chunks=count,
                     indexed_at=time.strftime("%Y-%m-%dT%H:%M:%S"))
        return entry

    def _write_shard(self, doc: ParsedFiling, meta: dict, row: dict, final: Path, *, progress, name,
                     reuse: dict[str, np.ndarray]) -> int:
        """Chunk, embed and write one filing's shard in a temporary folder, then rename it to `final`. Chunks go
        to the embedder and on to disk a batch at a time (nodes.jsonl line by line, vectors.npy row by row), so
        memory holds one batch of nodes and vectors however long the filing. Returns the chunk count."""
        if progress:
            progress(name, "chunking", 0.15)
        filing = {k: meta.get(k) for k in FILING_META_KEYS}
        chunks = self.chunker().split(doc, filing)
        if not chunks:
            raise IndexError_("no text to index was found in it")
        fresh = sum(1 for chunk in chunks if chunk["text"] not in reuse)
        if progress:
            progress(name, "embedding", 0.3)
        on_batch = (lambda done, total: progress(name, f"embedding {done}/{total}", 0.3 + 0.6 * done / total)
                    ) if progress else None
        embedder = EmbedChangedChunks(self.embed_model(), reuse, on_batch, total=fresh)
        tmp = final.parent / f"{_BUILD_DIR_PREFIX}{final.name}-{uuid.uuid4().hex[:8]}"
        rows, embed_s = 0, 0.0
        try:
            with self._writes("write the filing's chunks"):
                tmp.mkdir(parents=True)
                with open(tmp / "nodes.jsonl", "w", encoding="utf-8") as nodes_fh, \
                        open(tmp / "vectors.npy", "wb") as vectors_fh:
                    t0 = time.perf_counter()
                    for nodes, vectors in embedded_batches(chunks, filing, embedder):
                        embed_s += time.perf_counter() - t0
                        if not rows:  # the header of the .npy np.load reads: its shape is known from the first batch
                            np.lib.format.write_array_header_1_0(vectors_fh, {
                                "descr": "<f4", "fortran_order": False, "shape": (len(chunks), vectors.shape[1])})
                        nodes_fh.writelines(node_to_json(node) + "\n" for node in nodes)
                        vectors_fh.write(np.ascontiguousarray(vectors).tobytes())
                        rows += len(nodes)
                        t0 = time.perf_counter()
                if rows != len(chunks):
                    raise IndexError_(f"{rows} of its {len(chunks)} chunks were embedded")
                (tmp / "text.txt").write_text(doc.text, encoding="utf-8")
                (tmp / "sections.json").write_text(json.dumps([s.__dict__ for s in doc.sections]))
                if final.exists():
                    shutil.rmtree(final)
                os.replace(tmp, final)
                _fsync_dir(final.parent)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        row["embed_s"], row["reused"] = embed_s, embedder.reused
        return rows

    def _publish(self, filings: dict, name: str | None = None) -> None:
        """Build the next generation from the shards, then switch CURRENT to it in one atomic step; the facts
        staged for it follow."""
        gens = self.root / "generations"
        name = name or self._new_generation_name()
        tmp = gens / f"{_BUILD_DIR_PREFIX}{name}"
        with self._writes("write the next index generation"):
            gens.mkdir(parents=True, exist_ok=True)
            tmp.mkdir()
            self._build_generation(filings, tmp, gens / name)
        self._go_live(name)
        self._prune(keep={name}, live_shards={f["shard"] for f in filings.values()})

    def _build_generation(self, filings: dict, tmp: Path, final: Path) -> None:
        """The index of `filings` (FAISS, nodes, BM25, manifest) built in `tmp`, then renamed to `final`."""
        gens = final.parent
        try:
            nodes, vectors = [], []
            for doc_id in sorted(filings):
                shard = self.root / "shards" / filings[doc_id]["shard"]
                # The record's metadata wins over the shard's, so a correction interrupted before it published
                # still leaves the chunks agreeing with their record.
                nodes.extend(with_record(read_nodes(shard / "nodes.jsonl"), filings[doc_id]))
                vectors.append(np.load(shard / "vectors.npy"))
            dim = vectors[0].shape[1] if vectors and vectors[0].size else 384
            matrix = np.vstack(vectors).astype("float32") if vectors else np.zeros((0, dim), "float32")
            FilingVectorStore.from_vectors(nodes, matrix, dim).persist(str(tmp / "vectors.faiss"))
            with open(tmp / "nodes.jsonl", "w", encoding="utf-8") as fh:
                for node in nodes:
                    fh.write(node_to_json(node) + "\n")
            if nodes:
                tokens = bm25s.tokenize(
                    [n.text for n in nodes], stopwords="en", stemmer=keyword_stemmer(), show_progress=False
                )
                bm25 = bm25s.BM25()
                bm25.index(tokens, show_progress=False)
                bm25.save(str(tmp / "bm25"))
            manifest = {"version": 1, "embed_model": self.settings.embed_model,
                        "embed_backend": self.settings.embed_backend, "dim": dim,
                        "chunks": len(nodes), "filings": filings}
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
            for path in tmp.rglob("*"):
                if path.is_file():
                    with open(path, "rb") as fh:
                        os.fsync(fh.fileno())
            os.replace(tmp, final)
            _fsync_dir(gens)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def _go_live(self, name: str) -> None:
        """Switch CURRENT to generation `name`, then publish the facts staged for it. Should the facts fail (a full
        disk), CURRENT goes back to the generation it named, from a copy written before the switch so that going
        back needs no room, and the run fails: an index never stays live without its facts."""
        current = self.root / "CURRENT"
        previous = self.current_generation()
        with self._writes("switch the index to its next generation"):
            undo = _written_beside(current, previous) if previous else None
            try:
                _write_text_atomic(current, name)
            except BaseException:
                if undo is not None:
                    undo.unlink(missing_ok=True)
                raise
        try:
            self._facts_publish(name)
        except Exception as exc:  # a kill (or Ctrl-C) leaves this to the next writer's _recover instead
            if undo is not None:
                os.replace(undo, current)
            else:
                current.unlink(missing_ok=True)
            _fsync_dir(self.root)
            shutil.rmtree(self.root / "generations" / name, ignore_errors=True)
            problem = self._storage_error(exc, "publish the XBRL facts of the new index")
            if problem is exc:
                raise IndexError_(f"the XBRL facts of the new index could not be published ({exc}). {UNCHANGED}"
                                  ) from exc
            raise problem from exc
        if undo is not None:
            undo.unlink(missing_ok=True)

    def _prune(self, keep: set[str], live_shards: set[str]) -> None:
        """Drop old generations (keeping the previous one for readers mid-load), leftovers of killed runs, and
        shards no filing uses any more."""
        gens = self.root / "generations"
        existing = sorted((p for p in gens.iterdir() if not p.name.startswith(".")), key=lambda p: p.name)
        for path in existing[:-2]:
            if path.name not in keep:
                shutil.rmtree(path, ignore_errors=True)
        for path in gens.glob(f"{_BUILD_DIR_PREFIX}*"):
            shutil.rmtree(path, ignore_errors=True)
        shards = self.root / "shards"
        if shards.is_dir():
            for path in shards.iterdir():
                if path.name not in live_shards:
                    shutil.rmtree(path, ignore_errors=True)


def sorted_filings(records: Iterable[dict]) -> list[dict]:
    """Filing records as `rag list` and the Library show them: by ticker, form, latest year first."""
    return sorted(records, key=lambda f: (str(f.get("ticker") or ""), str(f.get("form") or ""),
                                          -(f.get("fiscal_year") or 0)))


def _failed(report: IndexReport, row: dict, path: Path, exc: Exception, progress: Progress | None) -> None:
    """One filing not indexed (called while handling `exc`): its row says why; the run goes on with the others."""
    if isinstance(exc, (parse_module.ParseError, PathRefused)):  # the file, not the code: its reason says it all
        log.info("not indexed: %s", exc)
    else:
        log.exception("indexing %s failed", path)
    row.update(status="failed", error=str(exc))
    report.errors.append({"file": str(path), "error": str(exc)})
    if progress:
        progress(path.name, f"failed: {exc}", 1.0)

