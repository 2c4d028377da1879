"""Shared state of the app: settings, the cached engine, Ollama's status, conversations, the user's choices."""

from __future__ import annotations

import copy
import logging
import threading
import time
from dataclasses import dataclass, field

import streamlit as st

from rag.answer import ollama_status
from rag.config import Settings, get_settings
from rag.conversations import SHARED, ConversationStore, valid_id
from rag.engine import Engine
from rag.jobs import IndexJobs
from rag.schema import MODES, Filters

from .safe import Md, plain
from .text import safe_inline

log = logging.getLogger(__name__)

# Session-state keys (one place, so pages and tests agree on them).
K_MODE = "mode"
K_TOP_K = "top_k"
K_GENERATE = "generate_queries"
# Retrieval choices are bound to the URL (?mode=keyword&company=AAPL&fy=2024): a reload or a shared link keeps them.
K_TICKERS = "company"
K_YEARS = "fy"
K_FORMS = "form"
K_PERIODS = "period"
K_MODEL = "llm_model"
K_CONV = "conversation_id"
K_UA = "sec_user_agent"
K_PENDING = "pending_question"
K_NOTICE = "notice"
K_LIBRARY_DOC = "library_doc"
K_LIBRARY_ITEM = "library_item"

GENERATED_QUERIES = 3  # what the sidebar toggle asks for when RAG_GENERATED_QUERIES does not say
MODE_HELP = {
    "hybrid": "Dense vectors and BM25 keywords, fused by reciprocal rank: the best default.",
    "dense": "Meaning only (embeddings searched in FAISS): finds paraphrases, can miss exact terms.",
    "keyword": "BM25 only: exact words, line items and figures; misses paraphrases.",
}


def settings() -> Settings:
    """Settings from the environment, read on every rerun (cheap), with the user's model choice on top."""
    try:
        base = get_settings()
    except ValueError as exc:  # a malformed environment variable: say which, stop the page
        st.error(safe_inline(f"The app's settings are invalid: {exc}"))
        st.stop()
    overrides = {}
    model = st.session_state.get(K_MODEL)
    if model:
        overrides["llm_model"] = model
    ua = (st.session_state.get(K_UA) or "").strip()
    if ua and not base.sec_user_agent:
        overrides["sec_user_agent"] = ua
    return base.with_overrides(**overrides) if overrides else base


def _index_key(s: Settings) -> tuple:
    """What decides which index (and embedding model) an engine serves."""
    return (str(s.storage_dir), str(s.data_dir), s.embed_model, s.embed_backend, int(s.chunk_tokens),
            int(s.embed_batch_size))


# The heavy pieces live per process, outside any session: one engine per index (its model, loaded index and fact
# views), warmed in a background thread as soon as the process starts (ui/serve.py) or its first page runs, and
# one background queue of filings per index. Plain module state guarded by a lock, so the launcher can start the
# warm-up before Streamlit runs any script, and no worker thread ever touches Streamlit.
_ENGINES: dict[tuple, object] = {}
_WARMUPS: dict[tuple, "WarmUp"] = {}
_JOBS: dict[tuple, IndexJobs] = {}
_REGISTRY_LOCK = threading.Lock()


