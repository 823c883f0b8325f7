"""spade-train: SPADE self-play, the fixed-environment baseline and the paper's ablations.

spade-train [--config FILE] [--run-dir DIR] [--set KEY=VALUE ...]   a new run
spade-train --resume RUN_DIR                                      continue a run
spade-train memory show RUN_DIR                                   the env memory
spade-train warmup [--run-dir DIR] [--set KEY=VALUE ...]            the SFT warm start
spade-train curves RUN_DIR [RUN_DIR ...] [--out FILE]               runs' curves on one PNG
spade-train designer-probe [--config FILE] [--checkpoint CKPT]       a designer's validity

Updates on several GPUs: `accelerate launch [--num_processes N] -m spade.cli.train ...` (or
`torchrun --nproc_per_node N`). Rank 0 runs the loop and writes the run; the other processes
only share its updates (`spade.rl.distributed`).
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from spade.allocator import with_tcmalloc
from spade.cli.errors import UsageError, one_line_errors
from spade.cli.settings import command_parser, set_overrides
from spade.selfplay.config import ConfigError, TrainConfig, load_config
from spade.selfplay.recipes import missing_start
from spade.selfplay.rewards import DESIGNER_REWARDS

ABLATIONS = ("no_corpus", "no_memory", "no_designer_training")


def build_parser() -> argparse.ArgumentParser:
    config = "YAML config (default: laptop defaults)"
    parser = command_parser("spade-train", __doc__, config, "agent.plays=4")
    parser.add_argument("--run-dir", type=Path, help="run directory (default runs/<time>)")
    parser.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue this run")
    parser.add_argument("--mode", choices=["spade", "fixed"], help="self-play or fixed baseline")
    parser.add_argument(
        "--ablation",
        action="append",
        choices=ABLATIONS,
        default=[],
        help="paper ablation (repeatable)",
    )
    parser.add_argument(
        "--reward",
        choices=list(DESIGNER_REWARDS),
        help="designer reward",
    )
    parser.add_argument("--iterations", type=int, help="number of iterations")
    return parser


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    values = set_overrides(args.set)
    if args.mode:
        values["mode"] = args.mode
    if args.reward:
        values["reward.kind"] = args.reward
    if args.iterations is not None:
        values["iterations"] = args.iterations
    for ablation in args.ablation:
        values[ablation] = True
    return values


def resolve_run(args: argparse.Namespace) -> tuple[TrainConfig, Path, bool]:
    config = requested_config(args)
    if args.resume is not None:
        original = load_config(args.resume / "config.yaml")
        if args.config is not None and load_config(args.config) != original:
            raise UsageError(
                f"{args.resume} was started with a different config than "
                f"{args.config}; resume with the run's own config.yaml"
            )
        if config.model_copy(update={"iterations": original.iterations}) != original:
            raise UsageError(
                f"{args.resume}: --set/--mode/--ablation would change the run's "
                "config; only --iterations may change on resume"
            )
        return config, args.resume, True
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    run_dir = args.run_dir or Path("runs") / f"{config.mode}-{stamp}"
    from spade.models.vllm_server import LOG_NAME

    # A managed server that would not start leaves only its log (named in that error): the
    # same command, its settings fixed, may use the dir again (the log is appended to).
    if run_dir.exists() and any(p.name != LOG_NAME for p in run_dir.iterdir()):
        raise UsageError(f"{run_dir} is not empty; use --resume {run_dir} to continue it")
    return config, run_dir, False


def requested_config(args: argparse.Namespace) -> TrainConfig:
    """The resumed run's own config, or --config's, with the command line's overrides."""
    if args.resume is None:
        return load_config(args.config, overrides(args))
    saved = args.resume / "config.yaml"
    if not saved.is_file():
        raise UsageError(f"{args.resume}: not a spade-train run directory (no config.yaml)")
    return load_config(saved, overrides(args))


def follow(args: argparse.Namespace) -> int:
    """A process of rank > 0 in a distributed run: no run dir, no output, no loop; it takes
    part in rank 0's updates until rank 0 closes its learner."""
    from spade.rl.learner import Learner

    try:
        # Read before the process group forms, so before rank 0's resume rewrites it.
        config = requested_config(args)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    refuse_distributed_bootstrap(config)
    Learner(config.model, config.update_config()).follow()
    return 0


def show_memory(argv: list[str]) -> int:
    from spade.selfplay.memory import EnvMemory, MemoryFileError, memory_table

    if len(argv) != 2 or argv[0] != "show":
        raise UsageError("usage: spade-train memory show RUN_DIR")
    try:
        print(memory_table(EnvMemory.load(Path(argv[1]))))
    except (MemoryFileError, OSError) as exc:
        raise UsageError(str(exc)) from None
    return 0


def refuse_distributed_bootstrap(config: TrainConfig) -> None:
    """The bootstrap's SFT runs in one process: a launched run from a built-in model says so
    on every rank, before any rank loads a model."""
    from spade.rl.distributed import launched_world_size
    from spade.selfplay.bootstrap import applies

    if applies(config) and launched_world_size() > 1:
        raise UsageError(
            f"model {config.model} is a built-in model, whose agent is bootstrapped in one "
            "process: run without the launcher, or set bootstrap.agent=off"
        )


