"""An experiment folder (`spade-experiment`) as page data: the plan, its units, the primary
metric per arm and seed, the pre-registered tests, training curves per (arm, seed), and the
samples whose value changed between the two arms of each comparison.

Everything comes from the committed artifacts (`spade.experiments.records.Experiment`), so no
run directory is needed; a sample's detail is its compact record (score, parsed, metrics and a
digest of the output), as the full outputs stay in the run directories. An interim folder
(units missing) renders too: what has not run shows as missing.
"""

from __future__ import annotations

from pathlib import Path
from statistics import fmean
from typing import Any

from spade.experiments.plan import WARM, Comparison, PlanError
from spade.experiments.records import Experiment
from spade.experiments.units import Unit, units
from spade.experiments.verdict import VERDICT_FILE, effect
from spade.viewer.errors import ViewError
from spade.viewer.records import read_json, read_jsonl
from spade.viewer.sections import Section, fields_section
from spade.viewer.strings import StringTable
from spade.viewer.training import numeric_series

PLAN_FILE = "plan.yaml"
Records = dict[Unit, dict[tuple[str, str], dict[str, Any]]]
"""An evaluation unit's samples.jsonl records by (benchmark, sample id)."""


def is_experiment_dir(path: Path) -> bool:
    return (path / PLAN_FILE).is_file()


def experiment_page(path: Path, strings: StringTable) -> dict[str, Any]:
    try:
        experiment = Experiment.open(path)
    except PlanError as exc:
        raise ViewError(str(exc)) from None
    records = read_records(experiment)
    plan = experiment.plan
    done = experiment.done()
    return {
        "kind": "experiment",
        "title": f"spade experiment: {plan.name}",
        "path": str(path),
        "facts": plan_facts(experiment, len(done)),
        "units": unit_rows(experiment),
        "arms": arm_rows(experiment),
        "means": primary_means(experiment),
        "effects": [
            effect_data(experiment, c, n == 0) for n, c in enumerate(plan.test.comparisons)
        ],
        "verdict": _text_of(path / VERDICT_FILE, strings),
        "plan": _text_of(path / PLAN_FILE, strings),
        "curves": list(plan.curves),
        "series": curve_series(experiment),
        "changes": [
            changes_data(experiment, comparison, kind, records, strings)
            for comparison, kind in change_comparisons(experiment)
        ],
    }


def read_records(experiment: Experiment) -> Records:
    """Every recorded unit's files read once with errors naming the file (the Experiment's
    own readers would raise a bare JSON error), and each evaluation's sample records."""
    found: Records = {}
    for unit in units(experiment.plan):
        where = experiment.layout.artifacts(unit)
        if not (where / "unit.json").is_file():
            continue
        read_json(where / "unit.json")
        if unit.kind == "train" and (where / "metrics.jsonl").is_file():
            read_jsonl(where / "metrics.jsonl")
        if unit.kind == "eval" and (where / "samples.jsonl").is_file():
            samples = read_jsonl(where / "samples.jsonl")
            found[unit] = {(str(r.get("benchmark")), str(r.get("id"))): r for r in samples}
    return found


def _text_of(path: Path, strings: StringTable) -> int | None:
    return strings.add(path.read_text(encoding="utf-8")) if path.is_file() else None


def plan_facts(experiment: Experiment, done: int) -> list[list[str]]:
    plan = experiment.plan
    first = plan.test.comparisons[0]
    total = len(units(plan))
    status = "complete" if done == total else "interim look"
    pairs = [
        ("experiment", plan.name),
        ("registered", plan.registered.isoformat()),
        ("status", f"{status} ({done} of {total} units done)"),
        ("seeds", ", ".join(map(str, plan.seeds))),
        ("iterations", str(plan.iterations)),
        ("primary metric", plan.evaluation.primary.label),
        ("registered test", f"{first.label}, {first.alternative}, α = {plan.test.alpha}"),
        ("warm start", f"{plan.warm_start.config} → {plan.warm_start.run_dir}"),
        ("question", " ".join(plan.question.split())),
    ]
    pairs += [(f"deviation {d.date.isoformat()}", d.what) for d in plan.deviations]
    return [[name, value] for name, value in pairs]


def unit_rows(experiment: Experiment) -> list[list[Any]]:
    """`[unit, kind, status, seconds, finished]` per unit, in the order they run."""
    rows = []
    for unit in units(experiment.plan):
        record = experiment.unit_record(unit)
        if record is None:
            rows.append([unit.name, unit.kind, "missing", None, None])
        else:
            rows.append(
                [unit.name, unit.kind, "done", record.get("seconds"), record.get("finished")]
            )
    return rows


def arm_rows(experiment: Experiment) -> list[dict[str, Any]]:
    """Each arm's name, whether it is trained, and its recipe in one line."""
    rows = []
    for name, arm in experiment.plan.arms.items():
        if arm.config is not None:
            extra = [*arm.ablations, *(f"{k}={v}" for k, v in arm.set.items())]
            recipe = str(arm.config) + (f" ({', '.join(extra)})" if extra else "")
        else:
            recipe = f"checkpoint {arm.checkpoint}"
        rows.append({"name": name, "trained": arm.trained, "recipe": recipe})
    return rows


