"""Validation of an environment source: small named checks, each reported on its own.

Everything runs in one sandboxed worker. The first sandbox failure (timeout, crash, output
flood) ends the run: the remaining checks are reported as not run, so a hostile env costs
at most one call's time limit.

Every episode is played through `spade.envs.episode` (the rules training, evaluation and the
reference scores follow too): the turn cap is the env's `max_turns`, else `DEFAULT_TURN_CAP`,
and `step()` is never called on an episode that has ended, so an env may raise there.

Probes are the actions the checks try besides the env's own solution. Malformed ones (an
empty string, plain words, text that is not JSON for a tool env) must be answered with an
observation; in-format ones are what a player of the env could plausibly send: `\\boxed{...}`
answers for a text env (the reference answer format), and for a tool env one call of each of
its tools with arguments built from the tool's own schema.

`second_seed` plays a seed none of the other checks played (one past the checked seeds), so an
env that only knows those seeds is caught here rather than on a suite's evaluation seeds.

Two checks need a definition of their own:

- `multi_turn`: an env is one-shot when its episodes end on the first action whatever that
  action is. So it is multi-turn when some in-format first action leaves the episode running:
  the solution's first action (when the solution takes two or more actions), else a probe, or
  another seed's solution (in format and, here, usually wrong). A one-action `solution()`
  alone says nothing: it knows the hidden state, and a lock that answers wrong codes with
  feedback is played over many turns by anyone who does not. Malformed probes do not count:
  a quiz that asks again after a typo is still a one-shot quiz.
- `ends_within_max_turns`: a declared `max_turns` is a promise the env makes about its own
  episodes, and it is the turn cap every player uses, so the env must end every episode by
  then (here: a run of probes). An env that declares none may run on: our cap truncates its
  episodes from outside, they count as truncated and are masked from training, exactly as a
  real player's long episode would be, so that alone is no fault. What such an env must do is
  fit its solution within the cap, or no player can ever solve it there; `solution_solves`
  checks that for every env (declared budget or our cap).
- `difficulty_levels`: an env that declares `difficulty_levels = N` (N > 1) takes a level at
  `reset(seed, options={"difficulty": d})`, d in 0..N-1, and defaults to its top level. Each
  level must be solvable by `solution()` within that level's budget, adjacent levels must give
  different episodes, and the top level must be bigger than level 0 by one measure at least:
  the solution's actions, its characters, or the task text's characters (a bigger problem
  stated in the same one answer). A knob that changes nothing is no curriculum.
- `no_free_credit`: partial credit is paid for progress, never for any action. The seeded
  random agent and a no-op player (the empty reply; `{}` for a tool env) play more seeds than
  the other checks, at every level; each must average at most `FREE_CREDIT_SHARE` of the
  solution's return, and the no-op must never solve an episode.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import jsonschema

from spade.envs.episode import DEFAULT_TURN_CAP, EnvEpisode, EnvHandle, play_actions, turn_cap
from spade.envs.random_agent import random_policy
from spade.envs.remote import EnvSpec, RemoteEnv
from spade.envs.tools import ToolSchemaError, tool_call_action, validate_tools
from spade.sandbox import EnvCallError, SandboxConfig, SandboxError

MALFORMED_TEXT_ACTIONS = ["", "hello"]
IN_FORMAT_TEXT_ACTIONS = ["\\boxed{}", "\\boxed{0}", "\\boxed{a}", "\\boxed{?!}"]
MALFORMED_TOOL_ACTIONS = ["not json", '{"name": "no_such_tool", "arguments": {}}', "{}", "[]"]
# In-format tool probes are built per env from its tool schemas (`_tool_probes`).

FREE_CREDIT_SHARE = 0.5
"""`no_free_credit`: random and no-op play may score at most this share of the solution's
return (mean over `FREE_CREDIT_SEEDS`, at every level)."""
FREE_CREDIT_SEEDS = tuple(range(1000, 1008))
"""Seeds of the random and no-op plays: more than the check seeds, since one lucky episode
of a random agent should not decide the verdict."""


@dataclass
class CheckResult:
    name: str
    passed: bool
    detail: str = ""


@dataclass
class ValidationReport:
    """The contract's `spade-suite check --json` object, plus what freeze needs."""

    valid: bool
    class_name: str | None
    checks: list[CheckResult]
    reference_return: float | None
    seconds: float
    metadata: dict[str, Any] = field(default_factory=dict)
    tools: list[dict[str, Any]] | None = None
    max_turns: int | None = None
    difficulty_levels: int = 1
    """Levels the env takes at reset (`difficulty_levels`; 1: no difficulty knob)."""

    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class CheckFailed(Exception):
    """A check's verdict: the env broke the contract (the run goes on)."""


