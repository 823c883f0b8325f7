"""Run an experiment's units: skip the done, resume the cut off, refuse the inconsistent.

Each unit runs as its own `spade-train` / `spade-eval` process, so a kill loses at most the
unit in flight (training resumes from its last checkpoint; an evaluation restarts from the
completion cache). Before trusting anything on disk the runner compares it with the plan:
a recorded unit or a run directory whose config disagrees stops the run with one line naming
both, so results of two configurations never mix.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spade.experiments import artifacts
from spade.experiments.plan import WARM, Plan, load_plan
from spade.experiments.units import (
    RUNS_ROOT,
    Layout,
    Unit,
    checkpoint_of,
    config_differences,
    eval_identity,
    selected,
    train_config_text,
    trained_by,
    units,
    warm_unit,
)
from spade.models.weights import weights_sha256
from spade.rl.checkpoint import latest_checkpoint
from spade.selfplay.config import dump_config, prior_config
from spade.selfplay.warmup.run import WarmupConfig, load_warmup_config

Launcher = Callable[[Sequence[str]], int]
"""Runs one command line (argv), returns its exit status."""


class ExperimentError(RuntimeError):
    """A unit that cannot run, or disagrees with the plan (one line)."""


def subprocess_launcher(argv: Sequence[str]) -> int:
    """The unit's command in its own process, its output on this terminal. A SIGTERM to the
    runner stops that process too (Ctrl-C reaches the whole process group anyway, but a
    `kill` of the runner alone left a training run holding the cores)."""
    print(f"$ {' '.join(argv)}", file=sys.stderr, flush=True)
    child = subprocess.Popen(list(argv))
    if threading.current_thread() is not threading.main_thread():
        return child.wait()  # signal handlers can only be set in the main thread
    previous = signal.getsignal(signal.SIGTERM)
    stopped: list[int] = []

    def stop(signum: int, frame: object) -> None:
        # Pass it on and let the wait below reap the child (waiting here, inside the
        # interrupted wait, would deadlock on its lock).
        stopped.append(signum)
        child.terminate()

    signal.signal(signal.SIGTERM, stop)
    try:
        returncode = child.wait()
    finally:
        signal.signal(signal.SIGTERM, previous)
    if stopped:
        raise SystemExit(128 + stopped[0])
    return returncode


@dataclass
class RunReport:
    done: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass
class Runner:
    plan_path: Path
    launcher: Launcher = subprocess_launcher
    runs_root: Path = RUNS_ROOT
    python: str = sys.executable

    def __post_init__(self) -> None:
        self.plan: Plan = load_plan(self.plan_path)
        self.layout = Layout.of(self.plan_path, self.plan, self.runs_root)

    # -- what is there --------------------------------------------------------------------------
    def identity(self, unit: Unit) -> dict[str, Any]:
        """What the plan says this unit is."""
        if unit.kind == "warm":
            config = load_warmup_config(self.plan.warm_start.config)
            return {"config": dump_config(config)}
        if unit.kind == "train":
            return {"config": train_config_text(self.plan, unit)}
        return eval_identity(self.plan, self.layout, unit)

    @staticmethod
    def _schema_defaults(unit: Unit) -> str | None:
        """The config a unit's recorded config is read against where it lacks a field: the
        defaults, with each field whose default changed behaviour at its prior value."""
        if unit.kind == "warm":
            return dump_config(WarmupConfig())
        return dump_config(prior_config()) if unit.kind == "train" else None

    def is_done(self, unit: Unit) -> bool:
        """Its artifacts are intact and agree with the plan (ExperimentError when they do not
        agree: never redo, never mix)."""
        where = self.layout.artifacts(unit)
        recorded = artifacts.Recorded.read(where)
        if recorded is None:
            return False
        self._agree(unit, recorded.identity, where / artifacts.UNIT_FILE)
        if not recorded.intact(where):
            return False
        producer = self._producer(unit)
        if producer is not None:
            source = artifacts.Recorded.read(self.layout.artifacts(producer))
            if source is None or source.weights_sha256 != recorded.weights_sha256:
                raise ExperimentError(
                    f"{unit.name}: scored weights {recorded.weights_sha256} but "
                    f"{producer.name} recorded {source.weights_sha256 if source else 'none'}; "
                    f"remove {where} to score the recorded weights"
                )
        return True

    def _producer(self, unit: Unit) -> Unit | None:
        """The unit that recorded the weights an evaluation scores: a training run, or the
        warm start for the arm that evaluates it (None: a fixed checkpoint)."""
        if unit.kind != "eval":
            return None
        if self.plan.arms[unit.arm or ""].checkpoint == WARM:
            return warm_unit(self.plan, unit.seed)
        return trained_by(self.plan, unit)

    def _agree(self, unit: Unit, recorded: dict[str, Any], where: Path) -> None:
        planned = self.identity(unit)
        if "config" in planned and "config" in recorded:
            defaults = self._schema_defaults(unit)
            differences = config_differences(recorded["config"], planned["config"], defaults)
        else:
            differences = [
                f"{k}: {recorded.get(k)!r} ≠ {planned.get(k)!r}"
                for k in sorted(set(recorded) | set(planned))
                if recorded.get(k) != planned.get(k)
            ]
        if not differences:
            return
        shown = "; ".join(differences[:3]) + (" ..." if len(differences) > 3 else "")
        raise ExperimentError(
            f"{unit.name}: {where} disagrees with {self.plan_path} ({shown}); "
            "a changed plan is a new experiment, or a dated deviation with the unit removed"
        )

    # -- running ----------------------------------------------------------------------------------
    def run(self, only: Sequence[str] = (), workers: int = 1) -> RunReport:
        """Every unit not done, in order; `only`: unit names or prefixes (`fixed/seed0`).
        With `workers` > 1 (a Ray cluster's launcher), the units of different (arm, seed)
        pairs run at the same time once the warm start and the checkpoint arms are done."""
        report = RunReport()
        chosen = [u for u in units(self.plan) if not only or selected(u.name, only)]
        first = [u for u in chosen if u.kind == "warm" or u.seed is None]
        for unit in first if workers > 1 else chosen:
            self._unit(unit, report, len(chosen))
        if workers > 1:
            chains: dict[tuple[str | None, int | None], list[Unit]] = {}
            for unit in chosen:
                if unit not in first:
                    chains.setdefault((unit.arm, unit.seed), []).append(unit)
            with ThreadPoolExecutor(workers) as pool:
                futures = [
                    pool.submit(self._chain, chain, report, len(chosen))
                    for chain in chains.values()
                ]
                for future in futures:
                    future.result()
        return report

    def _chain(self, chain: list[Unit], report: RunReport, total: int) -> None:
        for unit in chain:
            self._unit(unit, report, total)

    def _unit(self, unit: Unit, report: RunReport, total: int) -> None:
        if self.is_done(unit):
            report.skipped.append(unit.name)
            return
        print(
            f"[{len(report.done) + len(report.skipped) + 1}/{total}] {unit.name}",
            file=sys.stderr,
            flush=True,
        )
        started = time.perf_counter()
        self.execute(unit)
        report.seconds[unit.name] = time.perf_counter() - started
        report.done.append(unit.name)

    def execute(self, unit: Unit) -> None:
        started = time.perf_counter()
        where = self.layout.artifacts(unit)
        identity = self.identity(unit)
        weights: str | None
        if unit.kind == "warm":
            weights = self._warm(unit)
        elif unit.kind == "train":
            weights = self._train(unit, identity["config"])
        else:
            weights = self._evaluate(unit)
        artifacts.write_unit(where, identity, weights, time.perf_counter() - started)

    def _warm(self, unit: Unit) -> str:
        run_dir = self.layout.run_dir(unit, self.plan)
        if not self._warm_weights(unit.seed).is_file():
            if (run_dir / "config.yaml").is_file():
                self._run_dir_agrees(unit, run_dir)
                self._launch(unit, ["spade.cli.train", "warmup", "--resume", str(run_dir)])
            else:
                self._warm_from_scratch(unit, run_dir)
        else:
            self._run_dir_agrees(unit, run_dir)
        return artifacts.record_warm(run_dir, self.layout.artifacts(unit))

    def _warm_weights(self, seed: int | None) -> Path:
        return self.plan.warm_model(seed) / "model.safetensors"

    def _warm_from_scratch(self, unit: Unit, run_dir: Path) -> None:
        self._clear(run_dir)
        recipe = str(self.plan.warm_start.config)
        self._launch(
            unit, ["spade.cli.train", "warmup", "--config", recipe, "--run-dir", str(run_dir)]
        )

    def _train(self, unit: Unit, config_text: str) -> str:
        run_dir = self.layout.run_dir(unit, self.plan)
        if not _finished(run_dir, self.plan.iterations):
            self._warm_start_present(unit.seed)
        if not _resumable(run_dir):
            self._clear(run_dir)
            config_file = run_dir.with_name(f"{run_dir.name}.config.yaml")
            config_file.parent.mkdir(parents=True, exist_ok=True)
            config_file.write_text(config_text, encoding="utf-8")
            self._launch(
                unit, ["spade.cli.train", "--config", str(config_file), "--run-dir", str(run_dir)]
            )
        else:
            self._run_dir_agrees(unit, run_dir)
            if not _finished(run_dir, self.plan.iterations):
                self._launch(unit, ["spade.cli.train", "--resume", str(run_dir)])
        return artifacts.record_training(run_dir, self.layout.artifacts(unit))

    def _evaluate(self, unit: Unit) -> str | None:
        checkpoint = checkpoint_of(self.plan, self.layout, unit)
        if checkpoint == str(self.plan.warm_model(unit.seed)):
            self._warm_start_present(unit.seed)
        trainer = trained_by(self.plan, unit)
        if trainer is not None and not Path(checkpoint).is_dir():
            raise ExperimentError(
                f"{unit.name}: {checkpoint} is gone (run directories are not committed); "
                f"remove {self.layout.artifacts(trainer)} to train {trainer.name} again"
            )
        output = self.layout.run_dir(unit, self.plan)
        self._clear(output)
        args = self.plan.evaluation.sets[unit.eval_set or ""].args
        self._launch(
            unit,
            [
                "spade.cli.eval",
                "--checkpoint",
                f"vllm:{checkpoint}",
                *args,
                "--output",
                str(output),
            ],
        )
        artifacts.record_evaluation(output, self.layout.artifacts(unit))
        return _scored_weights(output)

    def _warm_start_present(self, seed: int | None) -> None:
        """The recorded warm start `seed` trains from, bit for bit: weights found on disk
        must be the recorded ones, and weights that are gone (run directories are not
        committed, and a machine may not keep them) are rebuilt from the same recipe, which
        must give the recorded weights, or nothing is trained from them."""
        warm = warm_unit(self.plan, seed)
        recorded = artifacts.Recorded.read(self.layout.artifacts(warm))
        if recorded is None:
            return
        model = self.plan.warm_model(seed)
        if self._warm_weights(seed).is_file():
            found = weights_sha256(model) or "none"
            if found != recorded.weights_sha256:
                raise ExperimentError(
                    f"{warm.name}: the weights in {model} ({found[:12]}) are not the recorded "
                    f"{(recorded.weights_sha256 or 'none')[:12]}; move them away to rebuild"
                )
            return
        print(f"{warm.name}: {model} is gone; rebuilding it", file=sys.stderr)
        self._warm_from_scratch(warm, self.layout.run_dir(warm, self.plan))
        rebuilt = weights_sha256(model) or "none"
        if rebuilt != recorded.weights_sha256:
            extend = "the units trained from it" if seed is None else f"seed {seed}'s units"
            raise ExperimentError(
                f"{warm.name}: the rebuilt warm start's weights {rebuilt[:12]} differ from the "
                f"recorded {(recorded.weights_sha256 or 'none')[:12]}, so {extend} cannot be "
                f"extended here; a new warm start is a new experiment or a dated deviation"
            )
        print(f"{warm.name}: rebuilt; its weights match the recorded sha256", file=sys.stderr)

    def _run_dir_agrees(self, unit: Unit, run_dir: Path) -> None:
        text = (run_dir / "config.yaml").read_text(encoding="utf-8")
        if unit.kind == "warm":
            loaded = load_warmup_config(run_dir / "config.yaml")
            text = dump_config(loaded)
        self._agree(unit, {"config": text}, run_dir / "config.yaml")

    def _launch(self, unit: Unit, module_args: list[str]) -> None:
        status = self.launcher([self.python, "-m", *module_args])
        if status != 0:
            raise ExperimentError(f"{unit.name}: `{' '.join(module_args)}` exited {status}")

    @staticmethod
    def _clear(path: Path) -> None:
        if path.exists():
            shutil.rmtree(path)


def _resumable(run_dir: Path) -> bool:
    """A training run cut off before its first checkpoint has nothing to resume from: it
    starts again from scratch rather than failing on `--resume`."""
    return (run_dir / "config.yaml").is_file() and (
        latest_checkpoint(run_dir / "checkpoints") is not None or _finished(run_dir, 0)
    )


def _finished(run_dir: Path, iterations: int) -> bool:
    metrics = run_dir / "metrics.jsonl"
    done = len(metrics.read_text(encoding="utf-8").splitlines()) if metrics.is_file() else 0
    return done >= iterations and (run_dir / "final" / "model.safetensors").is_file()


def _scored_weights(output: Path) -> str | None:
    import json

    document = json.loads((output / "results.json").read_text(encoding="utf-8"))
    sha = (document.get("checkpoint") or {}).get("weights_sha256")
    return sha if isinstance(sha, str) else None
