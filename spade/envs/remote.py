"""An environment program running in a sandboxed worker, driven from the host.

`RemoteEnv` is the one way the rest of spade touches generated code: it loads the source
into a persistent worker and forwards reset/step/solution/close. When a call times out,
crashes the worker or floods the output, the worker is killed and the call raises; the next
`reset` starts a fresh worker and reloads the source (kill-and-replace).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from spade.sandbox import SandboxConfig, SandboxError, SandboxWorker
from spade.sandbox.transport import Backend


class StepResult(NamedTuple):
    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]


@dataclass(frozen=True)
class EnvSpec:
    """What loading an env source revealed about it."""

    class_name: str
    tools: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    max_turns: int | None = None
    """The turn budget: the declared one on load, the episode's level's once reset."""
    levels: int = 1
    """`difficulty_levels`: the env takes levels 0..levels-1 at reset (1: no knob)."""

    @property
    def is_tool_env(self) -> bool:
        return bool(self.tools)


class EnvLoadError(Exception):
    """The source does not define exactly one loadable `*Env` class."""


class RemoteEnv:
    """A text or tool-use environment living in its own sandboxed worker."""

    def __init__(
        self,
        source: str,
        filename: str = "env.py",
        config: SandboxConfig | None = None,
        backend: Backend | None = None,
    ) -> None:
        self.source = source
        self.filename = filename
        self.worker = SandboxWorker(config, backend)
        self._spec: EnvSpec | None = None
        self._instantiated = False

    @classmethod
    def from_file(cls, path: str | Path, config: SandboxConfig | None = None) -> RemoteEnv:
        path = Path(path)
        return cls(path.read_text(encoding="utf-8"), path.name, config)

    @property
    def spec(self) -> EnvSpec:
        if self._spec is None or not self._instantiated:
            self._instantiate()
        assert self._spec is not None
        return self._spec

    def load(self) -> list[str]:
        """Execute the module in the worker; returns the names of its `*Env` classes."""
        timeout = self.worker.config.load_timeout_s
        reply = self.worker.call(
            "load", source=self.source, filename=self.filename, timeout=timeout
        )
        classes: list[str] = reply["classes"]
        return classes

    def _instantiate(self) -> None:
        if not self.worker.alive:
            self._instantiated = False
            classes = self.load()
            if len(classes) != 1:
                found = ", ".join(classes) or "none"
                raise EnvLoadError(
                    f"expected exactly one class whose name ends in 'Env', found {found}"
                )
        try:
            info = self.worker.call("new")
        except SandboxError:
            self._instantiated = False
            raise
        self._spec = EnvSpec(
            info["class_name"],
            info["tools"],
            info["metadata"],
            info["max_turns"],
            info.get("levels", 1),
        )
        self._instantiated = True

    def reset(
        self, seed: int | None = None, difficulty: int | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode on a fresh instance of the env class, at level `difficulty` (None:
        the env's default, its top level)."""
        self._instantiate()
        args = {"seed": seed} if difficulty is None else {"seed": seed, "difficulty": difficulty}
        out = self._call("reset", **args)
        assert self._spec is not None
        if out.get("max_turns") != self._spec.max_turns:
            self._spec = replace(self._spec, max_turns=out.get("max_turns"))
        return out["observation"], out["info"]

    def step(self, action: str) -> StepResult:
        out = self._call("step", action=action)
        return StepResult(
            out["observation"], out["reward"], out["terminated"], out["truncated"], out["info"]
        )

    def solution(self) -> list[str]:
        actions: list[str] = self._call("solution")["actions"]
        return actions

    def state(self) -> dict[str, Any]:
        """The env instance's attributes as plain values (used to detect hint leaks)."""
        state: dict[str, Any] = self._call("state")["state"]
        return state

    def _call(self, op: str, **args: Any) -> Any:
        try:
            return self.worker.call(op, **args)
        except SandboxError:
            if not self.worker.alive:
                self._instantiated = False
            raise

    def close(self) -> None:
        self.worker.close()
        self._instantiated = False

    def __enter__(self) -> RemoteEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
