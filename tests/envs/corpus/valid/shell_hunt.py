"""A fake shell over a nested directory tree: find the file that holds the passphrase.

Every `ls` prints a long listing (hundreds of decoy entries), so observations are large on
every step, not only after reset. Plain shell-like commands; no declared turn budget.
"""

import random
import string

WORDS = ["alpha", "bravo", "delta", "ember", "fjord", "gamma", "haze", "ivory", "jolt", "koi"]


def _name(rng, suffix):
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(8)) + suffix


class ShellHuntEnv:
    metadata = {
        "kind": "tool_like",
        "skill": "navigation",
        "difficulty": "medium",
        "hint": "Directories ending in '/' are worth entering; most files are noise.",
    }

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.tree = {}
        for top in rng.sample(WORDS, 4):
            sub = {_name(rng, ".log"): "noise " * 5 for _ in range(rng.randint(500, 800))}
            for inner in rng.sample(WORDS, 2):
                sub[inner] = {_name(rng, ".tmp"): "noise" for _ in range(100)}
            self.tree[top] = sub
        top = rng.choice(sorted(self.tree))
        inner = rng.choice(sorted(k for k, v in self.tree[top].items() if isinstance(v, dict)))
        self.secret_path = f"/{top}/{inner}/passphrase.txt"
        self.passphrase = "-".join(rng.sample(WORDS, 3))
        self.tree[top][inner]["passphrase.txt"] = f"the passphrase is {self.passphrase}"
        self.found = False
        return (
            "$ Find the passphrase and run 'submit PASSPHRASE'. Commands: ls PATH, "
            "cat PATH, submit TEXT.\n" + self._ls("/")
        ), {}

    def _lookup(self, path):
        node = self.tree
        for part in [p for p in path.split("/") if p]:
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node

    def _ls(self, path):
        node = self._lookup(path)
        if not isinstance(node, dict):
            return f"ls: {path}: not a directory"
        return "\n".join(f"{k}/" if isinstance(v, dict) else k for k, v in sorted(node.items()))

    def step(self, action):
        command, _, argument = action.strip().partition(" ")
        reward = 0.5 if self.found else 0.0
        if command == "ls":
            return self._ls(argument or "/"), reward, False, False, {}
        if command == "cat":
            node = self._lookup(argument)
            if isinstance(node, str):
                if argument == self.secret_path:
                    self.found, reward = True, 0.5
                return node, reward, False, False, {}
            return f"cat: {argument}: no such file", reward, False, False, {}
        if command == "submit":
            if argument == self.passphrase:
                return "Access granted.", 1.0, True, False, {}
            return "Access denied.", reward, False, False, {}
        return f"sh: {command or '(empty)'}: command not found", reward, False, False, {}

    def solution(self):
        top, inner = self.secret_path.split("/")[1:3]
        return [
            f"ls /{top}",
            f"ls /{top}/{inner}",
            f"cat {self.secret_path}",
            f"submit {self.passphrase}",
        ]

    def close(self):
        self.tree = {}
