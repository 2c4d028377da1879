"""`python -m rag bench load [PATH...] --sessions 20`: the app under concurrent sessions, measured from outside.

The real app (`python -m ui.serve`, as tests/app_server.py starts it) runs on a private copy of an index: PATHs
indexed into a temporary folder, or else the --storage index copied without its conversations. One headless
Chromium (Playwright, Debian's /usr/bin/chromium when present) opens `--sessions` browser contexts; they ask at
the same moment, each `--per-session` questions in turn, within `--time-limit` seconds. Then the app's
conversation store is read back: every question must be stored exactly once with exactly one answer after it.

Printed: each answer's latency as the user sees it (sent to drawn), p50/p95/max, the lost and duplicated
messages, the engine's own time per answer (from each stored result's timings), and the server's CPU use over
the run, which says what bounds the latency (cores busy ~= cores available: the CPU; far below: a wait).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from datetime import datetime
from pathlib import Path

import numpy as np

from .config import Settings

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
# Chromium's command line. The last three flags: every session is a page in front of its user, so none may have its
# timers slowed as a background tab.
CHROMIUM_ARGS = shlex.split(
    "--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update "
    "--no-first-run --disable-dev-shm-usage --disable-background-timer-throttling --disable-renderer-backgrounding "
    "--disable-backgrounding-occluded-windows")
BROWSER_NICENESS = 10
WARM_LINE = "engine warm-up finished"  # what ui/core.py logs once the model, index and fact views are loaded
CHAT_INPUT = '[data-testid="stChatInput"] textarea'
MESSAGE = '[data-testid="stChatMessage"]'
TEMPLATES = ("What were {ticker}'s total revenues in fiscal {fy}?", "What are {ticker}'s main risk factors?",
             "How did {ticker}'s revenue change from the prior year?", "What does {ticker} do?")


def bench_load(paths: list[str], settings: Settings, *, sessions: int = 20, per_session: int = 1,
               time_limit: float = 600.0, use_llm: bool = False) -> int:
    try:
        from playwright.async_api import async_playwright  # noqa: F401 - a dev dependency, checked up front
    except ImportError:
        print("the load benchmark drives a browser: bash scripts/setup.sh --dev installs its tools into .venv "
              "(or pip install -r requirements-dev.txt into the Python that runs this)")
        return 2
    with tempfile.TemporaryDirectory(prefix="rag-bench-load-") as tmp:
        root = Path(tmp)
        storage = _prepare_index(paths, settings, root)
        if storage is None:
            return 1
        questions = _questions(settings.with_overrides(storage_dir=storage), sessions, per_session)
        env = {**os.environ, "RAG_STORAGE_DIR": str(storage), "RAG_DATA_DIR": str(root / "data"),
               "PYTHONUNBUFFERED": "1"}
        if not use_llm:  # extractive answers: the app's own work, not a model's, is measured
            env["OLLAMA_HOST"] = f"127.0.0.1:{_free_port()}"
        log_path = root / "app.log"
        port = _free_port()
        server = start_app(env, port, log_path)
        try:
            _wait_for_log(server, log_path, WARM_LINE, 180.0)
            outcomes, usage = asyncio.run(_drive(f"http://127.0.0.1:{port}", questions, time_limit, server.pid))
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=5)
        return _report(outcomes, questions, storage / "app.sqlite3", usage, log_path)


# ---- set-up


def _prepare_index(paths: list[str], settings: Settings, root: Path) -> Path | None:
    storage = root / "storage"
    if paths:
        from .index import IndexStore

        report = IndexStore(settings.with_overrides(storage_dir=storage, data_dir=root / "data")).add(paths)
        if report.errors or not report.rows:
            print(f"indexing the benchmark's filings failed: {report.errors or 'no filings found'}")
            return None
        return storage
    source = Path(settings.storage_dir)
    if not (source / "index").is_dir():
        print(f"no index in {source}: give filing files or folders to index, or --storage with an index")
        return None
    # The index and facts, never the user's conversations: the benchmark's own must start empty.
    shutil.copytree(source, storage, symlinks=True,
                    ignore=shutil.ignore_patterns("app.sqlite3*", "*.lock", "uploads"))
    return storage


def _questions(settings: Settings, sessions: int, per_session: int) -> list[list[str]]:
    from .index import IndexStore

    filings = [f for f in IndexStore(settings).list_filings() if f.get("ticker")] or [{"ticker": "the company"}]
    out = []
    for k in range(sessions):
        asked = []
        for r in range(per_session):
            f = filings[(k + r) % len(filings)]
            template = TEMPLATES[(k // len(filings) + r) % len(TEMPLATES)]
            asked.append(template.format(ticker=f["ticker"], fy=f.get("fiscal_year") or "2024"))
        out.append(asked)
    return out


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(env: dict, port: int, log_path: Path | None, timeout: float = 120.0) -> subprocess.Popen:
    """The app as `python -m ui.serve` on 127.0.0.1:`port`, its output in `log_path` (or discarded), once it
    answers its health check; the one launcher of the benchmark and of the browser tests."""
    cmd = [sys.executable, "-m", "ui.serve", "--server.headless", "true", "--server.port", str(port),
           "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    with open(log_path or os.devnull, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:] if log_path else ""
            raise RuntimeError(f"the app exited with code {proc.returncode}: {tail}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as resp:
                if resp.read().strip() == b"ok":
                    return proc
        except OSError:
            pass
        time.sleep(0.3)
    proc.kill()
    raise RuntimeError(f"the app did not answer /_stcore/health within {timeout:.0f} s")


def _wait_for_log(proc: subprocess.Popen, log_path: Path, text: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log_path.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            raise RuntimeError(f"the app exited before logging {text!r}")
        time.sleep(0.2)
    raise TimeoutError(f"the app did not log {text!r} within {timeout:.0f} s")


def _machine_cpu_seconds() -> float:
    """CPU seconds every core of the machine has spent busy (Linux /proc/stat; 0 elsewhere)."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")  # all but idle and iowait
    except (OSError, IndexError, ValueError):
        return 0.0


