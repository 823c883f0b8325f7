"""Warm-start data for the agent role: well-formed multi-turn play in the train-split envs.

Each episode is played in the sandbox (`RemoteEnv`) under the one set of episode rules
(`EnvEpisode`: turn cap, solved, no step after the end), on training seeds that are never
one of the env's evaluation seeds, by the env's teacher (`teachers.py`: `solution()` only
where the observations determine the answer, else an honest scripted policy, else
exploration). The record keeps the conversation exactly as the RL agent sees it: the
agent's system prompt, the first observation, then each reply and the observation it got
(the observation after the last reply is left out: nothing learns from it).

    episodes = build_agent_data(suite.envs_in("train"), 8, random.Random(0))
    write_jsonl(run_dir / "warmup" / "agent.jsonl", episodes)
    print(summary(episodes))

Held-out envs never reach the builder: it refuses any env whose manifest entry says
`split: heldout`, before playing anything.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tabulate import tabulate
from tqdm import tqdm

from spade.atomic import write_atomic
from spade.envs.episode import EnvEpisode
from spade.envs.remote import RemoteEnv
from spade.envs.tools import tool_call_action
from spade.procedural import ProceduralEnv
from spade.rollout.agent_prompt import action_from_reply, system_prompt
from spade.sandbox import SandboxConfig
from spade.selfplay.warmup.teachers import (
    Call,
    History,
    Move,
    Teacher,
    TeacherError,
    move_of_action,
    reply_text,
    teacher_for,
)
from spade.suites.seeds import TRAINING_SEED_SPAN
from spade.suites.suite import SuiteEnv

SCHEMA_VERSION = 1
"""Version of the JSONL record; bump it when a field changes meaning."""

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


class AgentDataError(RuntimeError):
    """An episode could not be built; the message names the env and the seed."""


@dataclass(frozen=True)
class AgentEpisode:
    """One teacher-played episode, as a warm-start example."""

    env_id: str
    seed: int
    teacher: str
    """`solution`, `scripted:<name>` or `explore` (see `teachers.py`)."""
    kind: str
    skill: str
    messages: list[dict[str, str]]
    """System prompt, first observation, then assistant reply / observation pairs, ending
    with the last reply."""
    rewards: list[float]
    final_reward: float
    terminated: bool
    truncated: bool
    """The env truncated the episode (a limit outside the task)."""
    capped: bool
    """Our turn cap ended it (also outside the task)."""
    solved: bool
    schema_version: int = SCHEMA_VERSION
    difficulty: int | None = None
    """The env's level for this episode (None: its default, the top level)."""

    @property
    def replies(self) -> list[str]:
        return [m["content"] for m in self.messages if m["role"] == "assistant"]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentEpisode:
        if data.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(
                f"agent episode schema_version {data.get('schema_version')!r}; this spade "
                f"reads version {SCHEMA_VERSION}"
            )
        return cls(**data)


def training_seeds(env: SuiteEnv, count: int, rng: random.Random) -> list[int]:
    """`count` distinct seeds from `rng` in [0, TRAINING_SEED_SPAN), none of them one of the
    env's evaluation seeds. (`spade.suites.training_seeds` draws the same way but may repeat
    a seed; a warm-start data set has no use for a repeated episode.)"""
    return distinct_seeds(count, rng, set(env.entry.eval_seeds))


def distinct_seeds(count: int, rng: random.Random, avoid: Collection[int] = ()) -> list[int]:
    """`count` distinct `rng.randrange(TRAINING_SEED_SPAN)` draws, none in `avoid`."""
    seeds: list[int] = []
    while len(seeds) < count:
        seed = rng.randrange(TRAINING_SEED_SPAN)
        if seed not in avoid and seed not in seeds:
            seeds.append(seed)
    return seeds


def levels_in_turn(levels: Sequence[int] | None, available: int) -> list[int]:
    """The levels of `levels` an env with `available` levels has, in order: its episodes take
    them in turn."""
    return [level for level in levels or [] if level < available]


