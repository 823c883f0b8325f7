"""Stand-ins for the `spade-train` and `spade-eval` processes an experiment's units launch.

The runner's logic (skip, resume, refuse, record) is what these tests check; a real unit
trains a model for half an hour, so each command here writes what the real process writes
(config.yaml, metrics.jsonl, weights, results.json, per-sample records) from its arguments
in milliseconds. The real commands made the committed experiments (experiments/*/units);
a unit's command on a real Ray cluster is tests/distributed/test_experiment_on_ray.py (slow).
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import yaml

from spade.models.weights import weights_sha256
from spade.rl.checkpoint import MARKER, checkpoint_name
from spade.selfplay.config import dump_config, load_config
from spade.selfplay.warmup.run import load_warmup_config

Scorer = Callable[[str, int | None, str], float]
"""(arm, seed or None, sample id) → the sample's success."""

SAMPLE_IDS = [f"spade-seed/{env}Env-v1@0/{seed}" for env in ("Maze", "Tower", "Ledger")
              for seed in (11, 12)] + ["rg:maze@0/1073741824", "rg:maze@0/1073741825"]  # fmt: skip


def default_scorer(arm: str, seed: int | None, sample_id: str) -> float:
    """A fixed pseudo-random 0/1 per (arm, seed, sample)."""
    return float(zlib.crc32(f"{arm}/{seed}/{sample_id}".encode()) % 2)


class Processes:
    """A launcher: records every command line and writes that command's outputs."""

    def __init__(self, scorer: Scorer = default_scorer, fail_on: str | None = None) -> None:
        self.calls: list[list[str]] = []
        self.scorer = scorer
        self.fail_on = fail_on
        """A substring of a command line at which to stop half-way, as a kill would."""
        self.killed_before_a_checkpoint = False
        """Whether a kill at `fail_on` comes before the run's first checkpoint."""
        self.warm_weights = "warm weights"
        """What a warm start writes as its weights (a rebuild that is not reproducible)."""

    def __call__(self, argv: Sequence[str]) -> int:
        argv = list(argv)
        self.calls.append(argv)
        module, args = argv[2], argv[3:]
        killed = self.fail_on is not None and self.fail_on in " ".join(argv)
        if module == "spade.cli.train" and args[0] == "warmup":
            self._warmup(args[1:], killed)
        elif module == "spade.cli.train":
            self._train(args, killed)
        else:
            self._evaluate(args)
        if killed:
            raise KeyboardInterrupt
        return 0

    def commands(self, module: str) -> list[list[str]]:
        return [call[3:] for call in self.calls if call[2] == module]

    # -- what each process writes -----------------------------------------------------------------
    def _warmup(self, args: list[str], killed: bool) -> None:
        options = _options(args)
        run_dir = Path(options.get("--run-dir") or options["--resume"])
        if "--config" in options:
            config = load_warmup_config(Path(options["--config"]))
            _write(run_dir / "config.yaml", yaml.safe_dump(config.model_dump(mode="json")))
            _write(run_dir / "data" / "summary.md", "# warm-start data\n")
        if killed:
            return
        _write(run_dir / "losses.jsonl", '{"step": 1, "loss": 1.0}\n')
        _write(run_dir / "sft" / "model" / "model.safetensors", self.warm_weights)

    def _train(self, args: list[str], killed: bool) -> None:
        options = _options(args)
        if "--resume" in options:
            run_dir = Path(options["--resume"])
        else:
            run_dir = Path(options["--run-dir"])
            config = load_config(Path(options["--config"]))
            _write(run_dir / "config.yaml", dump_config(config))
        config = load_config(run_dir / "config.yaml")
        done = config.iterations // 2 if killed else config.iterations
        if killed and self.killed_before_a_checkpoint:
            return
        for step in range(done):  # as the learner does: one complete checkpoint an iteration
            _write(run_dir / "checkpoints" / checkpoint_name(step) / MARKER, "{}")
        lines = [json.dumps({"step": step, "agent/return": 0.1 * step, "envs/win_rate": 0.05,
                             "samples/agent": 32, "update/agent/tokens": 900})
                 for step in range(done)]  # fmt: skip
        _write(run_dir / "metrics.jsonl", "".join(f"{line}\n" for line in lines))
        plays = [json.dumps({"step": step, "env": "spade-seed/MazeEnv-v1", "level": 0,
                             "seed": 7, "solved": False}) for step in range(done)]  # fmt: skip
        _write(run_dir / "plays.jsonl", "".join(f"{line}\n" for line in plays))
        if not killed:
            _write(run_dir / "final" / "model.safetensors", f"weights of {run_dir}")

    def _evaluate(self, args: list[str]) -> None:
        options = _options(args)
        checkpoint = options["--checkpoint"].removeprefix("vllm:")
        arm, seed = _arm_and_seed(checkpoint)
        output = Path(options["--output"])
        records = [{"benchmark": "ladder", "sample_id": sample_id, "prompt": [], "output": "x",
                    "score": (s := self.scorer(arm, seed, sample_id)),
                    "metrics": {"success": s, "success[level=0]": s}, "parsed": True}
                   for sample_id in SAMPLE_IDS]  # fmt: skip
        _write(output / "samples" / "ladder.jsonl", "".join(json.dumps(r) + "\n" for r in records))
        sha = weights_sha256(checkpoint) if Path(checkpoint).is_dir() else None
        document = {"checkpoint": {"spec": f"vllm:{checkpoint}", "weights_sha256": sha},
                    "benchmarks": {"ladder": {"n": len(records)}}}  # fmt: skip
        _write(output / "results.json", json.dumps(document))


def _arm_and_seed(checkpoint: str) -> tuple[str, int | None]:
    """`.../ARM/seedK/final` → (ARM, K); a warm start's `.../sft/model` → warm; an alias."""
    match = re.search(r"([^/]+)/seed(\d+)/final$", checkpoint)
    if match:
        return match.group(1), int(match.group(2))
    return ("warm", None) if checkpoint.endswith("sft/model") else (checkpoint, None)


def _options(args: list[str]) -> dict[str, str]:
    return {args[i]: args[i + 1] for i in range(len(args) - 1) if args[i].startswith("--")}


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
