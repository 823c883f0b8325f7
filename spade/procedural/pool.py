"""The shipped procedural pool: Reasoning-Gym tasks the fixed baseline trains on.

Chosen from the tasks no `rg_*` benchmark evaluates (a test checks this, and that the pool
and the held-out ladder share no task) whose curriculum levels really differ (the validator's
`difficulty_levels`), whose reference answer scores 1.0, whose scorer only compares text,
and whose items at the levels used fit a small model's context (about 2,000 characters of
task). Each maps to the number of its curriculum's levels used. Left out: course_schedule and
mahjong_puzzle (two or three possible answers: guessing pays), graph_color,
propositional_logic, rush_hour and boxnet (no reference answer that scores 1.0),
mini_sudoku and quantum_lock (levels the validator cannot tell apart), countdown, puzzle24,
n_queens and rubiks_cube (scorers that evaluate text), jugs, knight_swap, sokoban and
number_sequence above level 1 (items too slow to generate), and maze, shortest_path,
number_sequence and kakurasu, which the held-out ladder keeps for evaluation.
"""

from __future__ import annotations

POOL_TASKS: dict[str, int] = {
    "family_relationships": 5,
    "tsumego": 4,
    "path_star": 4,
    "survo": 4,
    "largest_island": 2,
    "arc_1d": 4,
}
