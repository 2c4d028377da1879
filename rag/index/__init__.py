"""Parsed filings -> one persisted hybrid index (dense vectors + BM25), and the loaded index retrieval searches.

Modules:
    chunking      FilingChunker: section-aware chunks sized with the embedding model's tokenizer
    filings       which files are filings; a filing's sha256 and metadata
    nodes         the chunk node and its nodes.jsonl line
    transforms    the IngestionPipeline step that embeds only what changed, fed a batch of chunks at a time
    errors        the errors a user reads: a busy index, and storage that cannot be written (full, read-only)
    columns       per-row filter columns (incl. the statement a chunk belongs to) and the rows a filter selects
    vector_store  FilingVectorStore: FAISS as a LlamaIndex vector store, with exact filters and delete
    loaded        LoadedIndex: one generation, loaded
    word_uses     how the indexed text writes its words (per company, in lower case), for the catalog
    corrections   a user's corrections of a filing's company, ticker, form, fiscal year and period, checked
    store         IndexStore: shards, generations, atomic publish, the writer lock; add / remove / update / list / load
    pg_vector_store  PgFilingVectorStore: chunks in PostgreSQL (pgvector HNSW, full-text search), filters as SQL
    served        ServedIndexStore / ServedIndex: team mode's index in PostgreSQL, a filing per transaction, read
                  on demand; open_store picks it when RAG_DATABASE_URL is set
"""

from .chunking import CHUNKER_VERSION, FilingChunker
from .columns import FILTER_COLUMNS, fiscal_period_of, metadata_columns
from .corrections import EDITABLE_FIELDS, FISCAL_PERIODS, InvalidCorrection, checked_corrections
from .errors import StorageError
from .filings import FILING_META_KEYS, PathRefused, filing_files, filing_meta
from .loaded import LoadedIndex, keyword_stemmer
from .nodes import NODE_META_KEYS
from .served import ServedIndex, ServedIndexStore, open_store
from .store import IndexBusy, IndexError_, IndexReport, IndexStore, Progress
from .vector_store import FilingVectorStore
from .word_uses import WordUses, filing_counts, word_uses

__all__ = [
    "CHUNKER_VERSION", "EDITABLE_FIELDS", "FILING_META_KEYS", "FILTER_COLUMNS", "FISCAL_PERIODS", "NODE_META_KEYS",
    "FilingChunker", "FilingVectorStore", "IndexBusy", "IndexError_", "IndexReport", "IndexStore",
    "InvalidCorrection", "LoadedIndex", "ServedIndex", "ServedIndexStore", "open_store", "PathRefused", "Progress",
    "StorageError", "checked_corrections", "WordUses", "fiscal_period_of", "filing_counts", "filing_files",
    "word_uses", "filing_meta", "keyword_stemmer", "metadata_columns",
]
