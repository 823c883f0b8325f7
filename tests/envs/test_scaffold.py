"""The text-env scaffold: a design on it is a valid env for the real validator, the scaffold
keeps the contract a design leaves out, and what the designer wrote can be told apart."""

from __future__ import annotations

from spade.envs import RemoteEnv, validate_source
from spade.envs.scaffold import PRELUDE, assemble, design_part

# A design in a style no warm-start mechanic writes: a hidden path of moves, progress by the
# longest correct prefix, and an `act` that raises on a bad command.
DESIGN = """\
class PathEnv(TextScaffold):
    metadata = {"kind": "game", "skill": "search", "difficulty": "easy"}
    max_turns = 6

    def setup(self, rng):
        self.path = [rng.choice("LR") for _ in range(3)]
        return "Find the 3-move path of L/R: send \\\\boxed{LRL}, told how many lead right."

    def act(self, command):
        moves = list(command.upper())
        if len(moves) != 3 or set(moves) - {"L", "R"}:
            raise ValueError(command)
        right = 0
        while right < 3 and moves[right] == self.path[right]:
            right += 1
        return f"{right} first moves right.", right / 3

    def solution(self):
        return ["\\\\boxed{%s}" % "".join(self.path)]
"""


def test_a_design_on_the_scaffold_is_a_valid_env() -> None:
    source = assemble(DESIGN, "text")
    assert source.startswith(PRELUDE) and design_part(source) == DESIGN
    report = validate_source(source, seeds=3)
    assert report.valid, report.failed()
    assert report.metadata == {"kind": "game", "skill": "search", "difficulty": "easy"}
    assert report.max_turns == 6


def test_without_the_scaffold_the_design_does_not_load() -> None:
    assert assemble(DESIGN, "none") == DESIGN
    report = validate_source(DESIGN, seeds=1)
    assert not report.valid  # TextScaffold is undefined without the prelude


def test_the_scaffold_answers_bad_commands_and_ends_at_the_budget_with_partial_credit() -> None:
    with RemoteEnv(assemble(DESIGN, "text")) as env:
        env.reset(0)
        path = env.solution()[0][len("\\boxed{") : -1]
        first_wrong = path[0] + ("L" if path[1] == "R" else "R") + path[2]
        no_box = env.step("LRL")
        assert "boxed" in no_box.observation and no_box.reward == 0.0
        raised = env.step("\\boxed{xyz}")  # act raises: feedback, not an exception
        assert "Invalid command" in raised.observation and not raised.terminated
        partial = env.step(f"\\boxed{{{first_wrong}}}")
        assert partial.reward == 1 / 3 and not partial.terminated
        worse = env.step("\\boxed{" + ("R" if path[0] == "L" else "L") + "LL}")
        assert worse.reward == 1 / 3  # the reward is the best progress so far
        results = [env.step("\\boxed{q}") for _ in range(2)]
        last = results[-1]
        assert last.terminated and not last.truncated and last.reward == 1 / 3
        assert "No turns left" in last.observation


def test_the_solution_ends_the_episode_solved() -> None:
    with RemoteEnv(assemble(DESIGN, "text")) as env:
        env.reset(3)
        result = env.step(env.solution()[0])
        assert result.terminated and result.reward == 1.0


def test_design_part_leaves_other_sources_alone() -> None:
    assert design_part("class XEnv:\n    pass\n") == "class XEnv:\n    pass\n"
