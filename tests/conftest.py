"""Test-session defaults."""

import os

# The suite's index tests count and compare PyTorch embeddings, and each makes a fresh storage folder, where an
# ONNX backend would export its model again. tests/test_embedding.py covers the ONNX backends by name.
os.environ.setdefault("RAG_EMBED_BACKEND", "torch")

# A real PostgreSQL with pgvector (team mode): `pg_url` is an empty database of one test's own.
pytest_plugins = ["tests.pg_server"]