def train(config: TrainConfig, run_dir: Path, resume: bool) -> int:
    import openai

    from spade.cli.sandbox_choice import use_sandbox
    from spade.corpus import CorpusError
    from spade.models import BuiltinModelError, ModelSpecError
    from spade.models.policy import PolicyError
    from spade.rl.learner import LearnerError
    from spade.rl.weight_sync import GenerationError
    from spade.sandbox import resolve_backend
    from spade.selfplay.bootstrap import BOOTSTRAP_DIR, applies, start_model
    from spade.selfplay.generation import resolved_backend
    from spade.selfplay.loop import SelfPlayRun, record_config
    from spade.suites import SuiteError

    use_sandbox("spade-train", config.sandbox)
    resolve_backend(config.sandbox)  # no usable sandbox: one line now, before the model loads
    starting = (
        CorpusError,
        SuiteError,
        LearnerError,
        ModelSpecError,
        BuiltinModelError,
        GenerationError,
        PolicyError,
        ConfigError,
        OSError,
    )
    refuse_distributed_bootstrap(config)

    def start() -> str:  # called by the run once its inputs are checked
        if applies(config) and not resume:  # first, so a kill in the bootstrap can be resumed
            run_dir.mkdir(parents=True, exist_ok=True)
            record_config(run_dir, config)
        try:
            return start_model(config, run_dir, resume)
        except (*starting, ValueError) as exc:  # the bootstrap's data or fine-tune
            raise UsageError(f"bootstrap: {exc}; continue with --resume {run_dir}") from None

    try:
        run = SelfPlayRun(config, run_dir, start=start)
    except starting as exc:
        kept = (run_dir / BOOTSTRAP_DIR).is_dir() and not resume
        then = f"; the bootstrap is kept: continue with --resume {run_dir}" if kept else ""
        raise UsageError(f"{exc}{then}") from None
    try:
        if resume:
            run.resume()
        else:
            run.start()
    except starting as exc:  # e.g. the resumed weights could not reach the engine
        run.engine.close()
        raise UsageError(str(exc)) from None
    print(f"run directory: {run_dir}", file=sys.stderr)
    backend = config.generation.backend
    if backend == "auto":
        chosen = resolved_backend(backend, run.learner.world.size)
        print(f"generation: {chosen} (generation.backend auto)", file=sys.stderr)
    try:
        last = run.run()
    except (GenerationError, PolicyError, openai.APIError) as exc:  # e.g. the server died
        # Resuming continues from the last checkpoint, which the first iteration writes.
        then = f"; continue the run with --resume {run_dir}" if run.step > 0 else ""
        raise UsageError(f"{exc}{then}") from None
    finally:
        run.learner.close()  # the other ranks stop, however the loop ended; exporting is rank 0's
        run.engine.close()  # a server the run started stops with it
    final = run.finish()
    suite = freeze_accepted(run)
    print(f"final checkpoint: {final}  (spade-eval --checkpoint {final})")
    print(f"metrics: {run.log.path}; curves: {run_dir / 'curves.png'}")
    if suite:
        print(f"accepted envs frozen as {suite}")
    keys = ("designer/validity_rate", "envs/win_rate", "envs/regret", "agent/return")
    print("last iteration: " + ", ".join(f"{k}={last.get(k, float('nan')):.3f}" for k in keys))
    print(update_summary(run.log.records(), final))
    return 0


def update_summary(records: list[dict[str, Any]], final: Path) -> str:
    """What the run's updates did, over all its iterations; says so when nothing changed."""
    steps = int(sum(r.get("update/optimizer_steps", 0) for r in records))
    carried = {
        role: int(sum(r.get(f"update/{role}/with_gradient", 0) for r in records))
        for role in ("agent", "designer")
    }
    if steps == 0:
        return (
            f"no update: 0 optimizer steps in {len(records)} iterations (no sample carried "
            f"gradient), so {final} holds the starting weights unchanged"
        )
    return (
        f"updates: {steps} optimizer steps in {len(records)} iterations; samples with "
        f"gradient: agent {carried['agent']}, designer {carried['designer']}"
    )


def freeze_accepted(run: Any) -> str | None:
    from spade.suites import FreezeOptions, SuiteError, freeze_suite

    if not run.config.freeze_at_end or len(run.memory) == 0:
        return None
    name = f"run-{run.run_dir.name}".lower().replace("_", "-")
    try:
        report = freeze_suite(
            [run.run_dir], name, "1.0.0", root=run.run_dir / "suites", options=FreezeOptions()
        )
    except SuiteError as exc:
        print(f"warning: accepted envs not frozen: {exc}", file=sys.stderr)
        return None
    return f"{name}@1.0.0 ({report.path})"


@one_line_errors("spade-train")
def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["memory"]:
        return show_memory(argv[1:])
    if argv[:1] == ["warmup"]:
        from spade.cli.warmup import warmup

        return warmup(argv[1:])
    if argv[:1] == ["curves"]:
        from spade.cli.curves import curves

        return curves(argv[1:])
    if argv[:1] == ["designer-probe"]:
        from spade.cli.designer_probe import designer_probe

        return designer_probe(argv[1:])
    args = build_parser().parse_args(argv)
    from spade.rl.distributed import launched_rank

    if launched_rank() > 0:
        return follow(args)
    try:
        config, run_dir, resume = resolve_run(args)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    missing = missing_start(config.model)  # a recipe's start that another recipe makes
    if missing:
        raise UsageError(missing)
    return train(config, run_dir, resume)


cli = with_tcmalloc(main)
"""The console script: `main` under tcmalloc on a CPU machine (spade.allocator)."""

if __name__ == "__main__":
    sys.exit(main())
