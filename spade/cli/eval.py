"""spade-eval: score a checkpoint (or saved predictions) on held-out benchmarks."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from tabulate import tabulate
from tqdm import tqdm

from spade.allocator import with_tcmalloc
from spade.cli.errors import UsageError, one_line_errors
from spade.cli.sandbox_choice import add_sandbox_argument, use_sandbox
from spade.distributed import LOCAL, Cluster, ClusterError, Shard, ShardFailed, Workers, run_sharded
from spade.evals.ahead import Ahead, ahead_of
from spade.evals.declarations import Declaration, DeclarationError
from spade.evals.run import (
    BenchmarkRun,
    planned_ids,
    resolve_benchmarks,
    results_document,
    run_benchmark,
    run_shard,
    sharded_run,
    write_results,
)
from spade.evals.side_by_side import Job, run_side_by_side
from spade.models.policy import PolicyError
from spade.rollout import (
    Chains,
    CompletionCache,
    PolicyResponder,
    Predictions,
    PredictionsError,
    Responder,
    describe_critical_path,
)
from spade.sandbox import SandboxConfig, describe_backend, resolve_backend
from spade.suites import SuiteError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spade-eval", description=__doc__)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--checkpoint",
        help="HF model dir, alias (smollm2-135m), vllm:PATH, or openai:MODEL@BASE_URL",
    )
    source.add_argument("--predictions", type=Path, help="score saved outputs (JSONL), no model")
    parser.add_argument("--benchmarks", help="comma-separated benchmark names")
    parser.add_argument(
        "--preset",
        help="a preset of benchmarks/presets.yaml: ci, quick, full or learning (default quick)",
    )
    parser.add_argument("--limit", type=int, help="seeded slice of N samples per benchmark")
    parser.add_argument("--output", type=Path, help="results directory (default results/<run>)")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=_env_path("SPADE_DATA_DIR"),
        help="offline benchmark data (default $SPADE_DATA_DIR; else the hub)",
    )
    parser.add_argument("--baseline", help="print deltas against this leaderboard row")
    parser.add_argument(
        "--metric",
        help="deltas on this per-sample metric (e.g. return) instead of each benchmark's primary",
    )
    parser.add_argument("--leaderboard", type=Path, help="add or replace --label's row here")
    parser.add_argument("--compare", type=Path, help="regression gate against --label's row")
    parser.add_argument("--label", help="row label for --leaderboard / --compare")
    parser.add_argument(
        "--batch-size",
        type=int,
        help="generation batch size (default 8; on vLLM the engine's own: it batches continuously)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help=(
            "benchmarks run at once (default: all of them where the engine batches concurrent "
            "requests, vLLM or a server; else 1)"
        ),
    )
    parser.add_argument("--no-cache", action="store_true", help="bypass the completion cache")
    parser.add_argument(
        "--serve",
        action="store_true",
        help="generate through a vllm serve that spade starts on 127.0.0.1 (log in the output dir)",
    )
    add_sandbox_argument(parser)  # the code and suite benchmarks run generated code
    parser.add_argument(
        "--ray",
        nargs="?",
        const=LOCAL,
        metavar="ADDRESS",
        help=(
            "shard each benchmark's samples over Ray workers: HOST:PORT of a cluster, auto "
            "(the one `ray start` made here), or nothing for a local cluster"
        ),
    )
    parser.add_argument(
        "--ray-workers",
        type=int,
        metavar="N",
        help=(
            "Ray workers, each with its own policy backend (default: one per GPU of the "
            "cluster, else one per CPU)"
        ),
    )
    parser.add_argument(
        "--ray-gpus-per-worker",
        type=float,
        metavar="G",
        help=(
            "GPUs each Ray worker holds (default: 1 on a cluster with GPUs when a model runs "
            "locally, else 0)"
        ),
    )
    return parser


DEFAULT_BATCH = 8
"""The responder's batch (the transformers backend's own default too) unless --batch-size
says; on an engine that batches concurrent callers it is 64 (one call, not a limit)."""


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value) if value else None


def check_args(args: argparse.Namespace) -> None:
    if args.benchmarks and args.preset:
        raise UsageError("give --benchmarks or --preset, not both")
    for flag in ("limit", "batch_size", "jobs"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise UsageError(f"--{flag.replace('_', '-')} must be ≥ 1, got {value}")
    if (args.leaderboard or args.compare) and not args.label:
        raise UsageError("--leaderboard and --compare need --label")
    if args.data_dir is not None and not args.data_dir.is_dir():
        raise UsageError(f"data dir {args.data_dir} does not exist")
    if args.predictions is not None and not args.predictions.is_file():
        raise UsageError(f"predictions file {args.predictions} does not exist")
    if args.ray is None and (args.ray_workers is not None or args.ray_gpus_per_worker is not None):
        raise UsageError("--ray-workers and --ray-gpus-per-worker need --ray")
    if args.ray_workers is not None and args.ray_workers < 1:
        raise UsageError(f"--ray-workers must be >= 1, got {args.ray_workers}")
    if args.ray_gpus_per_worker is not None and args.ray_gpus_per_worker < 0:
        raise UsageError(f"--ray-gpus-per-worker must be >= 0, got {args.ray_gpus_per_worker}")
    if args.ray is not None and args.jobs is not None:
        raise UsageError("--jobs is for a local run: --ray shards each benchmark over its workers")
    if args.ray is not None and args.serve:
        raise UsageError(
            "give --serve or --ray, not both: each Ray worker holds its own engine (use "
            "--checkpoint vllm:PATH for vLLM on each worker's GPU)"
        )


def make_responder(args: argparse.Namespace) -> tuple[Responder, dict[str, Any]]:
    if args.predictions is not None:
        return Predictions.from_file(args.predictions), {
            "spec": f"predictions:{args.predictions}",
            "backend": "predictions",
            "path": str(args.predictions),
            "weights_sha256": None,
            "dtype": None,
        }
    from spade.models import ModelSpecError, load_policy, spade_cache_dir

    try:
        sizes = {"batch_size": args.batch_size} if args.batch_size else {}  # else each backend's
        # The engine starts at the first prompt the cache does not answer: a re-run starts none.
        policy = load_policy(args.checkpoint, args.serve, args.output, defer_start=True, **sizes)
    except ModelSpecError as exc:
        raise UsageError(str(exc)) from None
    info = policy.describe()
    model_key = info.weights_sha256 or f"{info.backend}:{info.model}@{info.endpoint}"
    if info.weights_sha256 and info.backend != "transformers":  # other numerics, other replies
        model_key = f"{info.backend}:{info.weights_sha256}"
    cache = None if args.no_cache else CompletionCache(spade_cache_dir() / "completions.sqlite")
    checkpoint = {
        "spec": args.checkpoint,
        "backend": info.backend,
        "path": info.model,
        "weights_sha256": info.weights_sha256,
        "dtype": info.dtype,
        "device": info.device,
        "endpoint": info.endpoint,
    }
    # A batching engine takes large batches: a responder batch is one call, not a limit.
    batch = args.batch_size or (64 if batches_callers(policy) else DEFAULT_BATCH)
    return PolicyResponder(policy, model_key, cache, batch, Chains()), checkpoint


def plan(
    args: argparse.Namespace, respond: Responder | None
) -> tuple[list[Declaration], str | None, dict[str, list[str]]]:
    """The benchmarks to run, the preset, and the ids saved predictions fix (if any)."""
    names = args.benchmarks.split(",") if args.benchmarks else None
    given: dict[str, list[str]] = {}
    if isinstance(respond, Predictions):
        names = names or sorted(respond.predictions)
        given = {n: respond.ids(n) for n in names}
    declarations, preset = resolve_benchmarks(names, args.preset)
    return declarations, preset, given


def runs_code(declarations: list[Declaration]) -> bool:
    return any(d.runner in ("code", "suite") for d in declarations)


def run_all(
    args: argparse.Namespace, respond: Responder
) -> tuple[list[BenchmarkRun], str | None, int]:
    """The runs, the preset, and how many benchmarks ran at once."""
    declarations, preset, given = plan(args, respond)
    if runs_code(declarations):  # they run generated code
        resolve_backend()  # no usable sandbox: one line and exit 2, before any sample runs
    at_once = jobs(args.jobs, len(declarations), respond)
    ahead = at_once > 1 and batches_callers(getattr(respond, "policy", None))
    bar = _Progress(at_once)

    def job(d: Declaration) -> Job[BenchmarkRun]:
        ids = given.get(d.name)
        # lm-eval scores on the main thread in turn; on an engine that batches callers its
        # generation need not wait for that turn.
        early = ahead_of(d, respond, args.data_dir, ids, preset, args.limit) if ahead else None
        ask = respond if early is None else early
        run = partial(run_benchmark, d, ask, args.data_dir, ids, preset, args.limit, bar.update)
        if early is None:
            return Job(d.runner, run)
        return Job(d.runner, partial(_when_ready, early, run), early.fetch)

    runs = run_side_by_side([job(d) for d in declarations], at_once)
    bar.close()
    return runs, preset, at_once


def _when_ready(early: Ahead, run: Callable[[], BenchmarkRun]) -> BenchmarkRun:
    """The run once its generation is fetched; its seconds count from the fetch's start, so
    they hold its generation as well as its scoring pass."""
    early.ready()
    done = run()
    assert early.started is not None  # the fetch set it before `ready` could return
    return replace(done, seconds=time.perf_counter() - early.started)


def jobs(given: int | None, benchmarks: int, respond: Responder) -> int:
    """Benchmarks at once: --jobs, else all where the engine batches concurrent callers."""
    if given is not None:
        return min(given, benchmarks)
    return benchmarks if batches_callers(getattr(respond, "policy", None)) else 1


def batches_callers(policy: object) -> bool:
    """Whether the policy takes calls from several threads and batches them together."""
    return bool(getattr(policy, "concurrent_callers", False))


class _Progress:
    """One bar over every benchmark's samples; a line as each benchmark finishes."""

    def __init__(self, at_once: int) -> None:
        self.bar = tqdm(total=0, unit="sample", file=sys.stderr, dynamic_ncols=True)
        self.at_once = at_once
        self.counts: dict[str, tuple[int, int]] = {}
        self.lock = threading.Lock()

    def update(self, name: str, done: int, total: int) -> None:
        with self.lock:
            finished = self.counts.get(name, (0, -1))[0] < total == done
            self.counts[name] = (done, total)
            running = [n for n, (d, t) in self.counts.items() if d < t]
            self.bar.total = sum(t for _, t in self.counts.values())
            self.bar.n = sum(d for d, _ in self.counts.values())
            shown = running if self.at_once > 1 else [name]
            self.bar.set_description(", ".join(shown)[:60] or name, refresh=False)
            if finished and self.at_once > 1:
                self.bar.write(f"{name}: {total} samples done")
            self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


