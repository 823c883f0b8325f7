"""spade-eval: score a checkpoint (or saved predictions) on held-out benchmarks."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tabulate import tabulate
from tqdm import tqdm

from spade.cli.errors import UsageError, one_line_errors
from spade.cli.sandbox_choice import add_sandbox_argument, use_sandbox
from spade.evals.declarations import DeclarationError
from spade.evals.run import (
    BenchmarkRun,
    resolve_benchmarks,
    results_document,
    run_benchmark,
    write_results,
)
from spade.models.policy import PolicyError
from spade.rollout import CompletionCache, PolicyResponder, Predictions, PredictionsError, Responder
from spade.sandbox import SandboxConfig, describe_backend, resolve_backend
from spade.suites import SuiteError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spade-eval", description=__doc__)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--checkpoint", help="HF model dir, alias (smollm2-135m), vllm:PATH, "
                        "or openai:MODEL@BASE_URL")  # fmt: skip
    source.add_argument("--predictions", type=Path, help="score saved outputs (JSONL), no model")
    parser.add_argument("--benchmarks", help="comma-separated benchmark names")
    parser.add_argument("--preset", help="ci, quick or full (default quick)")
    parser.add_argument("--limit", type=int, help="seeded slice of N samples per benchmark")
    parser.add_argument("--output", type=Path, help="results directory (default results/<run>)")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=_env_path("SPADE_DATA_DIR"),
        help="offline benchmark data (default $SPADE_DATA_DIR; else the hub)",
    )
    parser.add_argument("--baseline", help="print deltas against this leaderboard row")
    parser.add_argument("--leaderboard", type=Path, help="add or replace --label's row here")
    parser.add_argument("--compare", type=Path, help="regression gate against --label's row")
    parser.add_argument("--label", help="row label for --leaderboard / --compare")
    parser.add_argument("--batch-size", type=int, default=8, help="generation batch size")
    parser.add_argument("--no-cache", action="store_true", help="bypass the completion cache")
    parser.add_argument("--serve", action="store_true", help="generate through a vllm serve that "
                        "spade starts on 127.0.0.1 (log in the output dir)")  # fmt: skip
    add_sandbox_argument(parser)  # the code and suite benchmarks run generated code
    return parser


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value) if value else None


def check_args(args: argparse.Namespace) -> None:
    if args.benchmarks and args.preset:
        raise UsageError("give --benchmarks or --preset, not both")
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit must be ≥ 1, got {args.limit}")
    if (args.leaderboard or args.compare) and not args.label:
        raise UsageError("--leaderboard and --compare need --label")
    if args.data_dir is not None and not args.data_dir.is_dir():
        raise UsageError(f"data dir {args.data_dir} does not exist")
    if args.predictions is not None and not args.predictions.is_file():
        raise UsageError(f"predictions file {args.predictions} does not exist")


def make_responder(args: argparse.Namespace) -> tuple[Responder, dict[str, Any]]:
    if args.predictions is not None:
        return Predictions.from_file(args.predictions), {
            "spec": f"predictions:{args.predictions}", "backend": "predictions",
            "path": str(args.predictions), "weights_sha256": None, "dtype": None,
        }  # fmt: skip
    from spade.models import ModelSpecError, load_policy, spade_cache_dir

    try:
        policy = load_policy(args.checkpoint, args.serve, args.output, batch_size=args.batch_size)
    except ModelSpecError as exc:
        raise UsageError(str(exc)) from None
    info = policy.describe()
    model_key = info.weights_sha256 or f"{info.backend}:{info.model}@{info.endpoint}"
    if info.weights_sha256 and info.backend != "transformers":  # other numerics, other replies
        model_key = f"{info.backend}:{info.weights_sha256}"
    cache = None if args.no_cache else CompletionCache(spade_cache_dir() / "completions.sqlite")
    checkpoint = {"spec": args.checkpoint, "backend": info.backend, "path": info.model,
                  "weights_sha256": info.weights_sha256, "dtype": info.dtype,
                  "device": info.device, "endpoint": info.endpoint}  # fmt: skip
    return PolicyResponder(policy, model_key, cache, args.batch_size), checkpoint


def run_all(args: argparse.Namespace, respond: Responder) -> tuple[list[BenchmarkRun], str | None]:
    names = args.benchmarks.split(",") if args.benchmarks else None
    given: dict[str, list[str]] = {}
    if isinstance(respond, Predictions):
        names = names or sorted(respond.predictions)
        given = {n: respond.ids(n) for n in names}
    declarations, preset = resolve_benchmarks(names, args.preset)
    if any(d.runner in ("code", "suite") for d in declarations):  # they run generated code
        resolve_backend()  # no usable sandbox: one line and exit 2, before any sample runs
    runs = []
    bar = tqdm(total=0, unit="sample", file=sys.stderr, dynamic_ncols=True)
    for declaration in declarations:
        bar.reset(total=0)
        bar.set_description(declaration.name)

        def progress(name: str, done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        ids = given.get(declaration.name)
        runs.append(run_benchmark(declaration, respond, args.data_dir, ids, preset,
                                  args.limit, progress))  # fmt: skip
    bar.close()
    return runs, preset


def print_summary(document: dict[str, Any]) -> None:
    rows = []
    for name, entry in document["benchmarks"].items():
        primary = entry["metrics"].get(entry["primary"], {})
        low, high = primary.get("ci95", [float("nan")] * 2)
        rows.append(
            [name, entry["n"], entry["primary"], primary.get("value"),
             f"[{low:.3f}, {high:.3f}]", entry["parse_failures"], entry["seconds"]]
        )  # fmt: skip
    headers = ["benchmark", "n", "metric", "value", "95% CI", "parse fail", "s"]
    print(tabulate(rows, headers=headers, floatfmt=".3f", tablefmt="github"))


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
    args = build_parser().parse_args(argv)
    check_args(args)
    args.output = args.output or default_output(args)  # before a served model logs there
    use_sandbox("spade-eval", SandboxConfig(backend=args.backend))
    try:
        respond, checkpoint = make_responder(args)
        runs, preset = run_all(args, respond)
    except (DeclarationError, PredictionsError, SuiteError, PolicyError) as exc:
        raise UsageError(str(exc)) from None
    command = ["spade-eval", *(argv if argv is not None else sys.argv[1:])]
    settings = {
        "preset": preset,
        "limit": args.limit,
        "benchmarks": [r.declaration.name for r in runs],
        "data_dir": str(args.data_dir) if args.data_dir else None,
        "command": shlex.join(command),
        "sandbox": describe_backend(),
    }
    document = results_document(runs, checkpoint, settings)
    output = args.output or default_output(args)
    path = write_results(output, document, runs)
    print_summary(document)
    print(f"\nresults: {path}")
    from spade.cli.leaderboard_actions import apply_leaderboard_actions

    samples = [sample for run in runs for sample in run.samples]
    return apply_leaderboard_actions(args, document, samples, output)


if __name__ == "__main__":
    sys.exit(main())
