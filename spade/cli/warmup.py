"""spade-train warmup: teach the model the env contract and the action formats before RL.

spade-train warmup [--config FILE] [--run-dir DIR] [--set KEY=VALUE ...]   a new warm start
spade-train warmup --resume RUN_DIR                                      continue one

The data (teacher-played episodes of the suite's train split, generated env sources with
hints) is written to RUN_DIR/data; the warm checkpoint to RUN_DIR/sft/model, which
`spade-train --set model=RUN_DIR/sft/model` and `spade-eval --checkpoint` take.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from spade.cli.errors import UsageError
from spade.cli.settings import command_parser, set_overrides


def build_parser() -> argparse.ArgumentParser:
    config = "YAML WarmupConfig (default: laptop defaults)"
    parser = command_parser("spade-train warmup", __doc__, config, "sft.epochs=3")
    parser.add_argument("--run-dir", type=Path, help="run directory (default runs/warmup-<time>)")
    parser.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue this warm start")
    return parser


def warmup(argv: list[str]) -> int:
    from spade.cli.sandbox_choice import use_sandbox
    from spade.corpus import CorpusError
    from spade.sandbox import resolve_backend
    from spade.selfplay.config import ConfigError
    from spade.selfplay.warmup.run import load_warmup_config, run_warmup
    from spade.suites import SuiteError

    args = build_parser().parse_args(argv)
    overrides = set_overrides(args.set)
    try:
        if args.resume is not None:
            if not (args.resume / "config.yaml").is_file():
                raise UsageError(f"{args.resume}: not a warm-start run directory (no config.yaml)")
            if overrides or args.config:
                raise UsageError("--resume continues the run's own config; no --set/--config")
            config = load_warmup_config(args.resume / "config.yaml")
            run_dir = args.resume
        else:
            config = load_warmup_config(args.config, overrides)
            stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
            run_dir = args.run_dir or Path("runs") / f"warmup-{stamp}"
            if run_dir.exists() and any(run_dir.iterdir()):
                raise UsageError(f"{run_dir} is not empty; use --resume {run_dir} to continue it")
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    _check_model(config.model)
    use_sandbox("spade-train warmup", config.sandbox)
    resolve_backend(config.sandbox)  # no usable sandbox: one line now, before anything runs
    print(f"warm-start directory: {run_dir}", file=sys.stderr)
    try:
        report = run_warmup(config, run_dir, resume=args.resume is not None)
    except (CorpusError, SuiteError, ConfigError, ValueError, OSError) as exc:
        raise UsageError(f"{exc}; continue with --resume {run_dir}") from None
    counts = ", ".join(f"{n} {kind}" for kind, n in sorted(report.examples.items()))
    print(f"examples: {counts}; data in {run_dir / 'data'}")
    if report.first_loss is not None and report.last_loss is not None:
        print(
            f"{report.steps} optimizer steps, loss {report.first_loss:.3f} -> "
            f"{report.last_loss:.3f}"
        )
    print(
        f"warm checkpoint: {report.model_dir}  (spade-train --set model={report.model_dir}; "
        f"spade-eval --checkpoint {report.model_dir})"
    )
    return 0


def _check_model(model: str) -> None:
    """A start model that is neither a built-in alias, a directory, nor a hub id
    (`owner/name`) is a one-line error before the data is built, not a hub lookup after."""
    from spade.models.builtin import BUILTIN_MODELS

    hub_id = model.count("/") == 1 and not model.startswith((".", "/", "~"))
    if model not in BUILTIN_MODELS and not Path(model).is_dir() and not hub_id:
        raise UsageError(f"model {model!r}: no such model directory (nor a built-in model)")
