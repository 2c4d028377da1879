"""The Ollama client: its errors with messages a user can act on, the server's status and models, and the LLM.

`make_llm` builds llama-index's `Ollama` with every setting explicit; `ollama_status` and `list_models` are fast
checks a UI can call on every rerun. Any failure of the ollama client or httpx becomes one of the LLMError
subclasses below, whose `str()` says what to do about it.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass

import httpx
from ollama import Client, ResponseError

from ..config import Settings

STATUS_TIMEOUT_S = 2.0  # ollama_status / list_models: a UI calls them on every rerun
CONNECT_TIMEOUT_S = 5.0  # connecting to Ollama; reading the answer uses settings.llm_timeout_s
ANSWER_TOKENS = 1024  # num_predict, and what the prompt budget keeps free for the answer


class LLMError(Exception):
    """The language model could not give (all of) an answer. `str(exc)` is a message for the user."""


class LLMUnavailable(LLMError):
    """Ollama is not reachable: not running, or OLLAMA_HOST points elsewhere."""


class ModelNotFound(LLMUnavailable):
    """Ollama runs but does not have the model: it needs `ollama pull <model>`."""


class LLMTimeout(LLMError):
    """Ollama did not answer within the request timeout."""


class StreamBroken(LLMError):
    """The stream stopped part-way, after some text arrived (the answer keeps that text and is marked cut)."""


def _not_running_message(settings: Settings) -> str:
    return (
        f"Ollama is not reachable at {settings.ollama_url}. Start it with `ollama serve` (or open the Ollama app), "
        f"or set OLLAMA_HOST to the address of a running Ollama server (now {settings.ollama_url}). "
        "Until then answers are extractive: passages quoted from the filings."
    )


def _model_missing_message(settings: Settings, model: str, installed: list[str] | None = None) -> str:
    msg = f"Ollama at {settings.ollama_url} does not have the model '{model}'. Pull it with `ollama pull {model}`"
    if installed:
        msg += f", or pick an installed model ({', '.join(installed[:8])})"
    return msg + ". Until then answers are extractive."


def _timeout_message(settings: Settings, model: str) -> str:
    return (
        f"Ollama at {settings.ollama_url} did not answer within {settings.llm_timeout_s:g} s (model '{model}' may "
        "still be loading, or the machine is busy). On a CPU most of that wait is the model reading the prompt: "
        f"a smaller RAG_LLM_PROMPT_TOKENS (now {settings.llm_prompt_tokens:,} tokens) shortens it. Or raise the "
        "timeout with RAG_LLM_TIMEOUT."
    )


def translate_error(exc: BaseException, settings: Settings, model: str, got_text: bool) -> LLMError:
    """Any exception from the ollama client / httpx -> one of ours, with a message a user can act on."""
    if isinstance(exc, LLMError):
        return exc
    if isinstance(exc, ResponseError):
        text = str(exc.error or "")
        if exc.status_code == 404 or ("not found" in text.lower() and "model" in text.lower()):
            return ModelNotFound(_model_missing_message(settings, model))
        return LLMError(f"Ollama answered with an error: {text} (HTTP {exc.status_code}).")
    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout, ConnectionError)):
        return LLMUnavailable(_not_running_message(settings))
    if isinstance(exc, httpx.TimeoutException):
        if got_text:
            return StreamBroken(
                f"Ollama stopped sending for {settings.llm_timeout_s:g} s mid-answer; the answer is cut off."
            )
        return LLMTimeout(_timeout_message(settings, model))
    if isinstance(exc, (httpx.TransportError, httpx.StreamError, json.JSONDecodeError)):
        if got_text:
            return StreamBroken(f"The connection to Ollama broke mid-answer ({type(exc).__name__}: {exc}).")
        return LLMError(f"Ollama at {settings.ollama_url} closed the connection without an answer ({exc}).")
    return LLMError(f"Unexpected error from the Ollama client: {type(exc).__name__}: {exc}")


@dataclass
class OllamaStatus:
    """What `ollama_status` found; `message` says it in words for the UI."""

    reachable: bool
    models: list[str]
    message: str
    model_available: bool = False  # settings.llm_model is among `models`


def _status_client(settings: Settings) -> Client:
    return Client(host=settings.ollama_url, timeout=httpx.Timeout(STATUS_TIMEOUT_S))


def list_models(settings: Settings) -> list[str]:
    """Installed models (GET /api/tags), e.g. ['llama3.1:8b', 'qwen2.5:7b']. Raises LLMUnavailable / LLMError."""
    try:
        with _status_client(settings) as client:
            listing = client.list()
    except httpx.TimeoutException as exc:
        if isinstance(exc, httpx.ConnectTimeout):
            raise LLMUnavailable(_not_running_message(settings)) from exc
        raise LLMTimeout(
            f"Ollama at {settings.ollama_url} accepted the connection but did not answer within "
            f"{STATUS_TIMEOUT_S:g} s: it may be stuck or overloaded. Restart it (`ollama serve`) or set OLLAMA_HOST "
            "to a server that answers. Until then answers are extractive: passages quoted from the filings."
        ) from exc
    except Exception as exc:  # noqa: BLE001 - every failure becomes a user message
        raise translate_error(exc, settings, settings.llm_model, False) from exc
    names = []
    for m in listing.models or []:
        name = getattr(m, "model", None) or (m.get("name") if isinstance(m, dict) else None)
        if name:
            names.append(str(name))
    return names


def _model_names_match(wanted: str, installed: str) -> bool:
    def norm(name: str) -> str:
        name = name.strip().lower()
        return name if ":" in name else name + ":latest"

    return norm(wanted) == norm(installed)


def ollama_status(settings: Settings) -> OllamaStatus:
    """Is Ollama reachable, which models does it have, is the configured model one of them. Fast (short timeout)."""
    try:
        models = list_models(settings)
    except LLMError as exc:
        return OllamaStatus(False, [], str(exc))
    model = settings.llm_model
    if any(_model_names_match(model, m) for m in models):
        return OllamaStatus(True, models, f"Ollama is running at {settings.ollama_url} with model '{model}'.", True)
    return OllamaStatus(True, models, _model_missing_message(settings, model, models), False)


SHOW_CACHE_S = 300.0  # how long a model's context length, once read, is trusted
_shown: dict[tuple[str, str], tuple[float, int | None]] = {}
_shown_lock = threading.Lock()


def model_context_length(settings: Settings) -> int | None:
    """The model's own context length, from Ollama's /api/show (model_info "<arch>.context_length"), or None when
    the server does not say (or does not answer within STATUS_TIMEOUT_S). Read once per server and model every
    SHOW_CACHE_S: the prompt budget asks it before every answer."""
    key = (settings.ollama_url, settings.llm_model)
    now = time.monotonic()
    with _shown_lock:
        cached = _shown.get(key)
    if cached is not None and now - cached[0] < SHOW_CACHE_S:
        return cached[1]
    length = None
    try:
        with _status_client(settings) as client:
            info = client.show(settings.llm_model).modelinfo or {}
        lengths = [int(v) for k, v in info.items() if str(k).endswith(".context_length") and str(v).isdigit()]
        length = lengths[0] if lengths else None
    except Exception:  # noqa: BLE001 - a hint for the budget: without it RAG_LLM_CONTEXT bounds the prompt
        length = None
    with _shown_lock:
        _shown[key] = (now, length)
    return length


def make_llm(settings: Settings, *, thinking: bool | None = False):
    """llama-index's Ollama with everything set explicitly: context window (no /api/show probe, no full-context
    num_ctx), request timeout from settings, a short connect timeout, thinking off, low temperature."""
    from llama_index.llms.ollama import Ollama

    timeout = float(settings.llm_timeout_s)
    client = Client(
        host=settings.ollama_url, timeout=httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT_S))
    )
    return Ollama(
        model=settings.llm_model,
        base_url=settings.ollama_url,
        context_window=int(settings.llm_context_window),
        request_timeout=timeout,
        temperature=0.1,
        thinking=thinking,
        additional_kwargs={"num_predict": answer_tokens(settings)},
        client=client,
    )


def answer_tokens(settings: Settings) -> int:
    """The most tokens the model may write (num_predict), which the prompt keeps free in the context window."""
    return max(256, min(ANSWER_TOKENS, int(settings.llm_context_window) // 4))