def check_trainable(env: SuiteEnv) -> None:
    """Raise `ValueError` for an env its manifest marks held out (only evaluation plays it)."""
    if getattr(env.entry, "split", None) == "heldout":
        raise ValueError(
            f"{env.id} is a held-out env (split: heldout in its manifest); warm-start data is "
            "built from train-split envs only: pass suite.envs_in('train')"
        )


def action_of(move: Move, tools: list[dict[str, Any]] | None) -> tuple[str, str]:
    """(reply, action): the assistant reply carrying `move` and the action the RL driver
    makes of it (`action_from_reply`). Raises `TeacherError` unless that action is exactly
    the move: one well-formed call of a tool env, or a text reply whose one box is the
    command."""
    reply = reply_text(move)
    action = action_from_reply(reply, tools)
    if isinstance(move, Call):
        fits = bool(tools) and action == tool_call_action(move.name, move.arguments)
    else:
        fits = not tools and action == reply and _BOXED.findall(reply) == [move.command]
    if not fits:
        raise TeacherError(f"reply {reply[:120]!r} does not carry the move {move}")
    return reply, action


def play_episode(
    env: SuiteEnv, remote: RemoteEnv, teacher: Teacher, seed: int, level: int | None = None
) -> AgentEpisode:
    """Reset `remote` on `seed` (at `level`) and let `teacher` play until the episode is over."""
    episode = EnvEpisode(remote, difficulty=level)
    observation = episode.reset(seed)
    tools = remote.spec.tools
    messages = [
        {"role": "system", "content": system_prompt(tools, None)},
        {"role": "user", "content": observation},
    ]
    next_move = _mover(teacher, remote, seed, tools)
    history = History((observation,))
    while not episode.over:
        move = next_move(history)
        if move is None:
            break  # solution() ran out before the episode ended (the summary shows it)
        reply, action = action_of(move, tools)
        result = episode.step(action)
        messages.append({"role": "assistant", "content": reply})
        if not episode.over:
            messages.append({"role": "user", "content": result.observation})
        history = history.then(move, result.observation)
    return AgentEpisode(
        env_id=env.id,
        seed=seed,
        teacher=teacher.name,
        kind=env.entry.kind,
        skill=env.entry.skill,
        messages=messages,
        rewards=episode.rewards,
        final_reward=episode.final_reward,
        terminated=episode.terminated,
        truncated=episode.truncated,
        capped=episode.capped,
        solved=episode.solved,
        difficulty=level,
    )


def _mover(
    teacher: Teacher, remote: RemoteEnv, seed: int, tools: list[dict[str, Any]] | None
) -> Callable[[History], Move | None]:
    """The teacher's next move for a history; None when a `solution()` replay has run out.
    Only a `solution` teacher touches the env (its `solution()`, right after reset); the
    others see nothing but the history."""
    if teacher.kind != "solution":
        return teacher.policy(seed, tools)
    planned = iter([move_of_action(action, tools) for action in remote.solution()])
    return lambda history: next(planned, None)