def run_on_ray(
    args: argparse.Namespace,
) -> tuple[list[BenchmarkRun], str | None, dict[str, Any], dict[str, Any]]:
    """--ray: each benchmark's seeded samples split over Ray workers (spade.distributed), each
    with its own responder, merged into the runs a local run returns; also the checkpoint and
    sandbox records, as the workers saw them."""
    saved = make_responder(args) if args.predictions is not None else None
    declarations, preset, given = plan(args, saved[0] if saved else None)
    ids = {
        d.name: planned_ids(d, args.data_dir, given.get(d.name), preset, args.limit)
        for d in declarations
    }
    # Saved predictions travel to the workers as they are; a checkpoint is loaded on each.
    setup = partial(_given, saved) if saved else partial(make_responder, args)
    work = partial(run_shard, {d.name: d for d in declarations}, args.data_dir)
    done: dict[str, int] = {}

    def progress(name: str, count: int) -> None:
        done[name] = count
        bar.n = sum(done.values())
        bar.set_description(name)

    def retry(shard: Shard) -> None:
        tqdm.write(
            f"spade-eval: {shard.label}: its Ray worker died; running it once more on "
            "a restarted worker",
            file=sys.stderr,
        )

    total = sum(map(len, ids.values()))
    with Cluster(args.ray) as cluster:
        workers = ray_workers(args, cluster)
        check = partial(check_workers, runs_code(declarations))
        with tqdm(
            total=total, unit="sample", file=sys.stderr, dynamic_ncols=True, desc="ray"
        ) as bar:
            sharded = run_sharded(cluster, setup, ids, work, workers, check, progress, retry)
    runs = [
        sharded_run(d, sharded.results[d.name], sharded.seconds[d.name], args.data_dir)
        for d in declarations
    ]
    first = sharded.workers[0]
    return runs, preset, first["setup"], first["sandbox"]


