"""Arms measured in fresh processes, alternating, for the perf scripts that compare settings
fixed at process start (an allocator, an engine's dtype): drift in the machine's load then
falls on every arm alike."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from spade.host import this_host

Record = dict[str, object]


def alternate(
    tag: str, arms: Sequence[str], repeats: int, run: Callable[[str], Record]
) -> dict[str, list[Record]]:
    """`run(arm)` for every arm in turn, `repeats` rounds; progress on stderr."""
    runs: dict[str, list[Record]] = {arm: [] for arm in arms}
    for repeat in range(repeats):
        for arm in arms:
            print(f"[{tag}] repeat {repeat + 1}/{repeats}: {arm}", file=sys.stderr)
            runs[arm].append(run(arm))
    return runs


def report(summary: Record, as_json: bool, print_table: Callable[[Record], None]) -> int:
    """Print the summary with the machine it ran on, as JSON or as the script's table."""
    summary["machine"] = str(this_host())
    if as_json:
        print(json.dumps(summary))
    else:
        print_table(summary)
    return 0


def in_child(script: str, args: list[str], env: dict[str, str] | None = None) -> Record:
    """Run `script` with `args` in a fresh Python; its last stdout line is the JSON record.
    A failed child stops the run in one line naming the script and its last error line."""
    done = subprocess.run(
        [sys.executable, script, *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        raise SystemExit(f"{Path(script).name}: an arm ({' '.join(args)}) failed: {tail[0]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))
