"""A training run's metrics: JSONL (the record), TensorBoard (live view), PNG curves."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spade.atomic import write_atomic

DESIGNS_FILE = "designs.jsonl"
EPISODES_FILE = "episodes.jsonl"
PLAYS_FILE = "plays.jsonl"
"""One line per episode an iteration played (spade.selfplay.iteration_records.play_records)."""
ITERATION_LOGS = (DESIGNS_FILE, EPISODES_FILE, PLAYS_FILE)
"""The run dir's per-iteration JSONL logs beside metrics.jsonl, each line with its `step`."""

CURVES = [
    ("designer/validity_rate", "designer validity rate"),
    ("envs/win_rate", "agent success rate (no hint)"),
    ("envs/regret", "regret (hint − no hint)"),
    ("agent/return", "agent return (no hint)"),
    ("agent/progress", "agent progress: last reward, truncated too"),
    ("update/optimizer_steps", "optimizer steps"),
    ("update/agent/with_gradient", "agent samples with gradient"),
    ("update/designer/with_gradient", "designer samples with gradient"),
    ("designer/groups_with_signal", "design groups whose rewards differ (share)"),
    ("update/mismatch/logprob_abs_diff_mean", "rollout-vs-learner |Δ logprob|"),
    ("levels/played_mean", "difficulty level played, mean (adaptive pool)"),
    ("levels/ceiling_mean", "difficulty ceiling, mean over envs (adaptive pool)"),
]


def mean_or_nan(values: list[float]) -> float:
    """A metric's mean; NaN when nothing was measured (plotted as a gap, not as 0)."""
    return sum(values) / len(values) if values else float("nan")


def finite(value: object) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


class RunLog:
    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / "metrics.jsonl"
        self.run_dir = run_dir
        self._writer: Any = None  # opened on the first write: a run that fails to start
        # (a bad --resume, say) must leave its directory as it was

    def write(self, step: int, metrics: dict[str, Any]) -> None:
        record = {"step": step, **metrics}
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, default=float) + "\n")
        writer = self._tensorboard()
        if writer is not None:
            for key, value in metrics.items():
                if isinstance(value, (int, float)) and math.isfinite(value):
                    writer.add_scalar(key, value, step)
            writer.flush()

    def _tensorboard(self) -> Any:
        if self._writer is None:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:  # tensorboard is optional for the run itself
                return None
            self._writer = SummaryWriter(str(self.run_dir / "tensorboard"))
        return self._writer

    def write_designs(self, step: int, designs: list[dict[str, Any]]) -> None:
        """Every designer completion of an iteration and its fate, for inspection
        (`designs.jsonl`: what the designer wrote, which check failed, the hint)."""
        self._append(DESIGNS_FILE, step, designs)

    def write_episodes(self, step: int, episodes: list[dict[str, Any]]) -> None:
        """Sample episodes of an iteration, with and without the hint on the same env and
        seed (`episodes.jsonl`: transcripts, rewards, how each ended)."""
        self._append(EPISODES_FILE, step, episodes, default=str)

    def write_plays(self, step: int, plays: list[dict[str, Any]]) -> None:
        """Every play of an iteration, one compact line each (`plays.jsonl`)."""
        self._append(PLAYS_FILE, step, plays)

    def _append(
        self,
        name: str,
        step: int,
        records: list[dict[str, Any]],
        default: Callable[[Any], Any] | None = None,
    ) -> None:
        """One JSON line per record, tagged with its iteration (what `truncate_after` reads)."""
        with (self.run_dir / name).open("a", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps({"step": step, **record}, default=default) + "\n")

    def records(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]

    def truncate_after(self, step: int) -> None:
        """Drop records past `step` (a resumed run redoes the unfinished iteration)."""
        for path in (self.path, *(self.run_dir / name for name in ITERATION_LOGS)):
            if not path.exists():
                continue
            lines = [line for line in path.read_text().splitlines() if line.strip()]
            kept = [line for line in lines if json.loads(line)["step"] <= step]
            write_atomic(path, "".join(line + "\n" for line in kept))  # a kill keeps the old file

    def plot(self) -> Path:
        return plot_curves({self.run_dir.name: self.records()}, self.run_dir / "curves.png")

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


def read_records(run_dir: Path) -> list[dict[str, Any]]:
    """A run directory's metrics records; ValueError naming the folder when it has none."""
    records = RunLog(run_dir).records() if run_dir.is_dir() else []
    if not records:
        raise ValueError(f"{run_dir}: no metrics.jsonl records (not a spade-train run directory?)")
    return records


def curves_figure(runs: dict[str, list[dict[str, Any]]]) -> Any:
    """The CURVES of one or more runs (label: records) as a matplotlib figure; with several
    runs each panel has one line per run, so two arms compare at a glance."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = 3
    rows = -(-len(CURVES) // columns)
    figure, grid = plt.subplots(rows, columns, figsize=(4 * columns, 3 * rows))
    for axis in grid.flat[len(CURVES) :]:
        axis.remove()  # the grid is rounded up to whole rows
    for axis, (key, title) in zip(grid.flat[: len(CURVES)], CURVES, strict=True):
        for label, records in runs.items():
            values = [(r["step"], curve_value(r, key)) for r in records]
            points = [(step, value) for step, value in values if finite(value)]
            if points:
                axis.plot(*zip(*points, strict=True), marker="o", label=label)
        axis.set_title(title, fontsize=9)
        axis.set_xlabel("iteration")
        if len(runs) > 1 and axis.has_data():
            axis.legend(fontsize=7)
    figure.tight_layout()
    return figure


def curve_value(record: dict[str, Any], key: str) -> Any:
    """`record[key]`; a role's samples with gradient are 0 in an iteration where the role had
    no samples at all (the update then reports nothing for it)."""
    role = key.removeprefix("update/").removesuffix("/with_gradient")
    if key not in record and key.endswith("/with_gradient") and record.get(f"samples/{role}") == 0:
        return 0.0
    return record.get(key)


def plot_curves(runs: dict[str, list[dict[str, Any]]], out: Path) -> Path:
    """`curves_figure(runs)` written to the PNG `out`."""
    import matplotlib.pyplot as plt

    figure = curves_figure(runs)
    tmp = out.with_name(f".{out.name}.tmp.png")
    figure.savefig(tmp, dpi=100)
    plt.close(figure)
    tmp.replace(out)  # a kill mid-write keeps the old figure
    return out
