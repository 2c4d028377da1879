#!/usr/bin/env bash
# Sets up and runs the whole test suite: bash scripts/test.sh  (pytest's own options may follow)
# Installs into the project's .venv (scripts/setup.sh), never into the system's Python.
# Browser tests need Debian's chromium; as root it is installed here, otherwise those tests skip and say why.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "chromium could not be installed: browser tests will skip"
fi
exec .venv/bin/python -m pytest "$@"