def _cpu_seconds(pid: int) -> float:
    """User and system CPU seconds the process has used (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


# ---- the sessions


async def _drive(url: str, questions: list[list[str]], time_limit: float, server_pid: int) -> tuple[list, dict]:
    """Each session's outcome, and the CPU the server and the whole machine used while the sessions asked."""
    from playwright.async_api import async_playwright

    if hasattr(os, "nice"):
        # The sessions' browsers stand in for users' own machines: on one machine their 20 pages would take the
        # cores from the app, so they (and this driver) run at a lower priority than the app's server.
        os.nice(BROWSER_NICENESS)
    async with async_playwright() as pw:
        launch = {"args": CHROMIUM_ARGS}
        if CHROMIUM.exists():
            launch["executable_path"] = str(CHROMIUM)
        browser = await pw.chromium.launch(**launch)
        try:
            pages = []
            for _ in questions:  # opened one by one: the load is the asking, not the first page load
                context = await browser.new_context(viewport={"width": 1280, "height": 900})
                page = await context.new_page()
                page.set_default_timeout(time_limit * 1000)
                await page.goto(url)
                await page.locator(CHAT_INPUT).wait_for()
                pages.append(page)
            for page in pages:
                await _idle(page, time.monotonic() + 60)
            wall0, server0, machine0 = time.monotonic(), _cpu_seconds(server_pid), _machine_cpu_seconds()
            deadline = wall0 + time_limit
            outcomes = list(await asyncio.gather(*(_session(p, q, deadline) for p, q in zip(pages, questions))))
            usage = {"wall": time.monotonic() - wall0, "server": _cpu_seconds(server_pid) - server0,
                     "machine": _machine_cpu_seconds() - machine0}
            return outcomes, usage
        finally:
            await browser.close()


async def _session(page, asked: list[str], deadline: float) -> dict:
    """Ask each question in turn; the latency of each is from Enter to its answer drawn and the page idle."""
    out = {"latencies": [], "errors": []}
    for n, question in enumerate(asked, start=1):
        box = page.locator(CHAT_INPUT)
        await box.fill(question)
        t0 = time.monotonic()
        await box.press("Enter")
        try:
            while True:
                if time.monotonic() > deadline:
                    raise TimeoutError("the time limit passed before the answer was drawn")
                if await page.locator(MESSAGE).count() >= 2 * n and await _state(page) == "notRunning":
                    await _idle(page, deadline)
                    if await page.locator(MESSAGE).count() >= 2 * n:
                        break
                await asyncio.sleep(0.1)
            out["latencies"].append(time.monotonic() - t0)
        except Exception as exc:  # noqa: BLE001 - a session's failure is counted, the others go on
            out["errors"].append(f"{question!r}: {type(exc).__name__}: {exc}")
            break
        failed = page.locator('[data-testid="stException"]')
        if await failed.count():
            out["errors"].append(f"{question!r}: the page shows an exception: {await failed.first.inner_text()}")
    return out


