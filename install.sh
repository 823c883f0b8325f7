#!/usr/bin/env bash
# Install spade into ./.venv with everything its tests need, on a fresh Debian/Ubuntu machine
# or an existing one. Safe to re-run. GPU users: see README ("GPU machines").
set -euo pipefail
cd "$(dirname "$0")"

# System packages: bubblewrap isolates env code; docker.io lets the docker backend be tested;
# chromium opens `spade-eval view` reports headless in the viewer's tests.
need=()
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v dockerd >/dev/null || need+=(docker.io)
command -v chromium >/dev/null || need+=(chromium)
if ((${#need[@]})); then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "install.sh: please install ${need[*]} (spade falls back to weaker isolation without bubblewrap)" >&2
  fi
fi

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# constraints/cpu.txt pins the CPU build of torch; a bare `torch` would pull a CUDA build.
.venv/bin/python -m pip install -q -c "${SPADE_CONSTRAINTS:-constraints/cpu.txt}" -e '.[test]'
# bfcl-eval's own requirements pin numpy 1.x and many API clients: only its backends and
# checker are used, so it goes in without them (tree-sitter: its handler utils, for tests).
.venv/bin/python -m pip install -q --no-deps bfcl-eval==2026.3.23
.venv/bin/python -m pip install -q mpmath tenacity tree-sitter==0.21.3 tree-sitter-java==0.21.0 \
  tree-sitter-javascript==0.21.4
echo "spade installed in $(pwd)/.venv"
