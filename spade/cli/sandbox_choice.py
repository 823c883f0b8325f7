"""The sandbox choice every command that runs generated code shares: one flag, one default.

`use_sandbox` makes a command's choice the process-wide default (`spade.sandbox.configure`),
so every worker the command starts, however deep in a runner, uses it; choosing
`unsafe-process` is announced on stderr. A machine without a usable sandbox is one line and
exit 2 (`spade.cli.errors.one_line_errors`), raised where the first worker would start.
"""

from __future__ import annotations

import argparse
import sys

from spade.sandbox import BACKEND_NAMES, UNSAFE_BACKEND, SandboxConfig, configure

SANDBOX_HELP = (
    "where generated code runs: auto (bubblewrap, else docker; stops when neither works), "
    f"bwrap, docker, or {UNSAFE_BACKEND} (no bubblewrap/docker isolation: explicit opt-in, "
    "recorded in results; as root it drops to uid 65534 in fresh namespaces or refuses)"
)


def add_sandbox_argument(parser: argparse.ArgumentParser, *flags: str) -> None:
    """`--sandbox NAME` (plus any alias in `flags`), stored as `args.backend`."""
    parser.add_argument(
        "--sandbox",
        *flags,
        dest="backend",
        default="auto",
        choices=BACKEND_NAMES,
        metavar="NAME",
        help=SANDBOX_HELP,
    )


def use_sandbox(prog: str, config: SandboxConfig) -> None:
    """Make `config` the default of every sandbox worker this process starts."""
    configure(config)
    if config.backend == UNSAFE_BACKEND:
        print(
            f"warning: {prog}: sandbox backend {UNSAFE_BACKEND}: generated code runs without "
            "bubblewrap or docker isolation",
            file=sys.stderr,
        )
