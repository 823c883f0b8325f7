"""A long observation: a server log of about 900 lines, one of which records a failure.

Report the failing line, then the error code the log shows when asked about that line.
Each reply to a correct line number reprints the surrounding section, so observations stay long.
"""

import random
import re

SERVICES = ["auth", "billing", "search", "cache", "mailer", "ingest", "render", "queue"]
NUMBER = re.compile(r"\\boxed\{\s*line\s+(\d+)\s*\}")
CODE = re.compile(r"\\boxed\{\s*code\s+(E-\d{4})\s*\}")


class NeedleLogEnv:
    metadata = {
        "kind": "reading",
        "skill": "search",
        "difficulty": "easy",
        "hint": "Look for the one level that is not INFO.",
    }

    def __init__(self, max_turns=6):
        self.max_turns = max_turns

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.lines = []
        for number in range(1, 901):
            service = rng.choice(SERVICES)
            millis = rng.randint(3, 900)
            self.lines.append(
                f"{number:04d} 12:{number // 60:02d}:{number % 60:02d} INFO "
                f"[{service}] request {rng.getrandbits(32):08x} ok in {millis} ms"
            )
        self.failing = rng.randint(50, 880)
        self.code = f"E-{rng.randint(1000, 9999)}"
        service = rng.choice(SERVICES)
        self.lines[self.failing - 1] = (
            f"{self.failing:04d} 12:00:00 WARN [{service}] request failed, see trace"
        )
        self.found = False
        self.turns = 0
        text = (
            "Which line records the failure? Answer \\boxed{line N}, then give its error "
            "code as \\boxed{code E-NNNN}.\n" + "\n".join(self.lines)
        )
        return text, {"lines": len(self.lines)}

    def step(self, action):
        self.turns += 1
        out = self.turns >= self.max_turns
        reward = 0.5 if self.found else 0.0
        number, code = NUMBER.search(action), CODE.search(action)
        if number and not self.found:
            n = int(number.group(1))
            if n == self.failing:
                self.found = True
                section = self.lines[max(0, n - 40) : n + 40]
                trace = f"trace for line {n}: error code {self.code}"
                return "\n".join([*section, trace]), 0.5, False, out, {}
            return f"Line {n} looks fine.", reward, False, out, {}
        if code and self.found:
            if code.group(1) == self.code:
                return "Incident filed.", 1.0, True, False, {}
            return "That is not the code in the trace.", reward, False, out, {}
        return "Answer \\boxed{line N} first, then \\boxed{code E-NNNN}.", reward, False, out, {}

    def solution(self):
        return [f"\\boxed{{line {self.failing}}}", f"\\boxed{{code {self.code}}}"]

    def close(self):
        pass
