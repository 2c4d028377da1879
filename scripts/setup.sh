#!/usr/bin/env bash
# Installs the app's Python packages. torch goes first and pinned: its CPU build; an unpinned torch pulled in by
# another package would download several GB of CUDA libraries.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --disable-pip-version-check -q torch==2.13.0
python -m pip install --disable-pip-version-check -q -r requirements.txt