class _Abort(Exception):
    """The sandbox gave up on the env: remaining checks cannot run."""


@dataclass(frozen=True)
class _Probes:
    malformed: list[str]
    in_format: list[str]

    @property
    def all(self) -> list[str]:
        return self.malformed + self.in_format


Trace = list[tuple[str, float, bool, bool]]


def _trace(episode: EnvEpisode) -> Trace:
    """The reset observation, then each step's observation, reward and end flags."""
    first = (episode.observations[0], 0.0, False, False)
    return [first, *((s.observation, s.reward, s.terminated, s.truncated) for s in episode.steps)]


class _Validator:
    def __init__(self, env: EnvHandle, seeds: list[int]) -> None:
        self.env = env
        self.seeds = seeds
        self.spec: EnvSpec | None = None
        self.solutions: dict[int, list[str]] = {}
        self.returns: list[float] = []
        self.classes: list[str] = []
        self._probe_cache: _Probes | None = None

    # -- helpers -------------------------------------------------------------------------
    @property
    def cap(self) -> int:
        assert self.spec is not None
        return turn_cap(self.spec.max_turns)

    def _solution(self, seed: int) -> list[str]:
        self.env.reset(seed)  # the contract: solution() is called right after reset(seed)
        return self.env.solution()

    def _play_solution(self, seed: int) -> EnvEpisode:
        return play_actions(self.env, seed, self._solution(seed))

    def _probes(self) -> _Probes:
        assert self.spec is not None
        if self._probe_cache is None:
            if self.spec.is_tool_env:
                tools = self.spec.tools or []
                self._probe_cache = _Probes(MALFORMED_TOOL_ACTIONS, _tool_probes(tools))
            else:
                self._probe_cache = _Probes(MALFORMED_TEXT_ACTIONS, IN_FORMAT_TEXT_ACTIONS)
        return self._probe_cache

    # -- checks (each returns a detail string or raises CheckFailed) ---------------------
    def check_loads(self) -> str:
        self.classes = self.env.load()
        return "module executed"

    def check_single_env_class(self) -> str:
        if len(self.classes) != 1:
            found = ", ".join(self.classes) or "none"
            raise CheckFailed(f"expected exactly one class whose name ends in 'Env', found {found}")
        return f"found {self.classes[0]}"

    def check_constructs(self) -> str:
        self.spec = self.env.spec
        if self.spec.max_turns is not None and self.spec.max_turns < 1:
            raise CheckFailed(f"max_turns must be ≥ 1, got {self.spec.max_turns}")
        turns = self.spec.max_turns or f"none declared (cap {DEFAULT_TURN_CAP})"
        return f"{self.spec.class_name}() built; max_turns={turns}"

    def check_tool_schemas(self) -> str:
        assert self.spec is not None
        if self.spec.tools is None:
            return "text env (no tools)"
        try:
            validate_tools(self.spec.tools)
        except ToolSchemaError as exc:
            raise CheckFailed(str(exc)) from None
        return f"{len(self.spec.tools)} valid tool schemas"

    def check_reset_returns_text(self) -> str:
        observation, _ = self.env.reset(self.seeds[0])
        if not observation.strip():
            raise CheckFailed("reset() returned an empty observation")
        return f"observation of {len(observation)} chars"

    def check_solution_returns_actions(self) -> str:
        for seed in self.seeds:
            actions = self._solution(seed)
            if not actions:
                raise CheckFailed(f"solution() returned no actions for seed {seed}")
            self.solutions[seed] = actions
        lengths = sorted(len(actions) for actions in self.solutions.values())
        return f"{lengths[0]}–{lengths[-1]} actions over {len(self.seeds)} seeds"

    def check_invalid_action_handled(self) -> str:
        # Each probe once as the first action (some envs end on the first wrong one), the
        # others after it in turn, until the episode ends.
        probes = self._probes().all
        steps = 0
        for start in range(len(probes)):
            episode = play_actions(self.env, self.seeds[0], probes[start:] + probes[:start])
            steps += len(episode.steps)
        return f"{len(probes)} probe actions answered with observations ({steps} steps)"

    def check_step_types(self) -> str:
        steps = 0
        for seed in self.seeds[:2]:
            steps += len(self._play_solution(seed).steps)
            steps += len(play_actions(self.env, seed, self._probes().all).steps)
        return f"{steps} steps returned well-typed 5-tuples with reward in [0, 1]"

    def check_deterministic(self) -> str:
        seed = self.seeds[0]
        runs = []
        for _ in range(2):
            self.env.reset(seed)
            # Hidden state and solution too: an unseeded env often looks alike on the surface.
            state, solution = self.env.state(), self.env.solution()
            # Each episode up to its end, then a fresh reset: never a step after the end.
            solved = play_actions(self.env, seed, solution)
            probed = play_actions(self.env, seed, self._probes().all)
            runs.append((state, solution, _trace(solved), _trace(probed)))
        (state_a, solution_a, *traces_a), (state_b, solution_b, *traces_b) = runs
        if state_a != state_b:
            keys = sorted(
                k for k in state_a.keys() | state_b.keys() if state_a.get(k) != state_b.get(k)
            )
            raise CheckFailed(f"seed {seed}: hidden state after reset differs in {keys[:5]}")
        if solution_a != solution_b:
            raise CheckFailed(f"seed {seed}: solution() differs between two resets")
        for what, trace_a, trace_b in zip(("solution", "probe"), traces_a, traces_b, strict=True):
            index = _first_difference(trace_a, trace_b)
            if index is not None:
                where = "reset" if index == 0 else f"step {index}"
                a, b = _at(trace_a, index), _at(trace_b, index)
                raise CheckFailed(
                    f"seed {seed} replayed differently ({what} episode) at {where}: "
                    f"{_short(a)} vs {_short(b)}"
                )
        solution_steps, probe_steps = (len(trace) - 1 for trace in traces_a)
        return (
            f"seed {seed} replayed identically (state, solution, {solution_steps} solution "
            f"steps, {probe_steps} probe steps)"
        )

    def check_solution_solves(self) -> str:
        cap = self.cap
        for seed in self.seeds:
            actions = self._solution(seed)
            if len(actions) > cap:
                raise CheckFailed(
                    f"seed {seed}: solution has {len(actions)} actions, more than "
                    f"the {_cap_words(self.spec)} of {cap}"
                )
            episode = play_actions(self.env, seed, actions)
            reward = episode.final_reward
            self.returns.append(reward if episode.terminated else 0.0)
            if len(episode.steps) < len(actions):
                raise CheckFailed(
                    f"seed {seed}: episode ended after {len(episode.steps)} of "
                    f"{len(actions)} solution actions with reward {reward}"
                )
            if not episode.solved:
                raise CheckFailed(
                    f"seed {seed}: solution ended with reward {reward}, "
                    f"terminated={episode.terminated}, truncated={episode.truncated}"
                )
        return f"reward 1.0 on seeds {self.seeds}"

    def check_second_seed(self) -> str:
        # A seed no check above has played: an env that only knows the checked seeds (a table
        # of puzzles indexed by seed, say) fails here, not on the suite's eval seeds.
        seed, other = max(self.seeds) + 1, self.seeds[0]
        first_obs, _ = self.env.reset(other)
        episode = self._play_solution(seed)
        if not episode.solved:
            raise CheckFailed(
                f"seed {seed}: solution reached reward {episode.final_reward}, "
                f"terminated={episode.terminated}"
            )
        same = f" (same first observation as seed {other})"
        return f"unchecked seed {seed} works{same if episode.observations[0] == first_obs else ''}"

    def check_ends_within_max_turns(self) -> str:
        assert self.spec is not None
        declared, cap = self.spec.max_turns, self.cap
        probes = self._probes().all
        actions = [probes[i % len(probes)] for i in range(cap)]
        episode = play_actions(self.env, self.seeds[0], actions)
        steps = len(episode.steps)
        if episode.terminated or episode.truncated:
            how = "terminated" if episode.terminated else "truncated"
            budget = f"max_turns {declared}" if declared else "no max_turns declared"
            return f"the env {how} the episode after {steps} probe actions ({budget})"
        if declared is not None:
            raise CheckFailed(
                f"episode still running after {steps} probe actions: the env declares "
                f"max_turns={declared} but does not end its episodes by then"
            )
        return (
            f"no max_turns declared: still running after {steps} probe actions, where the "
            f"turn cap of {cap} truncates the episode (its solutions fit within the cap)"
        )

    def check_multi_turn(self) -> str:
        longest = max((len(actions) for actions in self.solutions.values()), default=0)
        if longest >= 2:
            # solution_solves saw the episode go on after the solution's first action.
            return f"solutions need up to {longest} actions"
        firsts = [actions[0] for actions in self.solutions.values() if actions]
        probes = list(dict.fromkeys(self._probes().in_format + firsts))
        for seed in self.seeds:
            for probe in probes:
                episode = play_actions(self.env, seed, [probe])
                if not episode.over:
                    return (
                        f"solution() is one action, but the episode goes on after the first "
                        f"action {_short(probe, 40)} on seed {seed}"
                    )
        raise CheckFailed(
            f"one-shot: every episode ends on its first action ({len(probes)} in-format "
            f"actions, other seeds' solutions among them, on seeds {self.seeds}); a one-shot "
            "env carries no multi-turn learning signal"
        )

    def check_difficulty_levels(self) -> str:
        assert self.spec is not None
        levels = self.spec.levels
        if levels == 1:
            return "one level (the env declares no difficulty_levels)"
        top = levels - 1
        seed = self.seeds[0]
        default = self.env.reset(seed)[0], self.env.solution()
        at_top = self.env.reset(seed, top)[0], self.env.solution()
        if default != at_top:
            raise CheckFailed(
                f"seed {seed}: reset without a difficulty is not the top level "
                f"{top} (the task or the solution differs)"
            )
        sizes, firsts = [], []
        for level in range(levels):
            actions, chars, text, observations = 0, 0, 0, []
            for seed in self.seeds:
                observation, _ = self.env.reset(seed, level)
                solution = self.env.solution()
                episode = play_actions(self.env, seed, solution, difficulty=level)
                if not episode.solved or len(episode.steps) < len(solution):
                    raise CheckFailed(
                        f"level {level}, seed {seed}: solution ended with reward "
                        f"{episode.final_reward} after {len(episode.steps)} of "
                        f"{len(solution)} actions (budget {episode.cap})"
                    )
                actions += len(solution)
                chars += sum(len(a) for a in solution)
                text += len(observation)
                observations.append((observation, tuple(solution)))
            sizes.append(tuple(n / len(self.seeds) for n in (actions, chars, text)))
            firsts.append(observations)
        same = [f"{a}-{a + 1}" for a in range(top) if firsts[a] == firsts[a + 1]]
        if same:
            raise CheckFailed(
                f"levels {', '.join(same)} give the same task and solution on seeds "
                f"{self.seeds}: a level must change the task"
            )
        low, high = sizes[0], sizes[top]
        if not any(h > lo for lo, h in zip(low, high, strict=True)):
            raise CheckFailed(
                f"the top level is no bigger than level 0 (solution actions, solution chars, "
                f"task chars: {_sizes(high)} vs {_sizes(low)}): levels must get harder"
            )
        return (
            f"{levels} levels; from level 0 to {top}: solutions {low[0]:.1f} -> {high[0]:.1f} "
            f"actions ({low[1]:.0f} -> {high[1]:.0f} chars), task {low[2]:.0f} -> "
            f"{high[2]:.0f} chars"
        )

    def check_no_free_credit(self) -> str:
        assert self.spec is not None
        reference = sum(self.returns) / len(self.returns) if self.returns else 1.0
        limit = FREE_CREDIT_SHARE * reference
        tools = self.spec.tools
        noop = MALFORMED_TOOL_ACTIONS[2] if tools else MALFORMED_TEXT_ACTIONS[0]
        worst = []
        for level in self._levels_to_probe():
            for name, policy in (("no-op", None), ("random", random_policy)):
                returns = []
                for seed in FREE_CREDIT_SEEDS:
                    actions = policy(seed, tools) if policy else (lambda _obs: noop)
                    episode = play_actions(self.env, seed, actions, difficulty=level)
                    if name == "no-op" and episode.solved:
                        raise CheckFailed(
                            f"{_at_level(level)}seed {seed}: repeating the no-op "
                            f"action {noop!r} solves the episode"
                        )
                    returns.append(episode.final_reward)
                mean = sum(returns) / len(returns)
                if mean > limit:
                    raise CheckFailed(
                        f"{_at_level(level)}{name} play scores {mean:.3f} on "
                        f"{len(FREE_CREDIT_SEEDS)} seeds, above {FREE_CREDIT_SHARE:g} x the "
                        f"solution's {reference:.3f}: partial credit must be earned by progress"
                    )
                worst.append(mean)
        return (
            f"random and no-op play score at most {max(worst):.3f} (limit {limit:.3f}) "
            f"on {len(FREE_CREDIT_SEEDS)} seeds"
        )

    def _levels_to_probe(self) -> list[int | None]:
        assert self.spec is not None
        return [None] if self.spec.levels == 1 else list(range(self.spec.levels))

    CHECKS: tuple[str, ...] = (
        "loads",
        "single_env_class",
        "constructs",
        "tool_schemas",
        "reset_returns_text",
        "solution_returns_actions",
        "invalid_action_handled",
        "step_types",
        "deterministic",
        "solution_solves",
        "second_seed",
        "ends_within_max_turns",
        "multi_turn",
        "difficulty_levels",
        "no_free_credit",
    )
    # Without these nothing else can run.
    FATAL = frozenset({"loads", "single_env_class", "constructs", "reset_returns_text"})


