"""Loaded environments as `gymnasium.Env`, so gymnasium tooling applies to them."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.spaces import Text

from spade.envs.remote import RemoteEnv

DEFAULT_MAX_CHARS = 1 << 20


class UnicodeText(Text):
    """A `Text` space over all of Unicode: gymnasium's charset must be enumerable, but
    observations and actions here are free text."""

    def __init__(self, max_length: int = DEFAULT_MAX_CHARS) -> None:
        super().__init__(max_length=max_length, min_length=0)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.max_length})"


class TextEnv(gym.Env[str, str]):
    """A sandboxed env source exposed through the gymnasium API.

    Tool-use envs keep their `tools` (OpenAI function schemas) on the instance; their actions
    are JSON tool calls, which the env itself answers (an invalid call gets an error
    observation from the env, per the contract).
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, remote: RemoteEnv) -> None:
        self.remote = remote
        limit = remote.worker.config.max_output_bytes
        self.observation_space = UnicodeText(limit)
        self.action_space = UnicodeText(limit)
        spec = remote.spec
        self.tools = spec.tools
        self.env_metadata = spec.metadata
        self.max_turns = spec.max_turns
        self.difficulty_levels = spec.levels

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is None:  # keep episodes reproducible from gymnasium's own seeding
            seed = int(self.np_random.integers(0, np.iinfo(np.int32).max))
        # The difficulty contract: `options={"difficulty": LEVEL}` picks the env's level.
        difficulty = (options or {}).get("difficulty")
        observation, info = self.remote.reset(seed, difficulty)
        self.max_turns = self.remote.spec.max_turns  # a level may set its own budget
        return observation, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        return tuple(self.remote.step(action))  # type: ignore[return-value]

    def solution(self) -> list[str]:
        return self.remote.solution()

    def close(self) -> None:
        self.remote.close()
