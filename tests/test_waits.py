"""Every wait is visible and bounded: a model that accepts the request and says nothing (the stream reports the
wait, and stop() answers from the filings), a model that drips pieces just inside the timeout (cut at the
whole-answer deadline, keeping what arrived), a server that never answers (the CLI falls back in seconds), and a
second writer waiting for the index lock (it says for whom, and since when). A server that streams without end
is bounded in memory and in length, and the deadline still ends an answer on time."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

from rag.__main__ import main
from rag.answer import answer, answer_stream
from rag.answer.llm import answer_tokens
from rag.config import get_settings
from rag.index import IndexStore
from rag.index.writer_lock import WriterLock
from tests.answer_samples import retrieval, settings_for
from tests.fake_ollama import started_fake_ollama
from tests.filings import ACME, BOLT, write_filing

fake_ollama = pytest.fixture(started_fake_ollama, name="fake_ollama")
ROOT = Path(__file__).resolve().parents[1]

QUESTION = "What were total net sales in 2024?"
DRIP_REPLY = ("Total net sales were $391,035 million in fiscal 2024 [1], up 2% from $383,285 million in 2023 [1]. "
              "Services grew 13% [2].")


# ------------------------------------------------------------------------------------------- the answer stream


def test_a_silent_model_is_reported_as_waiting_and_stop_answers_from_the_filings(fake_ollama):
    fake_ollama.fail = "silent"  # takes the request, then sends nothing
    stream = answer_stream(QUESTION, retrieval("q"), settings_for(fake_ollama, llm_timeout_s=60))
    assert stream.waiting is None  # nothing asked yet
    started = time.monotonic()
    seen, stopped_at = [], None
    for piece in stream:
        wait = stream.waiting
        if piece == "" and wait is not None:
            seen.append((time.monotonic() - started, wait.label()))
            if stopped_at is None and wait.seconds >= 1.2:
                stream.stop()
                stopped_at = time.monotonic()
    res = stream.result
    assert seen and seen[0][0] < 1.0, "the wait is reported within the first second"
    assert seen[0][1] == "waiting for test-model, 0 s"
    assert any(label == "waiting for test-model, 1 s" for _, label in seen)
    assert time.monotonic() - stopped_at < 1.0  # the stop is honoured at once, not after the 60 s timeout
    assert stream.waiting is None
    assert res.extractive and not res.cut and res.model is None
    assert res.warnings[0].startswith("You stopped waiting for test-model after 1 s")
    assert res.answer.startswith("Extractive answer (the model was stopped)")
    assert "391,035" in res.answer and res.citations
    assert len(fake_ollama.chat_requests()) == 1


def test_a_dripping_model_is_cut_at_the_deadline_keeping_what_arrived(fake_ollama):
    fake_ollama.fail = "drip"
    fake_ollama.reply, fake_ollama.piece_size, fake_ollama.drip_s = DRIP_REPLY, 8, 0.4
    # Each piece comes well inside the 1 s timeout, so only the whole-answer deadline can end the answer early.
    settings = settings_for(fake_ollama, llm_timeout_s=1.0, llm_deadline_s=2.0)
    started = time.monotonic()
    res = answer(QUESTION, retrieval("q"), settings)
    took = time.monotonic() - started
    assert 2.0 <= took < 2.8, took
    assert res.cut and res.cut_reason == "deadline" and not res.extractive and res.model == "test-model"
    text, mark = res.answer.split("\n\n*[", 1)
    assert 8 * 3 <= len(text) < len(DRIP_REPLY) and DRIP_REPLY.startswith(text)  # what arrived, no more
    assert mark.startswith("Answer cut off at the 2 s limit for a whole answer (RAG_LLM_DEADLINE)")
    assert any("RAG_LLM_DEADLINE" in w and "2 s" in w for w in res.warnings)
    assert res.to_dict()["cut_reason"] == "deadline" and res.to_dict()["cut"] is True


def test_stop_after_text_arrived_keeps_it_and_marks_the_answer_stopped(fake_ollama):
    fake_ollama.fail = "drip"
    fake_ollama.reply, fake_ollama.piece_size, fake_ollama.drip_s = DRIP_REPLY, 8, 0.3
    stream = answer_stream(QUESTION, retrieval("q"), settings_for(fake_ollama, llm_timeout_s=5.0))
    texts = []
    for piece in stream:
        if piece:
            texts.append(piece)
            if len(texts) == 3:
                stream.stop()
    res = stream.result
    assert res.cut and res.cut_reason == "stopped" and not res.extractive
    assert res.answer.startswith(DRIP_REPLY[:24]) and DRIP_REPLY not in res.answer
    assert res.answer.endswith("*[Answer stopped before the end; the text above is what arrived.]*")
    assert any(w.startswith("You stopped the answer after") for w in res.warnings)


def test_a_model_silent_until_the_deadline_gives_the_extractive_answer(fake_ollama):
    fake_ollama.fail = "silent"
    started = time.monotonic()
    res = answer(QUESTION, retrieval("q"), settings_for(fake_ollama, llm_timeout_s=60, llm_deadline_s=1.0))
    assert time.monotonic() - started < 2.0
    assert res.extractive and not res.cut
    assert "sent no answer within the 1 s allowed for a whole answer (RAG_LLM_DEADLINE)" in res.warnings[0]


ENDLESS = "Total net sales were $391,035 million in fiscal 2024 [1], up 2% from fiscal 2023 [1]. "


def _endless(fake, piece_size: int = 64, gap_s: float = 0.0) -> None:
    fake.fail, fake.reply, fake.piece_size, fake.endless_gap_s = "endless", ENDLESS * 4, piece_size, gap_s


def _answer_traced(settings):
    """(the answer, seconds it took, peak bytes Python allocated meanwhile)."""
    tracemalloc.start()
    try:
        started = time.monotonic()
        res = answer(QUESTION, retrieval("q"), settings)
        took = time.monotonic() - started
        return res, took, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_model_that_never_stops_is_cut_at_the_length_cap_in_bounded_memory(fake_ollama, monkeypatch):
    _endless(fake_ollama)  # no done line, ever, whatever num_predict asks
    monkeypatch.setenv("RAG_LLM_MAX_CHARS", "6000")
    # A deadline far off, so only the cap can end it however loaded the machine is (its speed is a benchmark's).
    settings = settings_for(fake_ollama, llm_deadline_s=60.0)
    res, took, peak = _answer_traced(settings)
    assert took < 60.0, took
    assert res.cut and res.cut_reason == "length" and not res.extractive
    text = res.answer.split("\n\n*[", 1)[0]
    assert 6000 - 200 <= len(text) <= 6000  # the cap's characters, not a piece more
    assert text.startswith(ENDLESS.strip()) and "[1]" in text
    assert any("6,000 characters allowed for one answer (RAG_LLM_MAX_CHARS)" in w for w in res.warnings)
    # Each queued response carrying the whole text so far grows with the square of the answer (6 MB in 4 s here).
    assert peak < 2_000_000, peak
    assert fake_ollama.chat_requests()[0]["options"]["num_predict"] == answer_tokens(settings)


def test_hidden_reasoning_counts_toward_the_length_cap(fake_ollama):
    fake_ollama.thinking = "Let me think about the table once more. " * 500  # 20,500 characters, none shown
    res = answer(QUESTION, retrieval("q"), settings_for(fake_ollama, llm_max_chars=3000))
    assert res.extractive and "391,035" in res.answer  # answered from the filings instead
    assert "only its hidden reasoning" in res.warnings[0]
    assert "think" not in res.answer.lower()


def test_the_deadline_ends_a_model_that_never_stops_on_time_in_bounded_memory(fake_ollama):
    _endless(fake_ollama, gap_s=0.01)  # slower than the length cap: only the deadline can end it
    settings = settings_for(fake_ollama, llm_deadline_s=1.5, llm_max_chars=1_000_000)
    res, took, peak = _answer_traced(settings)
    # Ended by the deadline, not by the stream: the slack is for a loaded machine (memory tracing slows the
    # per-piece checks), far below what an endless stream would take.
    assert 1.5 <= took < 4.0, took
    assert res.cut and res.cut_reason == "deadline"
    assert 1000 < len(res.answer) < 20_000
    assert peak < 2_000_000, peak


def test_the_deadline_setting_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("RAG_LLM_DEADLINE", "45")
    assert get_settings().llm_deadline_s == 45.0
    monkeypatch.setenv("RAG_LLM_DEADLINE", "soon")
    with pytest.raises(ValueError, match="RAG_LLM_DEADLINE must be a number"):
        get_settings()


# ------------------------------------------------------------------------------------------------ the CLI


@pytest.fixture(scope="module")
def storage(tmp_path_factory):
    root = tmp_path_factory.mktemp("waits")
    store = IndexStore(get_settings(storage_dir=root / "storage", data_dir=root / "data"))
    paths = [write_filing(root / "in", "acme.htm", **ACME), write_filing(root / "in", "bolt.htm", **BOLT)]
    assert not store.add(paths).errors
    return {"storage": str(root / "storage"), "acme": str(paths[0])}


CLI_QUESTION = "What was ACME's revenue in fiscal 2024?"


def _ask(capsys, storage, *extra):
    started = time.monotonic()
    code = main(["ask", CLI_QUESTION, "--storage", storage["storage"], *extra])
    out, err = capsys.readouterr()
    return code, out, err, time.monotonic() - started


def _use(monkeypatch, fake, **env):
    monkeypatch.setenv("OLLAMA_HOST", fake.url)
    monkeypatch.setenv("RAG_LLM_MODEL", "test-model")
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def test_cli_against_a_server_that_never_answers_falls_back_in_seconds(storage, capsys, monkeypatch, fake_ollama):
    _ask(capsys, storage, "--no-llm")  # the embedding model loaded, so the time below is the wait's own
    fake_ollama.fail = "hang"  # accepts every connection, /api/tags included, and never answers
    _use(monkeypatch, fake_ollama)  # RAG_LLM_TIMEOUT stays at its 120 s
    code, out, err, took = _ask(capsys, storage)
    assert code == 0, err
    assert took < 8, took
    assert "(Ollama unavailable)" in out.splitlines()[0]  # the extractive answer's lead says why
    assert "did not answer within 2 s" in err and "OLLAMA_HOST" in err
    assert fake_ollama.chat_requests() == []  # no answer was asked of a server that does not answer its status


def test_cli_says_it_waits_for_the_model_and_stops_at_the_deadline(storage, capsys, monkeypatch, fake_ollama):
    fake_ollama.fail = "silent"
    _use(monkeypatch, fake_ollama, RAG_LLM_DEADLINE="2.5")
    code, out, err, took = _ask(capsys, storage)
    assert code == 0, err
    assert took < 8
    assert re.search(r"^waiting for test-model, 1 s \(Ctrl-C answers from the filings\)$", err, re.M), err
    assert "sent no answer within the 2.5 s allowed" in err
    # The exact XBRL figure leads (it was shown before the model was asked); the line after it says why no model.
    lines = [line for line in out.splitlines() if line.strip()]
    assert "$391,035 million [1]" in lines[0] and "(the model was too slow)" in lines[1]


def test_cli_json_labels_an_answer_cut_at_the_deadline(storage, capsys, monkeypatch, fake_ollama):
    fake_ollama.fail = "drip"
    fake_ollama.reply, fake_ollama.piece_size, fake_ollama.drip_s = "ACME's revenue was $1,234 million [1].", 4, 0.5
    _use(monkeypatch, fake_ollama, RAG_LLM_DEADLINE="1.2", RAG_LLM_TIMEOUT="1")
    code, out, err, _ = _ask(capsys, storage, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["cut"] is True and result["cut_reason"] == "deadline"
    # The exact XBRL figure first, then what the model sent before the deadline.
    lead, _, rest = result["answer"].partition("\n\n")
    assert "$391,035 million [1]" in lead
    assert rest.startswith("ACME's") and "RAG_LLM_DEADLINE" in rest


def test_cli_against_a_model_that_never_stops_ends_at_the_cap(storage, capsys, monkeypatch, fake_ollama):
    _ask(capsys, storage, "--no-llm")  # the embedding model loaded, so the time below is the answer's own
    _endless(fake_ollama)
    _use(monkeypatch, fake_ollama, RAG_LLM_DEADLINE="3", RAG_LLM_MAX_CHARS="5000")
    code, out, err, took = _ask(capsys, storage)
    assert code == 0, err
    assert took < 8, took  # retrieval included; the model's part ends well inside its 3 s
    answer_text = out.split("\n\nSources:", 1)[0]
    assert 4000 < len(answer_text) < 5400
    # The cap ended the answer, not the deadline (which would be named instead).
    assert "5,000 characters allowed for one answer (RAG_LLM_MAX_CHARS)" in err and "RAG_LLM_DEADLINE" not in err


# ------------------------------------------------------------------------------------------ the writer lock


HOLD = """
import sys, time
from pathlib import Path
from rag.index.writer_lock import WriterLock
lock = WriterLock(Path(sys.argv[1]))
lock.acquire(5)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
lock.release()
"""


def test_a_second_writer_says_whom_it_waits_for_and_since_when(storage, capsys):
    index_dir = get_settings(storage_dir=storage["storage"]).index_dir
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(index_dir), "2.5"], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        code = main(["index", storage["acme"], "--storage", storage["storage"]])
        err = capsys.readouterr().err
    finally:
        holder.wait(timeout=30)
    assert code == 0, err
    lock_path = re.escape(str(index_dir / ".writer.lock"))
    waiting = re.search(rf"^waiting for another indexing run \(pid {holder.pid}, started (\d\d:\d\d:\d\d)\) to "
                        rf"release {lock_path} since (\d\d:\d\d:\d\d)$", err, re.M)
    assert waiting, err
    assert waiting.group(1) <= waiting.group(2)
    assert re.search(rf"^got {lock_path} after [1-3] s of waiting; going on$", err, re.M), err
    assert err.index("waiting for") < err.index("unchanged")  # said before the work, not after
    assert not (index_dir / ".writer.lock.holder").exists()  # the note goes with the lock


def test_a_lock_held_without_a_note_is_still_explained(tmp_path):
    messages = []
    with FileLock(str(tmp_path / ".writer.lock")):  # a writer from before the note existed
        lock = WriterLock(tmp_path, on_wait=messages.append, report_every_s=0.3)
        with pytest.raises(Timeout):
            lock.acquire(0.8)
    assert messages[0].startswith("waiting for another writer (it left no note of its pid) to release ")
    assert any(m.startswith("still waiting for another writer") for m in messages)
    assert messages[-1].startswith("gave up after 1 s")
