"""A re-run of the README's main command from the completion cache: deferred engine vs eager.

Run: python benchmarks/perf/eval_rerun.py [--repeats 3] [--preset quick]

Needs the cache filled by one earlier run of the same command (the README's first command
does that). Each repeat runs `spade-eval --checkpoint vllm:smollm2-135m --preset PRESET` twice
in fresh processes, alternating: as shipped (the vLLM engine starts at the first prompt the
cache does not answer, so a full re-run starts none) and as before (`defer_start=False`: the
engine starts while the checkpoint loads). It prints each run's wall time, the medians and
their ratio, and checks that both wrote the same per-sample outputs and scores.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from spade.host import this_host

EAGER = (
    "import sys, spade.models as m; load = m.load_policy; "
    "m.load_policy = lambda *a, **k: load(*a, **{**k, 'defer_start': False}); "
    "from spade.cli.eval import main; sys.exit(main())"
)
SHIPPED = "import sys; from spade.cli.eval import main; sys.exit(main())"


def run(code: str, preset: str, data_dir: str, out: Path) -> float:
    args = ["--checkpoint", "vllm:smollm2-135m", "--preset", preset, "--output", str(out)]
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code, *args, "--data-dir", data_dir],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return time.perf_counter() - started


def scores(out: Path) -> list[tuple[str, str, str, float]]:
    """Every sample's benchmark, id, output and score."""
    rows = []
    for path in sorted((out / "samples").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            r = json.loads(line)
            rows.append((r["benchmark"], r["sample_id"], json.dumps(r["output"]), r["score"]))
    return sorted(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--data-dir", default="../shared/data")
    args = parser.parse_args()
    print(this_host())
    times: dict[str, list[float]] = {"deferred (shipped)": [], "eager (before)": []}
    with tempfile.TemporaryDirectory() as tmp:
        outs = {name: Path(tmp) / name.split()[0] for name in times}
        for repeat in range(args.repeats):
            for name, code in zip(times, (SHIPPED, EAGER), strict=True):
                seconds = run(code, args.preset, args.data_dir, outs[name])
                times[name].append(seconds)
                print(f"repeat {repeat}: {name}: {seconds:.1f} s", flush=True)
        same = scores(outs["deferred (shipped)"]) == scores(outs["eager (before)"])
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, value in medians.items():
        print(f"median {name}: {value:.1f} s")
    ratio = medians["deferred (shipped)"] / medians["eager (before)"]
    print(f"ratio deferred / eager: {ratio:.2f}; same per-sample outputs and scores: {same}")


if __name__ == "__main__":
    main()
