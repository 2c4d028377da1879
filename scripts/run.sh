#!/usr/bin/env bash
# Sets up and runs the app: bash scripts/run.sh  (then open http://localhost:8501)
# Installs into the project's .venv (scripts/setup.sh), never into the system's Python.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m ui.serve "$@"  # streamlit run app.py, with the engine warming up from the start
