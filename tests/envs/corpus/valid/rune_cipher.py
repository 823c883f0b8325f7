"""Unicode throughout: runes stand for emoji, the observation mixes scripts and combining marks.

Hidden information: which emoji each rune stands for. A wrong translation is answered with how
many symbols are right, so the episode goes on; `solution()` knows the key and answers at once.
"""

import random
import unicodedata

RUNES = "ᚠᚢᚦᚨᚱᚲᚷᚹᚺᚾ"
GLYPHS = ["🌲", "🔥", "🌊", "⛰️", "🌙", "☀️", "❄️", "🐺", "🦅", "🍄"]


class RuneCipherEnv:
    metadata = {
        "kind": "puzzle",
        "skill": "deduction",
        "difficulty": "medium",
        "hint": "Change one symbol at a time and watch the count.",
    }
    max_turns = 15

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.key = dict(zip(RUNES, rng.sample(GLYPHS, len(RUNES)), strict=True))
        self.message = "".join(rng.choice(RUNES) for _ in range(4))
        self.turns = 0
        # "Déchiffrez" written with a combining acute accent, then Japanese and Greek.
        title = unicodedata.normalize("NFD", "Déchiffrez — 解読せよ — αποκρυπτογραφήστε")
        legend = " ".join(f"{r}=?" for r in RUNES)
        return (
            f"{title}\nThe stone reads: {self.message}\nLegend: {legend}\nAnswer with the "
            f"emoji, e.g. \\boxed{{{''.join(GLYPHS[:4])}}}."
        ), {"runes": RUNES}

    def _symbols(self, text):
        # Emoji with variation selectors are two code points; compare them as single symbols.
        symbols, i = [], 0
        while i < len(text):
            j = i + 1
            while j < len(text) and text[j] in "\ufe0f\u200d":
                j += 1
            symbols.append(text[i:j])
            i = j
        return symbols

    def step(self, action):
        self.turns += 1
        done = self.turns >= self.max_turns
        start, end = action.find("\\boxed{"), action.rfind("}")
        if start < 0 or end < start:
            return "Écrivez la réponse dans \\boxed{…}.", 0.0, done, False, {}
        answer = self._symbols(action[start + 7 : end].strip())
        target = [self.key[r] for r in self.message]
        right = sum(a == b for a, b in zip(answer, target, strict=False))
        if answer == target:
            return "✨ The stone glows. ✨", 1.0, True, False, {}
        return f"{right}/4 ✓", right / 5, done, False, {"right": right}

    def solution(self):
        return ["\\boxed{" + "".join(self.key[r] for r in self.message) + "}"]

    def close(self):
        pass
