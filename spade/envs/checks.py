"""Validation of an environment source: small named checks, each reported on its own.

Everything runs in one sandboxed worker. The first sandbox failure (timeout, crash, output
flood) ends the run: the remaining checks are reported as not run, so a hostile env costs
at most one call's time limit.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from spade.envs.remote import EnvSpec, RemoteEnv
from spade.envs.tools import ToolSchemaError, validate_tools
from spade.sandbox import EnvCallError, SandboxConfig, SandboxError

DEFAULT_TURN_CAP = 100
"""Turn cap for envs that declare no `max_turns`."""

PROBE_TEXT_ACTIONS = ["", "\\boxed{}", "\\boxed{0}", "hello", "\\boxed{?!}"]
PROBE_TOOL_ACTIONS = ["not json", '{"name": "no_such_tool", "arguments": {}}', "{}", "[]"]


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

    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class CheckFailed(Exception):
    """A check's verdict: the env broke the contract (the run goes on)."""


class _Abort(Exception):
    """The sandbox gave up on the env: remaining checks cannot run."""


Trace = list[tuple[str, float, bool, bool]]


class _Validator:
    def __init__(self, env: RemoteEnv, seeds: list[int]) -> None:
        self.env = env
        self.seeds = seeds
        self.spec: EnvSpec | None = None
        self.solution_lengths: dict[int, int] = {}
        self.returns: list[float] = []
        self.classes: list[str] = []

    # -- helpers -------------------------------------------------------------------------
    @property
    def turn_cap(self) -> int:
        assert self.spec is not None
        return self.spec.max_turns or DEFAULT_TURN_CAP

    def _play(self, seed: int, actions: list[str], stop_at_end: bool = True) -> Trace:
        observation, _ = self.env.reset(seed)
        trace: Trace = [(observation, 0.0, False, False)]
        for action in actions:
            result = self.env.step(action)
            trace.append(result[:4])
            if stop_at_end and (result.terminated or result.truncated):
                break
        return trace

    def _probe_actions(self) -> list[str]:
        assert self.spec is not None
        return PROBE_TOOL_ACTIONS if self.spec.is_tool_env else PROBE_TEXT_ACTIONS

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
            self.env.reset(seed)
            actions = self.env.solution()
            if not actions:
                raise CheckFailed(f"solution() returned no actions for seed {seed}")
            self.solution_lengths[seed] = len(actions)
        lengths = sorted(self.solution_lengths.values())
        return f"{lengths[0]}–{lengths[-1]} actions over {len(self.seeds)} seeds"

    def check_step_types(self) -> str:
        steps = 0
        for seed in self.seeds[:2]:
            self.env.reset(seed)
            steps += len(self._play(seed, self.env.solution())) - 1
            steps += len(self._play(seed, self._probe_actions())) - 1
        return f"{steps} steps returned well-typed 5-tuples with reward in [0, 1]"

    def check_invalid_action_handled(self) -> str:
        probes = self._probe_actions()
        trace = self._play(self.seeds[0], probes)
        return f"{len(trace) - 1} malformed actions answered with observations"

    def check_deterministic(self) -> str:
        seed = self.seeds[0]
        runs = []
        for _ in range(2):
            self.env.reset(seed)
            # Hidden state and solution too: an unseeded env often looks alike on the surface.
            state, solution = self.env.state(), self.env.solution()
            trace = self._play(seed, solution + self._probe_actions(), stop_at_end=False)
            runs.append((state, solution, trace))
        (state_a, solution_a, trace_a), (state_b, solution_b, trace_b) = runs
        if state_a != state_b:
            keys = sorted(k for k in state_a.keys() | state_b.keys()
                          if state_a.get(k) != state_b.get(k))  # fmt: skip
            raise CheckFailed(f"seed {seed}: hidden state after reset differs in {keys[:5]}")
        if solution_a != solution_b:
            raise CheckFailed(f"seed {seed}: solution() differs between two resets")
        for index, (a, b) in enumerate(zip(trace_a, trace_b, strict=True)):
            if a != b:
                where = "reset" if index == 0 else f"step {index}"
                raise CheckFailed(
                    f"seed {seed} replayed differently at {where}: {_short(a)} vs {_short(b)}"
                )
        return f"seed {seed} replayed identically (state, solution, {len(trace_a) - 1} steps)"

    def check_solution_solves(self) -> str:
        for seed in self.seeds:
            self.env.reset(seed)
            actions = self.env.solution()
            if len(actions) > self.turn_cap:
                raise CheckFailed(
                    f"seed {seed}: solution has {len(actions)} actions > max_turns {self.turn_cap}"
                )
            trace = self._play(seed, actions)
            _, reward, terminated, truncated = trace[-1]
            self.returns.append(reward if terminated else 0.0)
            if len(trace) - 1 < len(actions):
                raise CheckFailed(
                    f"seed {seed}: episode ended after {len(trace) - 1} of "
                    f"{len(actions)} solution actions with reward {reward}"
                )
            if not (terminated and reward == 1.0):
                raise CheckFailed(
                    f"seed {seed}: solution ended with reward {reward}, "
                    f"terminated={terminated}, truncated={truncated}"
                )
        return f"reward 1.0 on seeds {self.seeds}"

    def check_second_seed(self) -> str:
        seed = self.seeds[1] if len(self.seeds) > 1 else self.seeds[0] + 1
        other = self.seeds[0]
        first_obs, _ = self.env.reset(other)
        second_obs, _ = self.env.reset(seed)
        actions = self.env.solution()
        trace = self._play(seed, actions)
        if trace[-1][1] != 1.0:
            raise CheckFailed(f"seed {seed}: solution reached reward {trace[-1][1]}")
        same = f" (same first observation as seed {other})" if first_obs == second_obs else ""
        return f"seed {seed} works{same}"

    def check_ends_within_max_turns(self) -> str:
        probes = self._probe_actions()
        actions = [probes[i % len(probes)] for i in range(self.turn_cap + 1)]
        trace = self._play(self.seeds[0], actions)
        steps = len(trace) - 1
        _, _, terminated, truncated = trace[-1]
        if not (terminated or truncated) or steps > self.turn_cap:
            raise CheckFailed(
                f"episode still running after {steps} steps (max_turns {self.turn_cap})"
            )
        how = "terminated" if terminated else "truncated"
        return f"{how} after {steps} malformed actions (max_turns {self.turn_cap})"

    def check_multi_turn(self) -> str:
        longest = max(self.solution_lengths.values(), default=0)
        if longest < 2:
            raise CheckFailed(
                "solution() takes a single action on every checked seed: a "
                "one-shot env carries no multi-turn learning signal"
            )
        return f"solutions need up to {longest} actions"

    CHECKS: tuple[str, ...] = (
        "loads", "single_env_class", "constructs", "tool_schemas", "reset_returns_text",
        "solution_returns_actions", "invalid_action_handled", "step_types", "deterministic",
        "solution_solves", "second_seed", "ends_within_max_turns", "multi_turn",
    )  # fmt: skip
    # Without these nothing else can run.
    FATAL = frozenset({"loads", "single_env_class", "constructs", "reset_returns_text"})


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
    started = time.perf_counter()
    env = RemoteEnv(source, filename, config)
    validator = _Validator(env, list(range(max(1, seeds))))
    results: list[CheckResult] = []
    try:
        for name in _Validator.CHECKS:
            elapsed = time.perf_counter() - started
            if elapsed > deadline_s:
                results.append(
                    CheckResult(
                        name, False, f"not run: over the {deadline_s:g} s validation budget"
                    )
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
    finally:
        env.close()
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
    )


def _not_run(after: str, why: str) -> list[CheckResult]:
    names = _Validator.CHECKS
    return [CheckResult(n, False, f"not run: {why}") for n in names[names.index(after) + 1 :]]