def _given(value: tuple[Responder, dict[str, Any]]) -> tuple[Responder, dict[str, Any]]:
    """A worker's setup on saved predictions: the driver's responder, as it arrived."""
    return value


def ray_workers(args: argparse.Namespace, cluster: Cluster) -> Workers:
    """--ray-workers and --ray-gpus-per-worker, defaulted from the cluster and checked
    against it (one line when it could never hold them)."""
    have = cluster.resources()
    local_model = args.checkpoint is not None and not args.checkpoint.startswith("openai:")
    gpus = args.ray_gpus_per_worker
    if gpus is None:
        gpus = 1.0 if have.gpus and local_model else 0.0
    count = args.ray_workers or max(1, int(have.gpus // gpus if gpus else have.cpus))
    asked = f"--ray-workers {count}" if args.ray_workers else f"--ray ({count} workers by default)"
    if args.ray_gpus_per_worker is not None:
        asked += f" --ray-gpus-per-worker {gpus:g}"
    cluster.require(count, 1.0, gpus, asked)
    print(
        f"spade-eval: {count} Ray workers (1 CPU, {gpus:g} GPU each) on the cluster at "
        f"{cluster.address} ({have.describe()})",
        file=sys.stderr,
    )
    return Workers(count, 1.0, gpus)


def check_workers(runs_code: bool, workers: list[dict[str, Any]]) -> None:
    """Before any shard runs: every worker loaded the same weights and has the same sandbox,
    and it can run generated code where a benchmark needs to."""
    from spade.sandbox import SandboxUnavailable

    first = workers[0]
    for worker in workers[1:]:
        for key in ("backend", "weights_sha256"):
            if worker["setup"].get(key) != first["setup"].get(key):
                raise UsageError(
                    f"Ray workers disagree on the checkpoint's {key}: {first['setup'].get(key)} "
                    f"on {first['node']}, {worker['setup'].get(key)} on {worker['node']}"
                )
        if worker["sandbox"] != first["sandbox"]:
            raise UsageError(
                f"Ray workers' sandboxes differ ({first['sandbox'].get('backend')} on "
                f"{first['node']}, {worker['sandbox'].get('backend')} on {worker['node']}): "
                "choose one with --sandbox"
            )
    if runs_code and first["sandbox"].get("backend") is None:
        raise SandboxUnavailable(f"on Ray node {first['node']}: {first['sandbox']['unavailable']}")


def print_summary(document: dict[str, Any]) -> None:
    rows = []
    for name, entry in document["benchmarks"].items():
        primary = entry["metrics"].get(entry["primary"], {})
        low, high = primary.get("ci95", [float("nan")] * 2)
        rows.append(
            [
                name,
                entry["n"],
                entry["primary"],
                primary.get("value"),
                f"[{low:.3f}, {high:.3f}]",
                entry["parse_failures"],
                entry["seconds"],
            ]
        )
    headers = ["benchmark", "n", "metric", "value", "95% CI", "parse fail", "s"]
    print(tabulate(rows, headers=headers, floatfmt=".3f", tablefmt="github"))
    for name, entry in document["benchmarks"].items():
        note = scoring_timeout_note(entry)
        if note:
            print(f"{name}: {note}")


def scoring_timeout_note(entry: dict[str, Any]) -> str | None:
    """What the scorers' time limits did to a benchmark's scores, when they did anything."""
    timeouts, retries = entry.get("scoring_timeouts", 0), entry.get("scoring_retries", 0)
    if timeouts:
        return (
            f"{timeouts} sample(s) hit the scoring time limit even when retried: their scores "
            "may be false 0s (a loaded machine? rerun them on a quieter one)"
        )
    if retries:
        return f"{retries} scoring attempt(s) hit the time limit and passed when retried"
    return None


def default_output(args: argparse.Namespace) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    source = args.checkpoint or args.predictions.stem
    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in str(source))[-40:]
    return Path("results") / f"{slug}-{stamp}"


@one_line_errors("spade-eval")
def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["view"]:  # `spade-eval view DIR`: the report viewer, its own flags
        from spade.cli.view import main as view

        return view(given[1:])
    if given[:1] == ["deltas"]:  # `spade-eval deltas ROW --baseline ROW`: stored rows only
        from spade.cli.deltas import main as deltas

        return deltas(given[1:])
    args = build_parser().parse_args(argv)
    check_args(args)
    args.output = args.output or default_output(args)  # before a served model logs there
    use_sandbox("spade-eval", SandboxConfig(backend=args.backend))
    try:
        at_once = 1  # a Ray run shards each benchmark in turn
        critical_path = None  # generated elsewhere (Ray workers) or not at all (predictions)
        if args.ray is not None:
            runs, preset, checkpoint, sandbox = run_on_ray(args)
        else:
            respond, checkpoint = make_responder(args)
            runs, preset, at_once = run_all(args, respond)
            sandbox = describe_backend()
            if isinstance(respond, PolicyResponder) and respond.chains is not None:
                critical_path = respond.chains.summary()
    except (
        DeclarationError,
        PredictionsError,
        SuiteError,
        PolicyError,
        ClusterError,
        ShardFailed,
    ) as exc:
        raise UsageError(str(exc)) from None
    command = ["spade-eval", *(argv if argv is not None else sys.argv[1:])]
    settings = {
        "preset": preset,
        "limit": args.limit,
        "benchmarks": [r.declaration.name for r in runs],
        "data_dir": str(args.data_dir) if args.data_dir else None,
        "jobs": at_once,
        "command": shlex.join(command),
        "sandbox": sandbox,
    }
    document = results_document(runs, checkpoint, settings, critical_path)
    output = args.output or default_output(args)
    path = write_results(output, document, runs)
    print_summary(document)
    if line := describe_critical_path(critical_path):
        print(line)
    print(f"\nresults: {path}")
    from spade.cli.leaderboard_actions import apply_leaderboard_actions

    samples = [sample for run in runs for sample in run.samples]
    return apply_leaderboard_actions(args, document, samples, output)


cli = with_tcmalloc(main)
"""The console script: `main` under tcmalloc on a CPU machine (spade.allocator)."""

if __name__ == "__main__":
    sys.exit(main())
