"""Regenerate docs/screenshot.png: the chat page with an answer and its citation [n] open beside it.

    python scripts/screenshot.py                  # writes docs/screenshot.png
    python scripts/screenshot.py --out /tmp/x.png --small

It uses the browser tests' machinery (tests/app_server.py): a fresh index in a temporary folder, `streamlit run
app.py` on a free port, Debian's Chromium through Playwright. With the shared corpus (../shared) present the index
holds Apple's FY2024 and FY2025 10-Ks; otherwise (or with --small) the tests' two small generated 10-Ks.

No Ollama runs where this is built, so the model is tests/fake_ollama.py. Its reply is composed here from the
passage the app's own retrieval ranks for the question (the same engine, the same settings), quoting that
passage's figures with its citation number, so the figures on the screenshot are the filing's and the citation
opens the passage they come from.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.app_server import AppServer, ask, browser, chromium_missing_reason, open_chat, wait_idle  # noqa: E402
from tests.fake_ollama import FakeOllama  # noqa: E402

SHARED = ROOT.parent / "shared" / "corpus"
MAX_BYTES = 300_000


def _log(msg: str) -> None:
    print(f"[screenshot] {msg}", flush=True)


def _manifest() -> dict[str, dict]:
    path = SHARED / "MANIFEST.tsv"
    if not path.exists():
        return {}
    with open(path, encoding="utf-8") as fh:
        return {row["path"]: row for row in csv.DictReader(fh, delimiter="\t") if row.get("kind") == "filing"}


def build_index(root: Path, small: bool) -> tuple[dict[str, str], str, str]:
    """(the app's env, the question to ask, the company label) after indexing the screenshot's filings."""
    from rag.config import get_settings
    from rag.edgar import add_local_file
    from rag.index import IndexStore

    settings = get_settings(storage_dir=root / "storage", data_dir=root / "data")
    env = {"RAG_STORAGE_DIR": str(root / "storage"), "RAG_DATA_DIR": str(root / "data")}
    rows = _manifest()
    wanted = ["filings/AAPL/aapl-20240928.htm", "filings/AAPL/aapl-20250927.htm"]
    if not small and all((SHARED / p).exists() for p in wanted):
        paths = []
        for rel in wanted:
            row = rows.get(rel, {})
            record = add_local_file(SHARED / rel, settings=settings, source="path",
                                    accession=row.get("accession") or None,
                                    filing_date=row.get("filing_date") or None, ticker=row.get("ticker") or None)
            if record.accession and not record.url:
                cik = record.cik or "320193"
                record.url = (f"https://www.sec.gov/Archives/edgar/data/{int(cik)}/"
                              f"{record.accession.replace('-', '')}/{Path(rel).name}")
                record.save()
            paths.append(record.path)
        question = "What were Apple's total net sales in fiscal 2024, and how did they compare with 2023?"
    else:
        from tests.filings import ACME, BOLT, write_filing

        paths = [write_filing(root / "in", "acme-20240928.htm", **ACME),
                 write_filing(root / "in", "bolt-20231231.htm", **BOLT)]
        question = "What were ACME's total net sales in fiscal 2024, and how did they compare with 2023?"
    started = time.perf_counter()
    report = IndexStore(settings).add(paths, progress=lambda name, stage, f: None)
    if report.errors:
        raise SystemExit(f"indexing failed: {report.errors}")
    _log(f"indexed {len(paths)} filings in {time.perf_counter() - started:.0f} s")
    return env, question, ""


_ROW = re.compile(r"^(?:Total net sales|Net sales|Total revenues?|Revenues?)\s*\|(.*)$", re.I | re.M)
_MONEY = re.compile(r"^\$?\s*\d{1,3}(?:,\d{3})+(?:\.\d+)?$")


def compose_reply(env: dict[str, str], question: str) -> tuple[str, int]:
    """A model-like answer built from the top passage that holds the total net sales row: (reply, citation n)."""
    from rag.config import get_settings
    from rag.engine import Engine

    settings = get_settings(storage_dir=env["RAG_STORAGE_DIR"], data_dir=env["RAG_DATA_DIR"])
    retrieval = Engine(settings).retrieve(question, mode="hybrid", top_k=settings.top_k)
    for n, hit in enumerate(retrieval.nodes, start=1):
        text = hit.node.get_content()
        m = _ROW.search(text)
        amounts = [c.strip() for c in m.group(1).split("|") if _MONEY.match(c.strip())] if m else []
        if len(amounts) < 2:
            continue
        meta = hit.node.metadata
        now, before = (a if a.startswith("$") else "$" + a for a in amounts[:2])
        who = meta.get("company") or meta.get("ticker") or "The company"
        fy = meta.get("fiscal_year")
        unit = " million" if "millions" in text.lower() else ""
        reply = (f"{who} reported total net sales of **{now}{unit}** for fiscal {fy}, compared with "
                 f"**{before}{unit}** in fiscal {int(fy) - 1} [{n}].\n\n"
                 f"Both figures are in the FY{fy} 10-K, {meta.get('section') or 'the filing'}"
                 f"{', page ' + str(meta['page_start']) if meta.get('page_start') else ''} [{n}].")
        return reply, n
    raise SystemExit("no retrieved passage holds a net sales row: cannot compose the screenshot's answer")


def shoot(out: Path, small: bool, workdir: Path | None = None) -> None:
    reason = chromium_missing_reason()
    if reason:
        raise SystemExit(reason)
    with tempfile.TemporaryDirectory(prefix="screenshot-") as tmp:
        root = workdir or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        for suffix in ("", "-wal", "-shm"):  # no earlier conversations on the picture
            (root / "storage" / f"app.sqlite3{suffix}").unlink(missing_ok=True)
        env, question, _ = build_index(root, small)
        reply, n = compose_reply(env, question)
        _log(f"reply cites [{n}]")
        with FakeOllama(models=["llama3.1:8b", "qwen2.5:7b"]) as fake:
            fake.reply = reply
            fake.piece_size = 6
            env.update({"OLLAMA_HOST": fake.url, "RAG_LLM_MODEL": "llama3.1:8b"})
            with AppServer(env, log_path=root / "streamlit.log") as app, browser() as b:
                page = b.new_page(viewport={"width": 1920, "height": 1080}, device_scale_factor=1)
                open_chat(page, app.url, timeout_ms=120_000)
                ask(page, question)
                cite = page.locator("button").filter(has_text=re.compile(rf"^\S*\[{n}\] "))
                cite.first.wait_for()
                wait_idle(page, 120)
                # The question at the top of the view, the answer and its citations below it.
                page.locator('[data-testid="stMainBlockContainer"]').evaluate(
                    "el => el.scrollIntoView({block: 'start'})")
                page.wait_for_timeout(300)
                cite.first.click()
                page.locator('[role="dialog"] mark').first.wait_for()
                wait_idle(page)
                page.wait_for_timeout(600)  # the drawer's slide-in animation
                raw = root / "raw.png"
                page.screenshot(path=str(raw))
        _save_small(raw, out)
    _log(f"wrote {out} ({out.stat().st_size / 1024:.0f} KB)")


def _save_small(raw: Path, out: Path) -> None:
    """PNG under MAX_BYTES: the screenshot as is when small enough, else with a 256-colour palette."""
    out.parent.mkdir(parents=True, exist_ok=True)
    data = raw.read_bytes()
    if len(data) <= MAX_BYTES:
        out.write_bytes(data)
        return
    from PIL import Image

    with Image.open(raw) as img:
        img.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
            out, optimize=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshot.png")
    parser.add_argument("--small", action="store_true", help="use the tests' small generated filings")
    parser.add_argument("--workdir", type=Path, help="keep the index here and reuse it on the next run")
    args = parser.parse_args(argv)
    shoot(args.out, args.small, args.workdir)


if __name__ == "__main__":
    main()