def build_agent_data(
    envs: Sequence[SuiteEnv],
    episodes_per_env: int,
    rng: random.Random,
    sandbox: SandboxConfig | None = None,
    levels: Sequence[int] | None = None,
    skipped: list[str] | None = None,
) -> list[AgentEpisode]:
    """`episodes_per_env` teacher-played episodes of every env, in order; the same `rng`
    state gives the same episodes. Every env must be a train-split env.

    With `levels`, the episodes of an env that has difficulty levels take them in turn (those
    it has). A scripted teacher is written for the top level: below it, an episode it cannot
    read or does not solve is left out (named in `skipped`) rather than taught."""
    for env in envs:
        check_trainable(env)
    episodes: list[AgentEpisode] = []
    with tqdm(total=len(envs) * episodes_per_env, desc="agent warm-start", disable=None) as bar:
        for env in envs:
            teacher = teacher_for(env.entry.class_name)
            seeds = training_seeds(env, episodes_per_env, rng)
            top = (env.entry.difficulty_levels or 1) - 1
            playable = levels_in_turn(levels, top + 1)
            with env.remote(sandbox) as remote:
                for index, seed in enumerate(seeds):
                    level = playable[index % len(playable)] if playable else None
                    lenient = teacher.kind == "scripted" and level is not None and level < top
                    try:
                        episode: AgentEpisode | None = play_episode(
                            env, remote, teacher, seed, level
                        )
                    except TeacherError as exc:
                        if not lenient:
                            raise AgentDataError(
                                f"{env.id} seed {seed} ({teacher.name}): {exc}"
                            ) from exc
                        episode = None
                    except Exception as exc:
                        raise AgentDataError(
                            f"{env.id} seed {seed} ({teacher.name}): {exc}"
                        ) from exc
                    bar.update()
                    if episode is not None and (episode.solved or not lenient):
                        episodes.append(episode)
                    elif skipped is not None:
                        skipped.append(f"{env.id}@{level}/{seed} ({teacher.name})")
    return episodes


def build_procedural_data(
    tasks: dict[str, int],
    episodes_per_task: int,
    levels: Sequence[int],
    attempts: int,
    rng: random.Random,
) -> list[AgentEpisode]:
    """`episodes_per_task` episodes of every procedural task (`spade.procedural`), its levels
    in turn (those of `levels` it has), each answered right at once with the task's reference
    answer: the format and the task, on training seeds (below every evaluation seed)."""
    episodes: list[AgentEpisode] = []
    for task, count in tasks.items():
        env = ProceduralEnv(task, attempts, count)
        playable = levels_in_turn(levels, env.spec.levels) or [env.spec.levels - 1]
        for index, seed in enumerate(distinct_seeds(episodes_per_task, rng)):
            level = playable[index % len(playable)]
            observation, _ = env.reset(seed, level)
            (reply,) = env.solution()
            step = env.step(reply)
            episodes.append(
                AgentEpisode(
                    env_id=env.key,
                    seed=seed,
                    teacher="solution",
                    kind="reasoning",
                    skill=task,
                    messages=[
                        {"role": "system", "content": system_prompt(None, None)},
                        {"role": "user", "content": observation},
                        {"role": "assistant", "content": reply},
                    ],
                    rewards=[step.reward],
                    final_reward=step.reward,
                    terminated=step.terminated,
                    truncated=False,
                    capped=False,
                    solved=step.reward >= 1.0,
                    difficulty=level,
                )
            )
            if step.reward < 1.0:
                raise AgentDataError(
                    f"{env.key} seed {seed}: its reference answer scored {step.reward}"
                )
    return episodes


def write_jsonl(path: str | Path, episodes: Sequence[AgentEpisode]) -> None:
    """One JSON object per line, written atomically."""
    lines = (json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in episodes)
    write_atomic(path, "".join(lines))


def read_jsonl(path: str | Path) -> list[AgentEpisode]:
    text = Path(path).read_text(encoding="utf-8")
    return [AgentEpisode.from_json(json.loads(line)) for line in text.splitlines() if line]


def summary(episodes: Sequence[AgentEpisode]) -> str:
    """Per env (in order of appearance): teacher, episodes, mean final reward, solved rate,
    mean turns, as a Markdown table."""
    by_env: dict[str, list[AgentEpisode]] = {}
    for episode in episodes:
        by_env.setdefault(episode.env_id, []).append(episode)
    rows = []
    for env_id, group in by_env.items():
        n = len(group)
        rows.append(
            [
                env_id.split("/", 1)[-1],
                ", ".join(dict.fromkeys(e.teacher for e in group)),
                n,
                sum(e.final_reward for e in group) / n,
                sum(e.solved for e in group) / n,
                sum(len(e.rewards) for e in group) / n,
            ]
        )
    headers = ["env", "teacher", "episodes", "mean final reward", "solved", "mean turns"]
    return tabulate(rows, headers, tablefmt="github", floatfmt=".2f")
