"""Why a download failed, in words an analyst can act on: HTTP statuses and network errors explained, and the
failures sec-edgar-downloader only prints, caught per thread.

The downloader (5.1.0) reports a failed file only with print() and goes on: that print is intercepted per thread
(a module global in sec_edgar_downloader._orchestrator that shadows the builtin) so that each outcome can say why.
"""

from __future__ import annotations

import builtins
import contextlib
import logging
import re
import threading

log = logging.getLogger(__name__)

# sec-edgar-downloader 5.1.0 prints failures as:
#   Error occurred while downloading filing for accession number {}: {} 0000987654-24-000321 <exception text>
_FAILURE_RE = re.compile(
    r"Error occurred while downloading filing for accession number\s+(?:\{\}: \{\}\s+)?"
    r"(?P<acc>\d{10}-\d{2}-\d{6}):?\s+(?P<why>.*)"
)
_CUT_MARKERS = ("incompleteread", "connection broken", "chunkedencoding", "response ended prematurely",
                "remotedisconnected", "connection aborted", "connection reset", "protocolerror")
_UNREACHABLE_MARKERS = ("max retries exceeded", "failed to establish", "nameresolution", "name or service",
                        "connection refused", "temporary failure in name resolution", "network is unreachable")


def explain(what: str, text: str, status: int | None = None, exc: BaseException | None = None) -> str:
    """Turn a requests/urllib3 failure into a sentence an analyst can act on."""
    if status is None:
        m = re.search(r"\b(\d{3}) (?:Client|Server) Error", text)
        status = int(m.group(1)) if m else None
    low = text.lower()
    if status == 429:
        return (f"SEC rate limit: EDGAR answered 429 Too Many Requests for {what}. SEC allows about 10 requests "
                "a second and then blocks for roughly 10 minutes; wait a while and try again.")
    if status == 403:
        return (f"EDGAR refused {what} (HTTP 403 Forbidden). SEC turns away programs without a proper user "
                'agent ("Name email@domain" in SEC_USER_AGENT) and addresses that sent too many requests.')
    if status == 404:
        return f"EDGAR has no such file: {what} (HTTP 404 Not Found)."
    if status is not None and status >= 500:
        return (f"EDGAR server error (HTTP {status}) for {what}: the SEC's servers are having trouble; "
                "try again later.")
    if status is not None:
        return f"EDGAR answered HTTP {status} for {what}."
    if any(m in low for m in _CUT_MARKERS):
        return (f"The connection to EDGAR was cut while downloading {what}: the file arrived incomplete and was "
                "not kept. Try again.")
    if "timed out" in low or "timeout" in low:
        return f"EDGAR did not answer in time for {what}. Try again later."
    if any(m in low for m in _UNREACHABLE_MARKERS):
        return (f"Could not reach EDGAR for {what}: check the internet connection (or proxy/firewall) and try "
                "again.")
    if exc is not None and isinstance(exc, ValueError) and ("json" in low or "expecting" in low):
        return f"EDGAR answered {what} with something that is not the expected JSON; try again later."
    short = text.strip().splitlines()[0][:300] if text.strip() else type(exc).__name__ if exc else "unknown error"
    return f"Downloading {what} failed: {short}"


def explain_exc(what: str, exc: BaseException) -> str:
    """explain() for an exception, with the HTTP status of its response when it carries one."""
    status = getattr(getattr(exc, "response", None), "status_code", None)
    return explain(what, f"{type(exc).__name__}: {exc}", status=status, exc=exc)


_capture = threading.local()


def _downloader_print(*args, sep=" ", end="\n", file=None, flush=False):
    """Stands in for print() inside sec_edgar_downloader._orchestrator, its only way of reporting a failed file.
    In a thread that is downloading, the message is kept for that download (and logged); anywhere else it is
    printed as before. Per thread, so that two sessions downloading at once keep their messages apart."""
    buffer = getattr(_capture, "buffer", None)
    if buffer is None or file is not None:
        builtins.print(*args, sep=sep, end=end, file=file, flush=flush)
        return
    line = (" " if sep is None else sep).join(str(a) for a in args) + ("\n" if end is None else end)
    buffer.append(line)
    log.warning("sec-edgar-downloader: %s", line.strip())


@contextlib.contextmanager
def downloader_messages():
    """Collect, in the list it yields, what the downloader prints in this thread while the block runs."""
    import sec_edgar_downloader._orchestrator as orchestrator

    if getattr(orchestrator, "print", None) is not _downloader_print:
        orchestrator.print = _downloader_print  # a module global shadows the builtin for that module only
    previous = getattr(_capture, "buffer", None)
    _capture.buffer = buffer = []
    try:
        yield buffer
    finally:
        _capture.buffer = previous


def printed_failures(printed: str) -> dict[str, str]:
    """accession -> why, for every failed file the downloader printed."""
    return {m.group("acc"): m.group("why").strip() for m in _FAILURE_RE.finditer(printed)}
