#!/usr/bin/env bash
# Sets up and runs the app: bash scripts/run.sh  (then open http://localhost:8501)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec python -m ui.serve "$@"  # streamlit run app.py, with the engine warming up from the start
