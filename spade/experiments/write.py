"""Writing an experiment's verdict and figures next to its units."""

from __future__ import annotations

from pathlib import Path

from spade.atomic import write_atomic
from spade.experiments.figures import write_figures
from spade.experiments.records import Experiment
from spade.experiments.verdict import VERDICT_FILE, render


def write_verdict(root: Path, out: Path | None = None) -> list[Path]:
    """`verdict.md`, `curves.svg` and `effects.svg` of the experiment at `root` (into `out`,
    default `root` itself), from its committed artifacts alone."""
    experiment = Experiment.open(root)
    target = out or root
    target.mkdir(parents=True, exist_ok=True)
    write_atomic(target / VERDICT_FILE, render(experiment))
    return [target / VERDICT_FILE, *write_figures(experiment, target)]