CHECK_NAMES: tuple[str, ...] = _Validator.CHECKS
"""Every check, in the order they run (and are reported)."""


def _sizes(sizes: tuple[float, ...]) -> str:
    return ", ".join(f"{n:g}" for n in sizes)


def _at_level(level: int | None) -> str:
    return "" if level is None else f"level {level}: "


def _cap_words(spec: EnvSpec | None) -> str:
    return "declared max_turns" if spec and spec.max_turns else "turn cap (no max_turns declared)"


def _first_difference(a: Trace, b: Trace) -> int | None:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return None if len(a) == len(b) else min(len(a), len(b))


def _at(trace: Trace, index: int) -> object:
    return trace[index] if index < len(trace) else "episode over"


def _tool_probes(tools: list[dict[str, Any]]) -> list[str]:
    """One well-formed call of each tool, its required arguments built from its schema."""
    probes = []
    for tool in tools:
        try:
            function = tool["function"]
            parameters = function["parameters"]
            arguments = _example(parameters, 0)
            fits = jsonschema.Draft202012Validator(parameters).is_valid(arguments)
            if isinstance(arguments, dict) and fits:
                probes.append(tool_call_action(function["name"], arguments))
        except (KeyError, TypeError, ValueError, jsonschema.SchemaError):
            continue  # a bad schema is check_tool_schemas' verdict, not a probe
    return probes


