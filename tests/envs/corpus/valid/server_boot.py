"""Bring a server from OFF to READY. The right order of commands is hidden: each refused
command names one thing that must happen first, so the order is learned by acting.

State: an `enum.Enum` stage, a `typing.NamedTuple` per command and a set of done commands.
"""

import enum
import random
import re
from typing import NamedTuple


class Stage(enum.Enum):
    OFF = 0
    FIRMWARE = 1
    STORAGE = 2
    NETWORK = 3
    READY = 4


class Command(NamedTuple):
    name: str
    needs: tuple
    stage: Stage


COMMANDS = {
    "power": Command("power", (), Stage.FIRMWARE),
    "fsck": Command("fsck", ("power",), Stage.STORAGE),
    "mount": Command("mount", ("fsck",), Stage.STORAGE),
    "dhcp": Command("dhcp", ("power",), Stage.NETWORK),
    "vpn": Command("vpn", ("dhcp",), Stage.NETWORK),
    "start": Command("start", ("mount", "vpn"), Stage.READY),
}
CALL = re.compile(r"^\\boxed\{\s*run\s+([a-z]+)\s*\}$")


class ServerBootEnv:
    metadata = {
        "kind": "procedure",
        "skill": "dependency ordering",
        "difficulty": "medium",
        "hint": "Every refusal names a prerequisite: keep a list and work backwards.",
    }
    max_turns = 18

    def reset(self, seed=None):
        rng = random.Random(seed)
        # The seed decides which optional checks this server insists on.
        self.commands = dict(COMMANDS)
        if rng.random() < 0.5:
            self.commands["vpn"] = Command("vpn", ("dhcp", "mount"), Stage.NETWORK)
        if rng.random() < 0.5:
            self.commands["mount"] = Command("mount", ("fsck", "dhcp"), Stage.STORAGE)
        self.done = set()
        self.stage = Stage.OFF
        self.turns = 0
        names = sorted(self.commands)
        rng.shuffle(names)
        return (
            f"Stage: {self.stage.name}. Commands: {', '.join(names)}. "
            "Run one with \\boxed{run NAME}."
        ), {}

    def _progress(self):
        return 0.9 * len(self.done) / len(self.commands)

    def step(self, action):
        self.turns += 1
        out = self.turns >= self.max_turns
        match = CALL.match(action.strip())
        command = self.commands.get(match.group(1)) if match else None
        if command is None:
            return "Unknown command.", self._progress(), out, False, {}
        missing = [need for need in command.needs if need not in self.done]
        if missing:
            return f"Refused: {command.name} needs {missing[0]}.", self._progress(), out, False, {}
        self.done.add(command.name)
        self.stage = max(self.stage, command.stage, key=lambda s: s.value)
        if self.stage is Stage.READY:
            return "READY.", 1.0, True, False, {"stage": self.stage.name}
        return f"ok. Stage: {self.stage.name}.", self._progress(), out, False, {}

    def solution(self):
        order, seen = [], set()

        def visit(name):
            if name not in seen:
                seen.add(name)
                for need in self.commands[name].needs:
                    visit(need)
                order.append(name)

        visit("start")
        return [f"\\boxed{{run {name}}}" for name in order]

    def close(self):
        pass
