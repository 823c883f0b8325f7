"""One-line errors: a reader that stops early (`| head`) ends a command quietly."""

from __future__ import annotations

import subprocess
import sys

# A command that prints far more than a pipe holds, wrapped as every spade CLI is.
CHATTY = """
from spade.cli.errors import one_line_errors

@one_line_errors("chatty")
def main() -> int:
    for i in range(200_000):
        print(f"line {i}")
    return 0

raise SystemExit(main())
"""


def test_output_piped_into_head_ends_without_a_traceback() -> None:
    script = f'"{sys.executable}" -c "$CHATTY" | head -1; echo "status ${{PIPESTATUS[0]}}"'
    pipeline = subprocess.run(
        ["bash", "-c", script],
        env={"CHATTY": CHATTY, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert pipeline.stdout.splitlines() == ["line 0", "status 141"]
    assert pipeline.stderr == ""
