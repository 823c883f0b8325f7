"""What an iteration writes down: its metrics, its designs, one line per play and a few whole
episodes (the run log's records; spade.selfplay.run_log writes them)."""

from __future__ import annotations

from typing import Any

from spade.rl.samples import TrainingSample
from spade.selfplay.agent_step import EnvPlays, PlayableEnv
from spade.selfplay.design_step import Candidate
from spade.selfplay.rewards import groups_with_signal
from spade.selfplay.run_log import mean_or_nan


def iteration_metrics(
    candidates: list[Candidate],
    plays: list[EnvPlays],
    envs: list[tuple[PlayableEnv, Candidate | None]],
    rewards: dict[str, list[float | None]],
    samples: list[TrainingSample],
    update: dict[str, float],
    timings: dict[str, float],
) -> dict[str, Any]:
    designed = [p for (_, c), p in zip(envs, plays, strict=True) if c is not None]
    scored = designed or plays
    regrets = [p.regret for p in scored if p.regret is not None]
    unhinted = [e for p in plays for e in p.unhinted]
    failures: dict[str, int] = {}
    for candidate in candidates:
        if candidate.failure:
            name = candidate.failure.split(":", 1)[0][:40]
            failures[name] = failures.get(name, 0) + 1
    metrics: dict[str, Any] = {
        "designer/candidates": len(candidates),
        "designer/valid": sum(c.valid for c in candidates),
        "designer/validity_rate": mean_or_nan([float(c.valid) for c in candidates]),
        "designer/attempts": mean_or_nan([float(c.attempts) for c in candidates]),
        "designer/failures": failures,
        # What the designer learns from: a group's advantages are its rewards centred, so a
        # group whose designs all earn the same (at success 0 the plateau term is 0 for all)
        # teaches nothing, whatever the number of designer samples.
        "designer/groups_with_signal": groups_with_signal(rewards),
        "envs/played": len(plays),
        "envs/win_rate": mean_or_nan([p.win_rate for p in scored]),
        "envs/regret": mean_or_nan(regrets),
        "agent/return": mean_or_nan([e.training_return for e in unhinted]),
        # The env's last reward whether or not the episode ended: partial credit a weak agent
        # earns even when every episode is truncated (and so masked from the loss).
        "agent/progress": mean_or_nan([e.final_reward for e in unhinted]),
        "agent/truncated": mean_or_nan([float(not e.terminated) for e in unhinted]),
        "agent/episodes": len(unhinted),
        "samples/agent": sum(s.role == "agent" for s in samples),
        "samples/designer": sum(s.role == "designer" for s in samples),
    }
    metrics.update({f"update/{k}": v for k, v in update.items()})
    metrics.update({f"time/{k}": round(v, 3) for k, v in timings.items()})
    total = timings.get("total") or 1.0
    sandbox = timings.get("validation", 0.0) + timings.get("rollout_env", 0.0)
    metrics["time/sandbox_fraction"] = round(sandbox / total, 4)
    return metrics


def design_record(candidate: Candidate, played: dict[str, Any] | None) -> dict[str, Any]:
    request = candidate.request
    return {
        "group": candidate.group,
        "kind": request.kind,
        "skill": request.skill,
        "difficulty": request.difficulty,
        "document_id": request.document_id,
        "attempts": candidate.attempts,
        "valid": candidate.valid,
        "failure": candidate.failure,
        "reply": candidate.reply,
        "code": candidate.code,
        "hint": candidate.hint,
        # The designer's own first reply and why it failed: a repair prompt is never in a warm
        # start's data, so the last reply's failure alone misreports what the designer writes.
        "first_reply": candidate.first[0] if candidate.first else None,
        "first_failure": candidate.first[1] if candidate.first else None,
        **(played or {"env_id": None, "win_rate": None, "regret": None}),
    }


LOGGED_ENVS = 4
"""Envs per iteration whose first seed's plays (with and without the hint) are logged."""


def sample_episodes(plays: list[EnvPlays], envs: int) -> list[dict[str, Any]]:
    """The first seed's unhinted and hinted play of the first `envs` envs played."""
    records = []
    for result in plays[:envs]:
        for hinted, episodes in ((False, result.unhinted), (True, result.hinted)):
            if not episodes:
                continue
            episode = episodes[0]
            records.append(
                {
                    "env": result.env.key,
                    "seed": episode.seed,
                    "hinted": hinted,
                    "hint": episode.hint,
                    "transcript": episode.messages,
                    "rewards": episode.rewards,
                    "return": episode.training_return,
                    "terminated": episode.terminated,
                    "truncated": episode.truncated,
                    "error": episode.error,
                }
            )
    return records


def play_records(plays: list[EnvPlays]) -> list[dict[str, Any]]:
    """One compact line per episode played (hinted and unhinted, refills included): which env,
    level and seed, and how it ended. What an analysis of a run needs to ask which envs and
    levels the update saw and paid, without the transcripts (a few are in `sample_episodes`)."""
    return [
        {
            "env": result.env.key,
            "level": result.env.difficulty,
            "seed": episode.seed,
            "hinted": hinted,
            "return": episode.training_return,
            "solved": episode.solved,
            "terminated": episode.terminated,
            "truncated": episode.truncated,
            "error": episode.error is not None,
            "turns": len(episode.actions),
        }
        for result in plays
        for hinted, episodes in ((False, result.unhinted), (True, result.hinted))
        for episode in episodes
    ]
