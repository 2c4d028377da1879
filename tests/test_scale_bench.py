"""rag bench scale on both stores: a synthetic index of exactly N chunks, one more filing, searches, one line."""

import re

import pytest

from rag.config import get_settings
from rag.database import connect
from rag.index import IndexStore
from rag.scale_bench import bench_scale
from tests.filings import ACME, BOLT, write_filing

LINE = re.compile(r"^backend=(\w+) chunks=(\d+) build_s=[\d.]+ add_s=[\d.]+ p50_ms=[\d.]+ p95_ms=[\d.]+ "
                  r"p95_filtered_ms=[\d.]+ rss_mb=\d+$", re.M)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A small real index whose chunks the benchmark repeats."""
    root = tmp_path_factory.mktemp("scale")
    settings = get_settings(storage_dir=root / "storage", data_dir=root / "data")
    IndexStore(settings).add([write_filing(root / "in", "acme.htm", **ACME),
                              write_filing(root / "in", "bolt.htm", **BOLT)])
    return settings


def test_the_embedded_scale_bench_prints_its_line(source, capsys):
    assert bench_scale(source, "embedded", 25) == 0
    assert LINE.search(capsys.readouterr().out).groups() == ("embedded", "25")


def test_the_postgres_scale_bench_builds_n_chunks_adds_one_filing_and_refuses_a_used_database(source, pg_url, capsys):
    served = source.with_overrides(database_url=pg_url)
    assert bench_scale(served, "postgres", 25) == 0
    assert LINE.search(capsys.readouterr().out).groups() == ("postgres", "25")
    with connect(pg_url) as conn:
        filings, chunks = conn.execute("SELECT count(*), sum((record->>'chunks')::int) FROM rag_filings").fetchone()
        assert conn.execute("SELECT count(*) FROM rag_chunks").fetchone() == (chunks,)
    first = IndexStore(source).list_filings()[0]["chunks"]
    assert chunks - 25 in (first, IndexStore(source).list_filings()[1]["chunks"])  # one more whole filing
    assert bench_scale(served, "postgres", 25) == 2  # it writes only into an empty database
    assert "empty" in capsys.readouterr().err