def _example(schema: Any, depth: int) -> Any:
    """A plain value that fits `schema`: the first choice, the low end, the shortest."""
    if not isinstance(schema, dict) or depth > 8:
        return "x"
    if "const" in schema:
        return schema["const"]
    for key in ("enum", "examples"):
        if isinstance(schema.get(key), list) and schema[key]:
            return schema[key][0]
    if "default" in schema:
        return schema["default"]
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list) and options:
        return _example(options[0], depth + 1)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind in ("integer", "number"):
        return _number(schema, kind == "integer")
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    if kind == "array":
        return [_example(schema.get("items"), depth + 1)] * int(schema.get("minItems", 0))
    if kind == "object":
        properties = schema.get("properties", {})
        return {
            name: _example(properties.get(name), depth + 1) for name in schema.get("required", [])
        }
    return "x" * max(1, int(schema.get("minLength", 1)))


def _number(schema: dict[str, Any], integer: bool) -> int | float:
    value: float = 0
    if "minimum" in schema:
        value = max(value, schema["minimum"])
    if "exclusiveMinimum" in schema:
        value = max(value, schema["exclusiveMinimum"] + 1)
    if "maximum" in schema:
        value = min(value, schema["maximum"])
    if "exclusiveMaximum" in schema:
        value = min(value, schema["exclusiveMaximum"] - 1)
    return math.ceil(value) if integer else value


