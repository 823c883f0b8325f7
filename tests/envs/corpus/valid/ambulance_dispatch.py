"""Send ambulances to the districts that reported incidents, most severe first.

The city is a dict of districts, each holding a list of `Incident` records; the stated budget
of dispatches is part of the task, so using it up is terminal (with partial credit), not a
truncation.
"""

import random
import re
from dataclasses import dataclass

DISTRICTS = ["Harbor", "Old Town", "Mill Row", "Riverside", "Hilltop", "Market", "Docks"]


@dataclass(frozen=True)
class Incident:
    kind: str
    severity: int


class AmbulanceDispatchEnv:
    metadata = {
        "kind": "planning",
        "skill": "prioritisation",
        "difficulty": "easy",
        "hint": "Weigh each district by the total severity it reported.",
    }

    def __init__(self, max_turns=6):
        self.max_turns = max_turns

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.city = {name: [] for name in DISTRICTS}
        for name in rng.sample(DISTRICTS, rng.randint(2, 4)):
            for _ in range(rng.randint(1, 3)):
                kind = rng.choice(["fall", "fire", "crash", "fever"])
                self.city[name].append(Incident(kind, rng.randint(1, 5)))
        self.served = []
        report = "\n".join(
            f"- {name}: " + ", ".join(f"{i.kind} (severity {i.severity})" for i in incidents)
            for name, incidents in self.city.items()
            if incidents
        )
        return (
            f"Incident reports:\n{report}\nYou have {self.max_turns} dispatches. Send one "
            "with \\boxed{District}."
        ), {}

    def _load(self, name):
        return sum(incident.severity for incident in self.city[name])

    def _progress(self):
        total = sum(self._load(name) for name in self.city)
        return sum(self._load(name) for name in set(self.served) if name in self.city) / total

    def step(self, action):
        match = re.search(r"\\boxed\{([^}]*)\}", action)
        name = match.group(1).strip() if match else None
        if name in self.city:
            self.served.append(name)
            observation = f"Ambulance sent to {name}."
        else:
            self.served.append("(wasted)")
            observation = "Unknown district; the dispatch was wasted."
        progress = self._progress()
        if progress == 1.0:
            return "Every incident is covered.", 1.0, True, False, {}
        out_of_budget = len(self.served) >= self.max_turns
        return observation, round(0.9 * progress, 4), out_of_budget, False, {}

    def solution(self):
        busy = [name for name in self.city if self.city[name]]
        return [f"\\boxed{{{name}}}" for name in sorted(busy, key=self._load, reverse=True)]

    def close(self):
        pass