class WarmUp:
    """Loads an engine's embedding model, index and fact views in a daemon thread; `wait()` blocks until done."""

    def __init__(self, engine):
        self.engine = engine
        self.done = threading.Event()
        self.seconds: float | None = None
        self.error: str | None = None
        self.thread = threading.Thread(target=self._run, name="engine-warm-up", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        started = time.perf_counter()
        try:
            self.engine.embed_model()
            self.engine.warm()
        except Exception as exc:  # noqa: BLE001 - an empty or broken index: the first question says why
            self.error = f"{type(exc).__name__}: {exc}"
            log.warning("warming the engine up failed: %s", self.error)
        finally:
            self.seconds = time.perf_counter() - started
            self.done.set()
            log.warning("engine warm-up finished in %.1f s", self.seconds)  # the browser test waits for this line

    def wait(self, timeout: float | None = None) -> bool:
        return self.done.wait(timeout)


def _cached_engine(key: tuple):
    with _REGISTRY_LOCK:
        if key not in _ENGINES:
            storage_dir, data_dir, embed_model, backend, chunk_tokens, batch = key
            _ENGINES[key] = Engine(get_settings(storage_dir=storage_dir, data_dir=data_dir, embed_model=embed_model,
                                                embed_backend=backend, chunk_tokens=chunk_tokens,
                                                embed_batch_size=batch))
        return _ENGINES[key]


def start_warm_up(s: Settings | None = None) -> WarmUp:
    """Start (once per index and process) loading what the first question needs; returns at once."""
    key = _index_key(s or settings())
    base = _cached_engine(key)
    with _REGISTRY_LOCK:
        if key not in _WARMUPS:
            _WARMUPS[key] = WarmUp(base)
        return _WARMUPS[key]


def jobs(s: Settings | None = None) -> IndexJobs:
    """The process-wide background queue that downloads and indexes filings for this index."""
    key = _index_key(s or settings())
    base = _cached_engine(key)
    warm = start_warm_up(s)
    with _REGISTRY_LOCK:
        if key not in _JOBS:
            # The worker waits for the warm-up (one model load, not two) and, after each publish, brings the
            # shared engine's index and retriever up to date so the next question does not pay for the reload.
            _JOBS[key] = IndexJobs(base.store, before_first=warm.wait, on_published=base.retriever)
        return _JOBS[key]


def wait_for_jobs(timeout: float = 120.0) -> bool:
    """Until every background queue in this process is idle (tests drive the app in-process). True when idle."""
    with _REGISTRY_LOCK:
        queues = list(_JOBS.values())
    return all(queue.wait_idle(timeout) for queue in queues)


def engine(s: Settings | None = None):
    """The engine for these settings: one per index in the process (st.cache_resource), viewed with the current
    settings (model, Ollama address) so a model switch never reloads the index."""
    s = s or settings()
    base = _cached_engine(_index_key(s))
    if base.settings == s:
        return base
    # Bring the shared engine up to date first (index generation, retriever), so the view inherits them and
    # nothing is rebuilt per question.
    base.retriever()
    if hasattr(base, "facts"):
        try:
            base.facts()
        except Exception:  # noqa: BLE001 - the facts layer is optional; answers work without it
            log.exception("the facts layer could not be opened")
    view = copy.copy(base)  # shares the loaded index, retriever and store; only the settings differ
    view.settings = s
    return view


def embedding_loaded(s: Settings | None = None) -> bool:
    return start_warm_up(s).done.is_set()


def index(s: Settings | None = None):
    """The live index. Engine.index() compares the generation on disk (a cheap read) and reloads when another
    process (the CLI, another session) published a new one."""
    return _cached_engine(_index_key(s or settings())).index()


def filings(s: Settings | None = None) -> dict[str, dict]:
    try:
        return dict(index(s).filings)
    except Exception as exc:  # noqa: BLE001 - a broken index must not take the whole app down
        log.exception("loading the index failed")
        st.error(safe_inline(f"The index could not be loaded: {exc}. Re-index the filings (Library) or remove "
                             f"{(s or settings()).index_dir} to start afresh."))
        return {}


@dataclass
class OllamaInfo:
    reachable: bool
    models: list[str] = field(default_factory=list)
    message: str = ""
    model_available: bool = False


@st.cache_data(ttl=20, show_spinner=False)
def _ollama_status(url: str, model: str) -> dict:
    s = get_settings().with_overrides(ollama_url=url, llm_model=model)
    status = ollama_status(s)
    return {"reachable": status.reachable, "models": list(status.models), "message": status.message,
            "model_available": bool(getattr(status, "model_available", False))}


def ollama(s: Settings | None = None) -> OllamaInfo:
    s = s or settings()
    try:
        return OllamaInfo(**_ollama_status(s.ollama_url, s.llm_model))
    except Exception as exc:  # noqa: BLE001
        return OllamaInfo(False, [], f"Could not ask Ollama at {s.ollama_url} for its status: {exc}")


def recheck_ollama() -> None:
    _ollama_status.clear()


@st.cache_resource(show_spinner=False)
def _conversation_store(db_path: str, database_url: str) -> ConversationStore:
    # A question waits for a write at most this long; past it the chat answers anyway and ui/history.py keeps the
    # message to save later.
    if database_url:  # team mode
        return ConversationStore(database_url=database_url, write_patience=10.0)
    return ConversationStore(db_path, write_patience=10.0)


def conversations(s: Settings | None = None) -> ConversationStore:
    """The process's one store for these settings. Raises rag.conversations.StoreUnavailable (not cached, so the
    next run tries again): pages go through ui/history.py, which degrades instead."""
    s = s or settings()
    return _conversation_store(str(s.db_path), s.database_url)


def author() -> str:
    """Who writes this session's conversations: the signed-in user (Streamlit's st.user) when the app runs behind
    its login, else SHARED, the one workspace everybody shares."""
    try:
        user = st.user
        if user.get("is_logged_in"):
            return str(user.get("email") or user.get("sub") or SHARED)
    except Exception:  # noqa: BLE001 - outside a session (a script, a test) nobody is signed in
        pass
    return SHARED


# --------------------------------------------------------------------------------------------------------------
# The current conversation: in session state and in the URL (?c=<id>), so a reload reopens it.


def current_conversation_id() -> str | None:
    from_url = st.query_params.get("c")
    if valid_id(from_url):
        st.session_state[K_CONV] = from_url
        return from_url
    conv = st.session_state.get(K_CONV)
    if valid_id(conv):
        st.query_params["c"] = conv  # page switches drop query params: put it back
        return conv
    return None


def open_conversation(conversation_id: str | None) -> None:
    if conversation_id and valid_id(conversation_id):
        st.session_state[K_CONV] = conversation_id
        st.query_params["c"] = conversation_id
    else:
        st.session_state.pop(K_CONV, None)
        if "c" in st.query_params:
            del st.query_params["c"]


def notice(message: Md, kind: str = "success") -> None:
    """A message shown once on the next run (after an st.rerun). Build it with ui.safe.md(): a plain str is shown
    escaped, as text."""
    st.session_state[K_NOTICE] = (kind, plain(message))


def show_notice() -> None:
    item = st.session_state.pop(K_NOTICE, None)
    if item:
        kind, message = item
        show = {"success": st.success, "error": st.error, "warning": st.warning}.get(kind, st.info)
        show(plain(message))


# --------------------------------------------------------------------------------------------------------------
# The user's retrieval choices (the sidebar's widgets write them)


@dataclass
class Request:
    mode: str
    top_k: int
    filters: Filters
    model: str
    use_llm: bool
    generated_queries: int = 0  # extra search queries the model writes (sidebar toggle; needs Ollama)

    def to_dict(self) -> dict:
        return {"mode": self.mode, "top_k": self.top_k, "model": self.model, "use_llm": self.use_llm,
                "generated_queries": self.generated_queries,
                "filters": {"tickers": list(self.filters.tickers), "fiscal_years": list(self.filters.fiscal_years),
                            "forms": list(self.filters.forms),
                            "fiscal_periods": list(self.filters.fiscal_periods)}}


def current_request(s: Settings | None = None) -> Request:
    s = s or settings()
    mode = st.session_state.get(K_MODE) or "hybrid"
    if mode not in MODES:
        mode = "hybrid"
    top_k = int(st.session_state.get(K_TOP_K) or s.top_k)
    filters = Filters(
        tickers=list(st.session_state.get(K_TICKERS) or []),
        fiscal_years=[int(y) for y in st.session_state.get(K_YEARS) or []],
        forms=list(st.session_state.get(K_FORMS) or []),
        fiscal_periods=[str(p) for p in st.session_state.get(K_PERIODS) or []],
    )
    status = ollama(s)
    generate = bool(st.session_state.get(K_GENERATE, s.generated_queries > 0)) and status.reachable
    return Request(mode=mode, top_k=top_k, filters=filters, model=s.llm_model, use_llm=status.reachable,
                   generated_queries=(s.generated_queries or GENERATED_QUERIES) if generate else 0)


# The app's pages (set by app.py on every run): name -> st.Page, and the name of the page being shown.
PAGES: dict = {}
K_PAGE = "_current_page"
