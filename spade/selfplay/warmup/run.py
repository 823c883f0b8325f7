"""`spade-train warmup`: build the warm-start data, fine-tune on it (TRL's SFTTrainer), export.

A run directory holds everything, so a run can be inspected, resumed and reused:

    config.yaml            the WarmupConfig
    data/agent.jsonl       teacher-played episodes of the train-split envs (training seeds)
    data/designer.jsonl    generated env sources in the designer's prompt shape, with hints
    data/summary.md        what each env's episodes were taught by, and how they scored
    sft/checkpoints/       the trainer's checkpoints (what --resume continues from)
    sft/model/             the warm checkpoint: a HF dir for `--set model=` and `spade-eval`
    losses.jsonl           the training loss by optimizer step

Data is built once: a resumed run reuses the files (so a kill during training keeps them).
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from spade.atomic import write_atomic
from spade.corpus import CorpusOptions, open_corpus
from spade.rl.sft import SftConfig, SftExample, train_sft
from spade.sandbox import SandboxConfig
from spade.selfplay.config import (
    ConfigError,
    CorpusConfig,
    read_with_overrides,
    validation_message,
)
from spade.suites import load_suite

if TYPE_CHECKING:
    from spade.selfplay.warmup.designer_data import DesignerDataConfig


class WarmupConfig(BaseModel):
    """A warm start's recipe. A field added here takes a default that keeps the behaviour
    from before it (recorded experiment units lack it: spade.experiments.units)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field("smollm2-135m", description="HF model dir or built-in alias to start from")
    suite: str = Field("spade-seed@1.1.0", description="agent data from this suite's train split")
    agent_episodes_per_env: int = Field(
        6, ge=0, description="teacher episodes per train env (0: a designer-only warm start)"
    )
    agent_levels: list[int] | None = Field(
        None,
        description=(
            "difficulty levels the teacher episodes of an env with levels take in turn "
            "(e.g. [0, 1, 2] for spade-seed@1.2.0); None: every episode at the env's default level"
        ),
    )
    pool_tasks: dict[str, int] = Field(
        default_factory=dict,
        description=(
            "procedural tasks (spade.procedural) to add reference-answer episodes of, "
            "with the number of their levels to use, e.g. spade.procedural.POOL_TASKS"
        ),
    )
    pool_episodes_per_task: int = Field(0, ge=0, description="episodes per procedural task")
    pool_attempts: int = Field(3, ge=1, description="attempts a procedural episode states")
    designer_examples: int = Field(160, ge=0, description="designer (and hint) examples")
    hint_examples: int | None = Field(
        None,
        ge=0,
        description=(
            "hint examples, from the first N designs (None: one per design); a hint prompt is "
            "the whole env source for a ~30-token reply, so hints are cheap to learn and dear to "
            "train on"
        ),
    )
    designer_data: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "spade.selfplay.warmup.designer_data.DesignerDataConfig fields (e.g. "
            "reference_counts, excerpt_chars: match the run's memory.references/excerpt_chars)"
        ),
    )
    corpus: CorpusConfig = Field(default_factory=CorpusConfig)
    sft: dict[str, Any] = Field(
        default_factory=dict, description="spade.rl.sft.SftConfig fields (epochs, lr, ...)"
    )
    seed: int = 0
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)

    def sft_config(self) -> SftConfig:
        return SftConfig(**{"seed": self.seed, **self.sft})

    def designer_data_config(self) -> DesignerDataConfig:
        from spade.selfplay.warmup.designer_data import DesignerDataConfig

        fields: dict[str, Any] = {  # YAML lists become the config's tuples
            k: tuple(v) if isinstance(v, list) else v for k, v in self.designer_data.items()
        }
        return DesignerDataConfig(**fields)


def load_warmup_config(path: Path | None, overrides: dict[str, Any] | None = None) -> WarmupConfig:
    raw = read_with_overrides(path, overrides)
    try:
        config = WarmupConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(validation_message(path, exc)) from None
    # Both free-form sections are checked now, not after the data phase has run for minutes.
    for section, build in (
        ("sft", config.sft_config),
        ("designer_data", config.designer_data_config),
    ):
        try:
            build()
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{path or 'config'}: {section}: {exc}") from None
    return config


@dataclass(frozen=True)
class WarmupReport:
    model_dir: Path
    examples: dict[str, int]
    """Examples by kind (agent, designer, hint, repair)."""
    steps: int
    first_loss: float | None
    last_loss: float | None
    seconds: dict[str, float]


