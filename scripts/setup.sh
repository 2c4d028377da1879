#!/usr/bin/env bash
# Installs the app's Python packages. torch goes first and pinned: its CPU build; an unpinned torch pulled in by
# another package would download several GB of CUDA libraries.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --disable-pip-version-check -q torch==2.13.0
python -m pip install --disable-pip-version-check -q -r requirements.txt
# llama-index-embeddings-huggingface 0.8.0 asks for huggingface-hub[inference], an extra that hub 2.x no longer has,
# so pip warns on every install; what it needs (llama-index-core, sentence-transformers and, through them, the hub)
# comes with requirements.txt, so it goes in without pulling its own.
python -m pip install --disable-pip-version-check -q --no-deps llama-index-embeddings-huggingface==0.8.0
