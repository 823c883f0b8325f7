"""Which kind of directory was given, and the report for it."""

from __future__ import annotations

from pathlib import Path

from spade.atomic import write_atomic
from spade.viewer.errors import ViewError
from spade.viewer.experiment import experiment_page, is_experiment_dir
from spade.viewer.page import render_page
from spade.viewer.results import is_results_dir, load_results, results_page
from spade.viewer.strings import StringTable
from spade.viewer.training import is_run_dir, run_page


def build_report(path: Path, compare: Path | None = None) -> str:
    """The HTML report of a results dir (optionally compared with another), a run dir or an
    experiment folder (plan.yaml)."""
    if not path.is_dir():
        raise ViewError(f"{path}: no such directory")
    strings = StringTable()
    if is_experiment_dir(path):
        if compare is not None:
            raise ViewError(f"{path} is an experiment folder: --compare takes two results dirs")
        return render_page(experiment_page(path, strings), strings)
    if is_results_dir(path):
        other = None
        if compare is not None:
            if not compare.is_dir():
                raise ViewError(f"--compare {compare}: no such directory")
            if not is_results_dir(compare):
                raise ViewError(
                    f"--compare {compare}: not a spade-eval results dir (no results.json)"
                )
            other = load_results(compare)
        return render_page(results_page(load_results(path), strings, other), strings)
    if is_run_dir(path):
        if compare is not None:
            raise ViewError(f"{path} is a spade-train run dir: --compare takes two results dirs")
        return render_page(run_page(path, strings), strings)
    raise ViewError(
        f"{path}: neither a spade-eval results dir (results.json), a spade-train run dir "
        "(metrics.jsonl, designs.jsonl or config.yaml) nor an experiment folder (plan.yaml)"
    )


def write_report(path: Path, out: Path, compare: Path | None = None) -> Path:
    """Build the report and write it atomically to `out` (a reader never sees half a file)."""
    write_atomic(out, build_report(path, compare))
    return out
