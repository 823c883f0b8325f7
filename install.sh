#!/usr/bin/env bash
# Install spade into ./.venv with everything its tests need, on a fresh Debian/Ubuntu machine
# or an existing one. Safe to re-run. GPU users: see README ("GPU machines").
set -euo pipefail
cd "$(dirname "$0")"

# System packages: bubblewrap isolates env code; docker.io lets the docker backend be tested.
need=()
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v dockerd >/dev/null || need+=(docker.io)
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
echo "spade installed in $(pwd)/.venv"
