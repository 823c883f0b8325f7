"""ACEBench's agent category (English): multi_step (20 entries) and multi_turn (30 entries).

ACEBench (Chen et al., 2025) is not packaged, so its scenario apps are written here, one
module per app (`base_api`, `message`, `reminder`, `food_platform`, `travel`), from the
data's tool schemas, the behaviour the questions and prompts describe, and the ground-truth
end states. Replaying every entry's milestone path (with the fixes in `errata`) on fresh
apps reaches its ground-truth end state, for all 50 entries (tests/evals/test_acebench.py).

Where these apps and this harness may differ from upstream's (whose code we do not ship):
- Calls: only the entry's own tool schemas can be called (upstream ran any public method of
  the involved classes); arguments are checked against signature and schema types (and
  enums) before running, so a bad call is reported as malformed and changes nothing, where
  upstream ran it and often failed later; upstream evaluated arithmetic in arguments, here
  only literals parse. `search_reminders` is in the schemas but not in upstream's class: it is
  implemented from its schema here, where upstream answered with an execution error.
- Errors: a raising app returns `Error during execution: ...` for that call and the message's
  other calls still run (upstream's multi_turn harness aborted the whole message and sent the
  model a garbled error).
- Text the model sees: execution results are shown as the Python repr of JSON-normalised
  values (upstream showed some results, e.g. product lists, as quoted strings); the tool list
  is JSON (upstream: a Python repr); the prompts restate upstream's in our own words.
- The simulated user sees the agent's replies as `user` and its own lines as `assistant`
  messages (upstream gave its own lines the `system` role). It is a configurable model
  (`options.user_model`, default smollm2-135m; upstream used gpt-4o), recorded per sample.
- Scoring: end state is exact equality for every class (upstream's dict check was one-way,
  and classes with misspelt names in the data were skipped: see `errata`); process accuracy
  follows upstream (text match of milestones, greedy, best alternative, 1.0 when the end
  state is right) without its rounding to three decimals.
"""

from spade.evals.acebench.runner import AceBenchBenchmark, AceBenchOptions

__all__ = ["AceBenchBenchmark", "AceBenchOptions"]
