"""Reading the model's streamed reply: ModelFeed reads one streaming chat request in a thread into a short queue
(so the answer can wait with a timeout, honour stop() and end at its deadline), Progress records what the requests
brought, ThinkFilter keeps hidden reasoning (<think>...</think>) out of the text, and RefusalHold holds the text
back while it is no more than the not-found sentence. rag.answer.stream drives them.
"""

from __future__ import annotations

import contextlib
import queue
import re
import threading
from dataclasses import dataclass

from ollama import ResponseError

from ..words import split_sentences
from .refusals import not_found_sentences, states_content


@dataclass(frozen=True)
class Piece:
    """What the answer reads of one streamed response: its new text, whether it is the done line, and why."""

    delta: str
    hidden: bool = False  # it carried hidden reasoning (a "thinking" field)
    done: bool = False
    done_reason: str | None = None


class ModelFeed:
    """One streaming chat request, read in a thread into a queue. The answer then waits for each piece with a
    short timeout, so it can say how long it has waited, honour stop() and end at the deadline, where reading
    the socket itself would block until the model spoke or the timeout passed.

    Memory stays bounded whatever the server sends: only each response's new text crosses the queue (a
    llama-index ChatResponse carries the whole text so far, so queued responses held every prefix of the answer);
    the queue is short, so a server faster than the answer's reader waits for it; and reading ends once
    `max_chars` characters (hidden reasoning included) have come, with ("capped", None)."""

    QUEUE_PIECES = 256

    def __init__(self, llm, messages, max_chars: int):
        self._llm = llm
        self._max_chars = max_chars
        self._queue: queue.Queue = queue.Queue(maxsize=self.QUEUE_PIECES)
        self._cancelled = threading.Event()
        self._thread = threading.Thread(target=self._read, args=(messages,), name="ollama-answer", daemon=True)
        self._thread.start()

    def _read(self, messages) -> None:
        try:
            responses = self._llm.stream_chat(messages)
            try:
                self._pieces(responses)
            finally:
                close = getattr(responses, "close", None)
                if close is not None:
                    close()
        except Exception as exc:  # noqa: BLE001 - handed to the answer, which says what went wrong
            self._put(("error", exc))
        finally:
            with contextlib.suppress(Exception):
                self._llm.client.close()

    def _pieces(self, responses) -> None:
        received = 0
        for response in responses:
            if self._cancelled.is_set():
                return
            raw = response.raw if isinstance(response.raw, dict) else {}
            message = raw.get("message") or {}
            hidden = (message.get("thinking") if hasattr(message, "get") else None) or ""
            delta = response.delta or ""
            received += len(delta) + len(hidden)
            over = received - self._max_chars
            if over > 0:
                delta = delta[: max(0, len(delta) - over)]
            piece = Piece(delta, bool(hidden), bool(raw.get("done")), raw.get("done_reason"))
            del response, raw, message  # the text so far goes with them
            if not self._put(("piece", piece)):
                return
            if over > 0:
                self._put(("capped", None))
                return
        self._put(("end", None))

    def _put(self, item) -> bool:
        """Queue an item, waiting while the queue is full; False once the answer no longer wants any."""
        while not self._cancelled.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def next(self, timeout: float):
        """("piece", Piece), ("capped", None), ("end", None) or ("error", exception); None when nothing came in
        time."""
        try:
            return self._queue.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None

    def cancel(self) -> None:
        """No more pieces are wanted: the thread stops at its next one, or when closing the client wakes it."""
        if self._cancelled.is_set():
            return
        self._cancelled.set()
        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                self._llm.client.close()


@dataclass
class Progress:
    """What one answer's requests to the model have brought so far."""

    got_text: bool = False  # visible answer text (not only hidden reasoning)
    raw_seen: bool = False  # any content at all
    done: bool = False  # the model's done line arrived
    done_reason: str | None = None
    error: Exception | None = None
    halted: str | None = None  # "stopped" (stop()) or "deadline": the answer stopped reading the model
    capped: bool = False  # the model sent more than settings.llm_max_chars characters
    seconds: float = 0.0  # how long the model was asked


class ThinkFilter:
    """Drops <think>...</think> (and <thinking>...</thinking>) from a stream of pieces, across piece borders."""

    OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)

    def __init__(self):
        self.buf = ""
        self.inside: str | None = None
        self.saw_orphan_close = False

    def feed(self, piece: str) -> str:
        self.buf += piece
        out = []
        while self.buf:
            if self.inside:
                close = re.search(rf"</{self.inside}>", self.buf, re.IGNORECASE)
                if not close:
                    self.buf = self.buf[-(len(self.inside) + 3):]  # keep a possible partial closing tag
                    break
                self.buf = self.buf[close.end():].lstrip("\n")
                self.inside = None
                continue
            m = self.OPEN.search(self.buf)
            if m:
                out.append(self.buf[: m.start()])
                self.inside = m.group(1).lower()
                self.buf = self.buf[m.end():]
                continue
            orphan = re.search(r"</(?:think|thinking|reasoning)>", self.buf, re.IGNORECASE)
            if orphan:
                self.saw_orphan_close = True
                out.append(self.buf[: orphan.start()])
                self.buf = self.buf[orphan.end():]
                continue
            lt = self.buf.rfind("<")
            if lt != -1 and len(self.buf) - lt < 13 and ">" not in self.buf[lt:]:
                out.append(self.buf[:lt])
                self.buf = self.buf[lt:]
            else:
                out.append(self.buf)
                self.buf = ""
            break
        return "".join(out)

    def flush(self) -> str:
        rest = "" if self.inside else self.buf
        self.buf = ""
        return rest


class RefusalHold:
    """The model's text is held back until it says more than that the sources do not hold the answer: a model that
    only refuses must not be seen to contradict an exact figure shown above it, nor stand in for the passages the
    extractive answer quotes instead (rag.answer.stream, _end_llm). Once a sentence of it that is no not-found
    sentence cites a source or states a figure, or one complete sentence is no not-found sentence (or it runs past
    HOLD_CHARS), it streams as it comes: an answer is held back for its first words only."""

    HOLD_CHARS = 600

    def __init__(self):
        self.released = False
        self.buf = ""

    def feed(self, piece: str) -> str:
        if self.released:
            return piece
        self.buf += piece
        sentences = split_sentences(" ".join(self.buf.split()))
        complete = sentences[:-1]
        said, _rest = not_found_sentences("\n".join(complete))
        content = any(states_content(s) and not not_found_sentences(s)[0] for s in sentences)
        if content or len(self.buf) > self.HOLD_CHARS or len(said) < len(complete):
            self.released = True
            out, self.buf = self.buf, ""
            return out
        return ""

    def flush(self) -> str:
        out, self.buf = self.buf, ""
        return out


def rejects_think_field(exc: Exception | None) -> bool:
    """An Ollama too old for the think field answers 400 "... does not support thinking"."""
    return isinstance(exc, ResponseError) and exc.status_code == 400 and "think" in str(exc.error).lower()
