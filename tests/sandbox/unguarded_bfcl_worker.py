"""The BFCL backend worker with its call guard switched off, for the containment tests only.

`tests/evals/test_bfcl_sandbox.py` runs this module in the sandbox exactly as the executor
runs `spade.evals.bfcl._worker` (same entry machinery, packages and limits), so that calls
the allow-list would refuse reach bfcl-eval's `eval`: what they can still do is what the
sandbox alone allows. Nothing outside those tests imports it.
"""

from spade.evals.bfcl import _worker, backends


def _no_guard(calls: list[str], classes: list[str]) -> tuple[list[str], dict[int, str]]:
    return calls, {}


if __name__ == "__main__":
    backends.guard = _no_guard
    _worker.main()
