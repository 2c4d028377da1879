"""A small Ollama look-alike on 127.0.0.1 for tests: speaks the API as the `ollama` python client uses it.

    with FakeOllama() as fake:                    # or the `fake_ollama` fixture of the tests/test_answer*.py files
        fake.url                                  # "http://127.0.0.1:<port>"
        fake.reply = "Revenue was $391,035 million [1]."
        fake.replies = ["first", "second"]        # scripted: each /api/chat takes the next (then `reply` again)
        fake.fail = "cut"                         # None | "missing" | "cut" | "slow" | "error" | "no_done" | ...
        fake.requests                             # [{"method", "path", "json"}] in order
        fake.chat_requests()                      # the POST /api/chat bodies

Routes:
    GET  /api/tags      {"models": [...]} from `fake.models`
    GET  /api/version   {"version": "0.11.0"}
    POST /api/show      model details (404 {"error": "model 'x' not found"} when the model is not in `models`)
    POST /api/chat      NDJSON stream (chunked) of {"message": {"role": "assistant", "content": piece}, "done": false}
                        lines, then a done line; or one JSON object when the body says "stream": false.

Failures (`fake.fail`):
    "missing"   /api/chat and /api/show answer 404 {"error": "model '<name>' not found"}
    "cut"       the stream closes the connection after `cut_after` content lines, mid chunked body
    "no_done"   the stream ends cleanly but without the done line
    "slow"      /api/chat waits `slow_s` seconds before the first byte
    "error"     /api/chat answers 500 {"error": "something broke"}
    "think400"  /api/chat answers 400 "does not support thinking" when the body has a "think" field
    "silent"    /api/chat reads the request and then sends nothing at all (no headers) until the server stops
    "hang"      every route, /api/tags included, reads the request and sends nothing until the server stops
    "drip"      /api/chat streams its pieces `drip_s` seconds apart
    "endless"   /api/chat streams the reply's pieces over and over, never a done line, whatever num_predict says,
                until the client hangs up or the server stops (a model or proxy that never stops writing),
                `endless_gap_s` apart (0: as fast as it can)
`fake.done_reason = "length"` ends the stream as a model that hit num_predict does.
Thinking: `fake.thinking = "..."` sends that text first in "thinking" fields (content ""); a `reply` may itself
contain <think>...</think>.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOllama:
    def __init__(self, models: list[str] | None = None):
        self.models: list[str] = list(models) if models is not None else ["test-model:latest"]
        self.reply: str = "The filings report total net sales of $391,035 million for fiscal 2024 [1]."
        self.replies: list[str] = []  # scripted replies, one per /api/chat request in order; then `reply`
        self.piece_size: int = 4  # characters per streamed content line: splits [n] and <think> across lines
        self.thinking: str | None = None
        self.fail: str | None = None
        self.cut_after: int = 5
        self.slow_s: float = 5.0
        self.drip_s: float = 1.0
        self.endless_gap_s: float = 0.0
        self.done_reason: str = "stop"
        self.requests: list[dict] = []
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle
    def start(self) -> FakeOllama:
        fake = self

        class Handler(_Handler):
            owner = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # ---- what tests look at
    def chat_requests(self) -> list[dict]:
        return [r["json"] for r in self.requests if r["path"] == "/api/chat"]

    def has_model(self, name: str) -> bool:
        def norm(n: str) -> str:
            return n if ":" in n else n + ":latest"

        return norm(name or "") in {norm(m) for m in self.models}

    def next_reply(self) -> str:
        """The reply of one /api/chat request: the next scripted one, else `reply`."""
        return self.replies.pop(0) if self.replies else (self.reply or "")

    def pieces(self, text: str | None = None) -> list[str]:
        text = (self.reply or "") if text is None else text
        size = max(1, self.piece_size)
        return [text[i : i + size] for i in range(0, len(text), size)]


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def started_fake_ollama():
    """A started FakeOllama (model 'test-model:latest'), stopped after the test. A test module makes it its
    fixture with `fake_ollama = pytest.fixture(started_fake_ollama, name="fake_ollama")`."""
    with FakeOllama() as fake:
        yield fake


class _Handler(BaseHTTPRequestHandler):
    owner: FakeOllama
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet
        pass

    # ---- helpers
    def _json(self, status: int, obj) -> None:
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _body(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return {"_raw": raw.decode("utf-8", "replace")}

    def _record(self, body) -> None:
        self.owner.requests.append({"method": self.command, "path": self.path, "json": body})

    def _chunk(self, obj) -> None:
        data = (json.dumps(obj) + "\n").encode()
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    # ---- routes
    def _hang(self) -> None:
        """Keep the connection open and say nothing until the server stops."""
        self.owner._stop.wait()
        self.close_connection = True

    def do_GET(self) -> None:
        self._record(None)
        if self.owner.fail == "hang":
            self._hang()
            return
        if self.path == "/api/tags":
            models = [
                {"name": m, "model": m, "modified_at": "2025-01-01T00:00:00Z", "size": 4_000_000_000,
                 "digest": "0" * 64, "details": {"format": "gguf", "family": "llama", "parameter_size": "8B",
                                                 "quantization_level": "Q4_K_M"}}
                for m in self.owner.models
            ]
            self._json(200, {"models": models})
        elif self.path == "/api/version":
            self._json(200, {"version": "0.11.0"})
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self) -> None:
        body = self._body()
        self._record(body)
        fake = self.owner
        model = body.get("model", "")
        if fake.fail == "hang" or (fake.fail == "silent" and self.path == "/api/chat"):
            self._hang()
            return
        if self.path == "/api/show":
            if fake.fail == "missing" or not fake.has_model(model):
                self._json(404, {"error": f"model '{model}' not found"})
                return
            self._json(200, {"modelfile": "", "parameters": "", "template": "{{ .Prompt }}",
                             "details": {"format": "gguf", "family": "llama"},
                             "model_info": {"llama.context_length": 8192}, "capabilities": ["completion"]})
            return
        if self.path != "/api/chat":
            self._json(404, {"error": "not found"})
            return
        if fake.fail == "missing" or not fake.has_model(model):
            self._json(404, {"error": f"model '{model}' not found"})
            return
        if fake.fail == "slow":
            fake._stop.wait(fake.slow_s)
            if fake._stop.is_set():
                return
        if fake.fail == "think400" and "think" in body:
            self._json(400, {"error": f'"{model}" does not support thinking'})
            return
        if fake.fail == "error":
            self._json(500, {"error": "something broke"})
            return
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        reply = fake.next_reply()
        if body.get("stream") is False:
            self._json(200, {"model": model, "created_at": created,
                             "message": {"role": "assistant", "content": reply,
                                         **({"thinking": fake.thinking} if fake.thinking else {})},
                             "done": True, "done_reason": fake.done_reason, "eval_count": 10,
                             "prompt_eval_count": 100})
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            if fake.thinking:
                for i in range(0, len(fake.thinking), 8):
                    self._chunk({"model": model, "created_at": created, "done": False,
                                 "message": {"role": "assistant", "content": "",
                                             "thinking": fake.thinking[i : i + 8]}})
            if fake.fail == "endless":
                self._endless(model, created)
                return
            for n, piece in enumerate(fake.pieces(reply)):
                if fake.fail == "cut" and n >= fake.cut_after:
                    # Close mid-body: no terminating zero-length chunk.
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if fake.fail == "drip" and n and fake._stop.wait(fake.drip_s):
                    return
                self._chunk({"model": model, "created_at": created, "done": False,
                             "message": {"role": "assistant", "content": piece}})
            if fake.fail != "no_done":
                self._chunk({"model": model, "created_at": created, "done": True, "done_reason": fake.done_reason,
                             "message": {"role": "assistant", "content": ""}, "total_duration": 1000,
                             "eval_count": 10, "prompt_eval_count": 100})
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _endless(self, model: str, created: str) -> None:
        """Content lines without end: the reply's pieces, round and round, until the client or the server quits."""
        fake = self.owner
        pieces = fake.pieces() or ["x"]
        n = 0
        while not fake._stop.is_set():
            if n and fake.endless_gap_s and fake._stop.wait(fake.endless_gap_s):
                return
            self._chunk({"model": model, "created_at": created, "done": False,
                         "message": {"role": "assistant", "content": pieces[n % len(pieces)]}})
            n += 1