def _short(value: object, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _run_one(run: Callable[[], str], name: str) -> CheckResult:
    try:
        return CheckResult(name, True, run())
    except CheckFailed as exc:
        return CheckResult(name, False, str(exc))
    except EnvCallError as exc:
        return CheckResult(name, False, f"{'raised' if exc.kind == 'env' else 'contract'}: {exc}")
    except SandboxError as exc:
        raise _Abort(CheckResult(name, False, str(exc))) from None


def validate_source(
    source: str,
    filename: str = "env.py",
    seeds: int = 3,
    config: SandboxConfig | None = None,
    deadline_s: float = 60.0,
) -> ValidationReport:
    """Run every check on one env source in the sandbox; never raises for a bad env."""
    env = RemoteEnv(source, filename, config)
    try:
        return validate_env(env, seeds, deadline_s)
    finally:
        env.close()


def validate_env(env: EnvHandle, seeds: int = 3, deadline_s: float = 60.0) -> ValidationReport:
    """Run every check on an opened env (a `RemoteEnv`, or one of spade's own in-process
    envs); never raises for a bad env. The caller closes it."""
    started = time.perf_counter()
    validator = _Validator(env, list(range(max(1, seeds))))
    results: list[CheckResult] = []
    for name in _Validator.CHECKS:
        elapsed = time.perf_counter() - started
        if elapsed > deadline_s:
            results.append(
                CheckResult(name, False, f"not run: over the {deadline_s:g} s validation budget")
            )
            continue
        try:
            result = _run_one(getattr(validator, f"check_{name}"), name)
        except _Abort as abort:
            results.append(abort.args[0])
            results += _not_run(name, "the sandbox stopped the env")
            break
        results.append(result)
        if not result.passed and name in _Validator.FATAL:
            results += _not_run(name, f"{name} failed")
            break
    valid = len(results) == len(_Validator.CHECKS) and all(r.passed for r in results)
    spec = validator.spec
    returns = validator.returns
    return ValidationReport(
        valid=valid,
        class_name=spec.class_name if spec else None,
        checks=results,
        reference_return=sum(returns) / len(returns) if returns else None,
        seconds=round(time.perf_counter() - started, 4),
        metadata=spec.metadata if spec else {},
        tools=spec.tools if spec else None,
        max_turns=spec.max_turns if spec else None,
        difficulty_levels=spec.levels if spec else 1,
    )


def _not_run(after: str, why: str) -> list[CheckResult]:
    names = _Validator.CHECKS
    return [CheckResult(n, False, f"not run: {why}") for n in names[names.index(after) + 1 :]]