def _mean(experiment: Experiment, arm: str, seed: int | None) -> list[float] | None:
    """`[mean, samples]` of the primary metric over one evaluation unit's samples."""
    scores = experiment.scores(arm, seed, experiment.plan.evaluation.primary)
    return [fmean(scores.values()), len(scores)] if scores else None


def primary_means(experiment: Experiment) -> dict[str, Any]:
    """Rows `[arm, [mean, n] or None per seed (one cell for a checkpoint arm), the mean over
    the seeds run]` for the arms evaluated on the primary metric's set."""
    plan = experiment.plan
    rows = []
    for name in plan.arms_of(plan.evaluation.primary.set):
        if plan.arms[name].trained:
            cells = [_mean(experiment, name, seed) for seed in plan.seeds]
        else:
            cells = [_mean(experiment, name, None)]
        values = [cell[0] for cell in cells if cell is not None]
        rows.append([name, cells, fmean(values) if values else None])
    return {"seeds": list(plan.seeds), "rows": rows}


def effect_data(experiment: Experiment, comparison: Comparison, registered: bool) -> dict[str, Any]:
    """The comparison on the primary metric as the verdict computes it (None: not run)."""
    found = effect(experiment, comparison, experiment.plan.evaluation.primary)
    data: dict[str, Any] = {
        "label": comparison.label,
        "alternative": comparison.alternative,
        "registered": registered,
        "effect": None,
    }
    if found is not None:
        per_seed = [[s, *v] for s, v in zip(found.seeds, found.per_seed, strict=True)]
        data["effect"] = {
            "seeds": len(found.seeds),
            "mean": found.mean,
            "ci": [found.lo, found.hi],
            "p": found.p_value,
            "test": found.test,
            "per_seed": per_seed,
        }
    return data


def curve_series(experiment: Experiment) -> dict[str, list[dict[str, Any]]]:
    """Per curve of the plan, one line per (trained arm, seed run): `{arm, seed, points}`
    with points `[[step, value], ...]`; a run that did not record the metric has no line."""
    series: dict[str, list[dict[str, Any]]] = {key: [] for key in experiment.plan.curves}
    for arm in experiment.trained_arms():
        for seed in experiment.plan.seeds:
            found = numeric_series(experiment.metrics(arm, seed))
            for key, lines in series.items():
                if found.get(key):
                    lines.append({"arm": arm, "seed": seed, "points": found[key]})
    return series


def change_comparisons(experiment: Experiment) -> list[tuple[Comparison, str]]:
    """The plan's comparisons, then each trained arm against the warm start's own evaluation
    (an arm with `checkpoint: warm`) where the plan does not already compare the two."""
    plan = experiment.plan
    chosen = [(c, "registered") for c in plan.test.comparisons]
    warm = next((n for n, arm in plan.arms.items() if arm.checkpoint == WARM), None)
    if warm is not None:
        pairs = {(c.a, c.b) for c in plan.test.comparisons}
        chosen += [
            (Comparison(a=arm, b=warm), "vs warm start")
            for arm in experiment.trained_arms()
            if (arm, warm) not in pairs
        ]
    return chosen


def changes_data(
    experiment: Experiment,
    comparison: Comparison,
    kind: str,
    records: Records,
    strings: StringTable,
) -> dict[str, Any]:
    """The primary metric's samples whose value differs between a and b, seed by seed: rows
    `[sample id, seed, a's value, b's value]`, each with both compact records side by side,
    and per seed `[seed, a higher, b higher, unchanged]` over the samples both have."""
    plan, ref = experiment.plan, experiment.plan.evaluation.primary
    trained = plan.arms[comparison.a].trained or plan.arms[comparison.b].trained
    rows: list[list[Any]] = []
    details: list[list[list[Section]]] = []
    per_seed: list[list[Any]] = []
    for seed in plan.seeds if trained else [None]:
        a = experiment.scores(comparison.a, seed, ref)
        b = experiment.scores(comparison.b, seed, ref)
        if a is None or b is None:
            continue
        common = [i for i in a if i in b]
        changed = [i for i in common if a[i] != b[i]]
        higher = sum(a[i] > b[i] for i in changed)
        per_seed.append([seed, higher, len(changed) - higher, len(common) - len(changed)])
        units_ab = [
            experiment.eval_unit(arm, seed, ref.set) for arm in (comparison.a, comparison.b)
        ]
        for sample_id in changed:
            rows.append([sample_id, seed, a[sample_id], b[sample_id]])
            found = [records.get(unit, {}).get((ref.benchmark, sample_id)) for unit in units_ab]
            details.append([sample_sections(record or {}, strings) for record in found])
    return {
        "label": comparison.label,
        "a": comparison.a,
        "b": comparison.b,
        "kind": kind,
        "metric": ref.label,
        "per_seed": per_seed,
        "rows": rows,
        "details": details,
    }


def sample_sections(record: dict[str, Any], strings: StringTable) -> list[Section]:
    """A compact sample record (spade.experiments.artifacts.sample_summary) as one section."""
    metrics, parsed = record.get("metrics"), record.get("parsed")
    facts = [
        ("benchmark", record.get("benchmark")),
        ("sample id", record.get("id")),
        ("score", record.get("score")),
        ("parsed", None if parsed is None else "yes" if parsed else "no"),
        *(metrics.items() if isinstance(metrics, dict) else []),
        ("output sha256 (16)", record.get("output_sha256_16")),
    ]
    return [fields_section("Sample", facts, strings)]