async def _state(page) -> str | None:
    app = page.locator('[data-testid="stApp"]')
    return await app.get_attribute("data-test-script-state") if await app.count() else None


async def _idle(page, deadline: float) -> None:
    """Until the script has stopped running for a moment (a finished run may start another: st.rerun)."""
    quiet = 0
    while time.monotonic() < deadline and quiet < 3:
        quiet = quiet + 1 if await _state(page) not in ("running", "initial", None) else 0
        await asyncio.sleep(0.15)


# ---- the result


def _report(outcomes: list[dict], questions: list[list[str]], db_path: Path, usage: dict, log_path: Path) -> int:
    expected = Counter(tuple(q) for q in questions)
    stored: Counter = Counter()  # each conversation's questions, in order
    whole: Counter = Counter()  # the same, for conversations stored as user, assistant, user, assistant ...
    engine_ms = []
    spans = []  # seconds from a question stored to its answer stored: the server's part of the latency
    if db_path.exists():
        with sqlite3.connect(db_path) as db:
            for (cid,) in db.execute("SELECT id FROM conversations"):
                rows = db.execute("SELECT role, content, result_json, created_at FROM messages "
                                  "WHERE conversation_id = ? ORDER BY id", (cid,)).fetchall()
                users = tuple(r[1] for r in rows if r[0] == "user")
                stored[users] += 1
                if [r[0] for r in rows] == ["user", "assistant"] * len(users):
                    whole[users] += 1
                for before, after in zip(rows, rows[1:]):
                    if before[0] == "user" and after[0] == "assistant":
                        spans.append((datetime.fromisoformat(after[3]) - datetime.fromisoformat(before[3]))
                                     .total_seconds())
                for role, _, raw, _ in rows:
                    timings = (json.loads(raw).get("timings") or {}) if role == "assistant" and raw else {}
                    if timings.get("total_ms") is not None:  # the answer's time after retrieval's
                        engine_ms.append(float(timings["total_ms"]) + float(timings.get("retrieval_ms") or 0))
    asked = sum(len(q) for q in questions)
    # A question is lost unless its session's conversation is stored whole: each question once, each answered.
    lost = asked - sum(min(n, whole[key]) * len(key) for key, n in expected.items())
    duplicates = sum(max(0, stored[key] - expected.get(key, 0)) for key in stored)
    latencies = np.array([t for o in outcomes for t in o["latencies"]] or [float("nan")])
    errors = [e for o in outcomes for e in o["errors"]]
    tracebacks = log_path.read_text(errors="replace").count("Traceback")
    for e in errors[:10]:
        print(f"  session error: {e}")
    engine = np.array(engine_ms or [float("nan")]) / 1000
    print(f"{len(questions)} sessions x {len(questions[0]) if questions else 0} question(s), "
          f"{os.cpu_count()} CPU cores: answers drawn {int(np.isfinite(latencies).sum())} of {asked} in "
          f"{usage['wall']:.1f} s")
    wall = max(usage["wall"], 1e-9)
    print(f"engine time per answer (retrieval and answer, stored timings): p50 {np.nanpercentile(engine, 50):.2f} s"
          f"  p95 {np.nanpercentile(engine, 95):.2f} s  sum {np.nansum(engine):.1f} s")
    span = np.array(spans or [float("nan")])
    print(f"question stored -> answer stored (the server's part): p50 {np.nanpercentile(span, 50):.2f} s  "
          f"p95 {np.nanpercentile(span, 95):.2f} s; the rest of each latency is the page sending the question, its "
          "script runs before and after the answer, and the browser drawing them")
    print(f"while asking: the app's server used {usage['server'] / wall:.2f} cores "
          f"({usage['server']:.1f} CPU s), the whole machine {usage['machine'] / wall:.2f} of {os.cpu_count()} "
          f"(the browser's pages included)")
    print(f"load sessions={len(questions)} questions={asked} lost={lost} duplicated={duplicates} "
          f"page_errors={len(errors)} server_tracebacks={tracebacks} "
          f"p50_s={np.nanpercentile(latencies, 50):.2f} p95_s={np.nanpercentile(latencies, 95):.2f} "
          f"max_s={np.nanmax(latencies):.2f}")
    return 0 if lost == 0 and duplicates == 0 and not errors else 1
