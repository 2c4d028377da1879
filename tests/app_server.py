"""Run the real app in a subprocess and drive it with Chromium: shared by tests/test_browser.py and
scripts/screenshot.py.

    with AppServer(env) as app:          # `python -m ui.serve --server.headless true --server.port <free>`
        app.url                          # http://127.0.0.1:<port>
        app.wait_for_log(WARM_LINE)      # the engine finished loading in the background
    with browser() as b:                 # Playwright's Chromium, Debian's /usr/bin/chromium
        page = b.new_page(...)
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

from rag.load_bench import CHROMIUM, start_app

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]


def chromium_missing_reason() -> str | None:
    if not CHROMIUM.exists():
        return (f"{CHROMIUM} is absent: install Debian's chromium (apt-get install -y chromium) to run the browser "
                "tests")
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (bash scripts/test.sh installs it into .venv)"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AppServer:
    """The app as `python -m ui.serve` (streamlit run app.py, with the engine warming up from the start) on a free
    port with the given environment; stopped (by its own pid) on exit."""

    def __init__(self, env: dict[str, str], *, port: int | None = None, log_path: Path | None = None,
                 start_timeout: float = 90.0):
        self.env = {**os.environ, **env}
        self.env.setdefault("PYTHONUNBUFFERED", "1")
        self.port = port or free_port()
        self.log_path = log_path
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "AppServer":
        self.proc = start_app(self.env, self.port, self.log_path, self.start_timeout)
        return self

    def wait_for_log(self, text: str, timeout: float = 120.0) -> float:
        """Until the server's log (log_path) shows `text`; returns the seconds waited."""
        if self.log_path is None:
            raise RuntimeError("wait_for_log needs the server started with a log_path")
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if text in Path(self.log_path).read_text(encoding="utf-8", errors="replace"):
                return time.monotonic() - started
            if self.proc is None or self.proc.poll() is not None:
                raise RuntimeError(f"the app exited before logging {text!r}; see {self.log_path}")
            time.sleep(0.2)
        raise TimeoutError(f"the app did not log {text!r} within {timeout:.0f} s; see {self.log_path}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.proc = None

    def __enter__(self) -> "AppServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


@contextlib.contextmanager
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def build_small_index(root: Path) -> dict[str, str]:
    """Two small inline XBRL 10-Ks (ACME FY2024, BOLT FY2023) indexed under root; returns the app's env."""
    from rag.config import get_settings
    from rag.index import IndexStore
    from tests.filings import ACME, BOLT, write_filing

    storage, data = root / "storage", root / "data"
    store = IndexStore(get_settings(storage_dir=storage, data_dir=data))
    if not store.list_filings():
        files = [write_filing(root / "in", "acme-20240928.htm", **ACME),
                 write_filing(root / "in", "bolt-20231231.htm", **BOLT)]
        report = store.add(files)
        assert not report.errors, report.errors
    return {"RAG_STORAGE_DIR": str(storage), "RAG_DATA_DIR": str(data)}


def copy_index(src_root: Path, dst_root: Path) -> dict[str, str]:
    """A private copy of an index built once (so a test's conversations and uploads stay its own)."""
    shutil.copytree(src_root / "storage", dst_root / "storage", symlinks=True)
    (dst_root / "data").mkdir(parents=True, exist_ok=True)
    return {"RAG_STORAGE_DIR": str(dst_root / "storage"), "RAG_DATA_DIR": str(dst_root / "data")}


CHAT_INPUT = '[data-testid="stChatInput"] textarea'


def open_chat(page, url: str, timeout_ms: int = 60_000) -> None:
    """Load the app's Chat page in `page` and wait until its question box is there and the script is idle."""
    page.set_default_timeout(timeout_ms)
    page.goto(url)
    page.locator(CHAT_INPUT).wait_for()
    wait_idle(page, timeout_ms / 1000)


def ask(page, question: str) -> None:
    """Type a question into the chat box and send it."""
    box = page.locator(CHAT_INPUT)
    box.fill(question)
    box.press("Enter")


def open_review(page, *paths: Path):
    """Drop files on the sidebar's uploader (its Upload tab open), read them, and return the review dialog once
    its table of what was read shows."""
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files([str(p) for p in paths])
    sidebar.get_by_text(paths[-1].name).first.wait_for()
    sidebar.get_by_role("button", name=re.compile("Read files")).click()
    review = page.locator('[role="dialog"]')  # what was read, for the user to check, with room for it
    review.locator('[data-testid="stDataFrame"]').wait_for()
    return review


MESSAGE = '[data-testid="stChatMessage"]'


def filed_answer(page, n: int, shots: Path, name: str = "answer"):
    """The n-th answer (1-based) of a page once it is filed and the app idle: messages alternate, the user's
    question then the answer, and the Detected line comes with the rerun that files the finished answer. A
    screenshot goes to `shots` when it does not come."""
    messages = page.locator(MESSAGE)
    try:
        messages.nth(2 * n - 1).get_by_text(re.compile(r"Detected ")).first.wait_for(timeout=180_000)
        wait_idle(page, timeout=180)
    except Exception:
        page.screenshot(path=str(shots / f"{name}-{n}.png"), full_page=True)
        raise
    return messages.nth(2 * n - 1)


def wait_idle(page, timeout: float = 60.0) -> None:
    """Until Streamlit has finished running the script (stApp's data-test-script-state leaves 'running') and
    stays so for a moment (a finished run may start another: st.rerun)."""
    app = page.locator('[data-testid="stApp"]')
    deadline = time.monotonic() + timeout
    quiet = 0
    page.wait_for_timeout(250)
    while time.monotonic() < deadline:
        state = app.get_attribute("data-test-script-state") if app.count() else "initial"
        quiet = quiet + 1 if state not in ("running", "initial", None) else 0
        if quiet >= 3:
            return
        page.wait_for_timeout(150)
    raise TimeoutError(f"the app was still running after {timeout:.0f} s")