def run_warmup(config: WarmupConfig, run_dir: Path, resume: bool = False) -> WarmupReport:
    from transformers import AutoTokenizer

    from spade.models.builtin import BUILTIN_MODELS, builtin_model_dir
    from spade.selfplay.warmup.tokens import ExampleTokens

    run_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(run_dir / "config.yaml", yaml.safe_dump(config.model_dump(mode="json")))
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    agent, designer = _data(config, run_dir / "data", resume)
    seconds["data"] = time.perf_counter() - started
    model_dir = builtin_model_dir(config.model) if config.model in BUILTIN_MODELS else config.model
    tokens = ExampleTokens(AutoTokenizer.from_pretrained(model_dir))
    examples = _examples(tokens, agent, designer, config.hint_examples)
    counts: dict[str, int] = {}
    for example in examples:
        kind = example.source.split(":", 1)[0]
        counts[kind] = counts.get(kind, 0) + 1
    started = time.perf_counter()
    result = train_sft(config.model, examples, config.sft_config(), run_dir / "sft", resume)
    seconds["sft"] = time.perf_counter() - started
    lines = "".join(json.dumps({"step": s, "loss": loss}) + "\n" for s, loss in result.losses)
    write_atomic(run_dir / "losses.jsonl", lines)
    losses = [loss for _, loss in result.losses]
    return WarmupReport(
        result.model_dir,
        counts,
        result.steps,
        losses[0] if losses else None,
        losses[-1] if losses else None,
        seconds,
    )


def _data(
    config: WarmupConfig, data_dir: Path, resume: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The agent and designer records: each file read back on resume when it is there, else
    built and written (so a kill between the two keeps the first)."""
    agent_path, designer_path = data_dir / "agent.jsonl", data_dir / "designer.jsonl"
    data_dir.mkdir(parents=True, exist_ok=True)
    if not (resume and agent_path.is_file()):
        _write_jsonl(agent_path, _agent_records(config, data_dir))
    if not (resume and designer_path.is_file()):
        _write_jsonl(designer_path, _designer_records(config))
    return _read_jsonl(agent_path), _read_jsonl(designer_path)


def _agent_records(config: WarmupConfig, data_dir: Path) -> list[dict[str, Any]]:
    from spade.selfplay.warmup.agent_data import (
        AgentEpisode,
        build_agent_data,
        build_procedural_data,
        summary,
    )

    episodes: list[AgentEpisode] = []
    skipped: list[str] = []
    if config.agent_episodes_per_env:
        rng = random.Random(f"warmup/agent/{config.seed}")
        train_envs = load_suite(config.suite).envs_in("train")
        episodes = build_agent_data(
            train_envs,
            config.agent_episodes_per_env,
            rng,
            config.sandbox,
            config.agent_levels,
            skipped,
        )
    if config.pool_tasks and config.pool_episodes_per_task:
        rng = random.Random(f"warmup/pool/{config.seed}")
        levels = config.agent_levels or [0]
        episodes += build_procedural_data(
            config.pool_tasks, config.pool_episodes_per_task, levels, config.pool_attempts, rng
        )
    if not episodes:
        return []
    left_out = "".join(f"\n- {name}" for name in skipped)
    if skipped:
        left_out = (
            f"\n\nLeft out below the top level (the scripted teacher did not solve):{left_out}"
        )
    write_atomic(data_dir / "summary.md", summary(episodes) + left_out + "\n")
    return [e.to_json() for e in episodes]


def _designer_records(config: WarmupConfig) -> list[dict[str, Any]]:
    from spade.selfplay.memory import cold_start_envs
    from spade.selfplay.warmup.designer_data import build_designer_data

    if config.designer_examples == 0:
        return []
    data_config = config.designer_data_config()
    rng = random.Random(f"warmup/designer/{config.seed}")
    corpus = open_corpus(
        config.corpus.source,
        CorpusOptions(min_words=config.corpus.min_words, max_words=config.corpus.max_words),
    )
    # The loop's cold-start references: the suite's train split (never a held-out env).
    cold_start = cold_start_envs(config.suite) if data_config.cold_start_share > 0 else []
    designs = build_designer_data(
        corpus,
        config.designer_examples,
        rng,
        config.sandbox,
        config=data_config,
        progress=True,
        cold_start=cold_start,
    )
    return [e.to_json() for e in designs]


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    write_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def _examples(
    tokens: Any,
    agent: list[dict[str, Any]],
    designer: list[dict[str, Any]],
    hints: int | None = None,
) -> list[SftExample]:
    examples = [
        tokens.conversation(r["messages"], f"agent:{r['env_id']}:{r['teacher']}") for r in agent
    ]
    for index, record in enumerate(designer):
        mechanic = record["mechanic"]
        reply = {"role": "assistant", "content": record["reply"]}
        examples.append(tokens.conversation([*record["messages"], reply], f"designer:{mechanic}"))
        if record.get("repair_messages"):
            repair = [*record["repair_messages"], reply]
            examples.append(tokens.conversation(repair, f"repair:{mechanic}", last_only=True))
        if record.get("hint_reply") and (hints is None or index < hints):
            hint = {"role": "assistant", "content": record["hint_reply"]}
            examples.append(
                tokens.conversation([*record["hint_messages"], hint], f"hint:{mechanic}")
            )
    return examples


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the warm-start data ({exc})") from None
