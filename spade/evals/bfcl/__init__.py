"""BFCL v4 multi-turn: bfcl-eval's backends and checker, with spade's own inference loop.

Modules, in the order data flows: `data` (entries as BFCL prepares them), `prompts` (what
the model is told), `episode` (the turn/step loop), `decoding` and `tool_calls` (replies to
call strings), `executor` + `_worker` + `backends` (running calls on bfcl-eval's backends in
a worker process, behind `call_guard`), `scoring` (bfcl-eval's checker), `records` and
`runner` (the `bfcl` runner, `spade.evals.bfcl.runner:BfclBenchmark`).

This package module imports nothing on purpose: the worker process imports `backends`
through it and must not pay for the runner's imports (the responders pull in torch).
"""
