"""`.ci/run`'s gate command, replayed from recorded completions, and how they are recorded.

The gate command is read from `.ci/run` itself, so the tests follow any change to it. A replay
runs that command as it is, with two differences that change no score and no output: its own
output folder, and instead of `--no-cache` a fresh completion cache filled from
`data/ci-completions.jsonl.gz`, the completions the stored row's run generated. The model is
still loaded (its weights hash is the row's identity) and every sample is still extracted,
scored and gated by the real code; only the generation is replayed.

Re-record the stored row and the completions together (after a change that moves outputs on
purpose), with the gate command's own flags, `--leaderboard` in place of `--compare`:

    .venv/bin/python -m tests.leaderboard.ci_replay record
"""

from __future__ import annotations

import gzip
import io
import os
import shlex
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

from spade.models.builtin import builtin_model_dir
from spade.models.policy import Completion
from spade.rollout.cache import TABLE, CompletionCache

ROOT = Path(__file__).resolve().parents[2]
CI_RUN = ROOT / ".ci" / "run"
COMPLETIONS = Path(__file__).parent / "data" / "ci-completions.jsonl.gz"
CACHE_FILE = "completions.sqlite"
RECORD_OUTPUT = Path("results/ci-record")
"""Relative to the checkout (the command runs there), as the row's provenance shows it."""


def gate_command() -> list[str]:
    """The `spade-eval ... --compare` command of `.ci/run`, as argv."""
    lines = CI_RUN.read_text(encoding="utf-8").replace("\\\n", " ").splitlines()
    gates = [shlex.split(line) for line in lines if "spade-eval" in line and "--compare" in line]
    if len(gates) != 1:
        raise ValueError(f"{CI_RUN}: expected one spade-eval --compare line, found {len(gates)}")
    return gates[0]


def flag(argv: list[str], name: str) -> str:
    """The value of `name` in `argv`."""
    return argv[argv.index(name) + 1]


def replay_command(argv: list[str], output: Path) -> list[str]:
    """`argv` writing to `output`, reading the cache (`--no-cache` dropped)."""
    return _with(argv, "--output", str(output), drop=("--no-cache",))


def record_command(argv: list[str], output: Path) -> list[str]:
    """`argv` storing its row with `--leaderboard` where the gate compares, cache on."""
    board = flag(argv, "--compare")
    rest = _with(argv, "--output", str(output), drop=("--no-cache",))
    at = rest.index("--compare")
    return [*rest[:at], "--leaderboard", board, *rest[at + 2 :]]


def _with(argv: list[str], name: str, value: str, drop: tuple[str, ...]) -> list[str]:
    argv = [arg for arg in argv if arg not in drop]
    if name in argv:
        at = argv.index(name)
        return [*argv[:at], name, value, *argv[at + 2 :]]
    return [*argv, name, value]


def cache_dir_for(folder: Path, checkpoint: str) -> Path:
    """A fresh, empty `SPADE_CACHE_DIR` under `folder` sharing the built-in model's files
    (`checkpoint`: the alias, with its backend prefix if any, e.g. `vllm:smollm2-135m`)."""
    alias = checkpoint.removeprefix("vllm:")
    models = folder / "models"
    models.mkdir(parents=True)
    (models / alias).symlink_to(builtin_model_dir(alias))
    return folder


def cached_completions(cache_dir: Path) -> int:
    with sqlite3.connect(cache_dir / CACHE_FILE) as db:
        count: int = db.execute(f"SELECT COUNT(*) FROM {TABLE}").fetchone()[0]
    return count


def export_completions(cache_dir: Path, path: Path = COMPLETIONS) -> int:
    """Write every completion of the cache as gzipped JSONL, sorted by key; how many."""
    with sqlite3.connect(cache_dir / CACHE_FILE) as db:
        rows = db.execute(f"SELECT key, completion FROM {TABLE} ORDER BY key").fetchall()
    text = b"".join(
        orjson.dumps({"key": key, "completion": orjson.loads(blob)}) + b"\n" for key, blob in rows
    )
    buffer = io.BytesIO()
    # mtime 0 and no file name: the same completions give the same bytes (a quiet diff).
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as archive:
        archive.write(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buffer.getvalue())
    return len(rows)


def import_completions(cache_dir: Path, path: Path = COMPLETIONS) -> int:
    """Fill the cache with the recorded completions (through the cache's own writer)."""
    lines = gzip.decompress(path.read_bytes()).splitlines()
    items = [orjson.loads(line) for line in lines if line.strip()]
    cache = CompletionCache(cache_dir / CACHE_FILE)
    cache.put_many((item["key"], Completion(**item["completion"])) for item in items)
    return len(items)


def record(output: Path = RECORD_OUTPUT) -> int:
    """Run the gate command with `--leaderboard` on a fresh cache, then keep its completions
    (the run's results stay in `output`, which the stored row's provenance names)."""
    argv = gate_command()
    with tempfile.TemporaryDirectory(prefix="spade-ci-record-") as scratch:
        cache_dir = cache_dir_for(Path(scratch) / "cache", flag(argv, "--checkpoint"))
        command = record_command(argv, output)
        print("+", shlex.join(command), file=sys.stderr)
        env = {**os.environ, "SPADE_CACHE_DIR": str(cache_dir)}
        status = subprocess.run(command, cwd=ROOT, env=env, check=False).returncode
        if status != 0:
            return status
        count = export_completions(cache_dir)
    print(f"kept {count} completions in {COMPLETIONS.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    if sys.argv[1:] != ["record"]:
        sys.exit("usage: python -m tests.leaderboard.ci_replay record")
    sys.exit(record())
