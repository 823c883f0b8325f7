"""Envs the perf scripts share: a counter whose steps cost nothing, so a timing is the
sandbox's (or Ray's) own per-call overhead."""

import time
from typing import Any

COUNTER_ENV = """
class CounterEnv:
    max_turns = 10**9
    def reset(self, seed=None):
        self.n = 0
        return "start", {}
    def step(self, action):
        self.n += 1
        return str(self.n), 0.0, False, False, {}
    def solution(self):
        return ["a", "b"]
    def close(self):
        pass
"""


def seconds_per_step(env: Any, steps: int, warmup: int) -> float:
    """Mean wall time of `env.step` over `steps` calls, after `warmup` untimed ones."""
    env.reset(0)
    for _ in range(warmup):
        env.step("x")
    started = time.perf_counter()
    for _ in range(steps):
        env.step("x")
    return (time.perf_counter() - started) / steps
