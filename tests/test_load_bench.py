"""`python -m rag bench load` (rag/load_bench.py), kept working: the real app under a few browser sessions asking at
once, every question and answer stored exactly once. The benchmark itself runs 20 sessions:
    python -m rag bench load PATH... --sessions 20"""

from __future__ import annotations

import re

import pytest

from rag.config import get_settings
from rag.load_bench import bench_load
from tests.app_server import chromium_missing_reason
from tests.filings import ACME, BOLT, write_filing

REASON = chromium_missing_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def test_load_benchmark_stores_every_question_once_and_prints_latency(tmp_path, capsys):
    paths = [str(write_filing(tmp_path / "in", "acme.htm", **ACME)), str(write_filing(tmp_path / "in", "bolt.htm", **BOLT))]
    code = bench_load(paths, get_settings(storage_dir=tmp_path / "unused"), sessions=3, per_session=2,
                      time_limit=240)
    out = capsys.readouterr().out
    line = re.search(r"^load sessions=3 questions=6 lost=(\d+) duplicated=(\d+) page_errors=(\d+) "
                     r"server_tracebacks=(\d+) p50_s=([\d.]+) p95_s=([\d.]+) max_s=([\d.]+)$", out, re.M)
    assert line, out
    assert line.groups()[:4] == ("0", "0", "0", "0"), out
    assert 0 < float(line.group(5)) <= float(line.group(6)) <= float(line.group(7))
    assert code == 0
    assert not (tmp_path / "unused" / "app.sqlite3").exists(), "the benchmark keeps its conversations to itself"
