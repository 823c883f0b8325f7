"""The whole self-play iteration, end to end, on a tiny locally built model.

The agent role generates with the real (tiny) model through the real sandbox and the update
really changes its weights. The designer's and hint writer's replies come from a stand-in
that returns a hand-written seed env and a strategy hint: a model strong enough to write
valid envs is unavailable on a CPU-only machine, and the test is about the loop, not about
the tiny model's designs.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import torch

from spade.cli.train import freeze_accepted, update_summary
from spade.envs.scaffold import PRELUDE, design_part
from spade.models.chat_template import end_of_turn_id, render_prompt
from spade.models.policy import Completion
from spade.rl import learner as learner_module
from spade.rollout import Episode, GenRequest, Responder
from spade.selfplay.agent_step import EnvPlays, PlayableEnv
from spade.selfplay.config import ConfigError, RewardConfig, load_config
from spade.selfplay.design_step import Candidate, known_designs
from spade.selfplay.designer import DesignRequest
from spade.selfplay.designer_update import designer_rewards, designer_samples
from spade.selfplay.diversity import find_near_duplicate
from spade.selfplay.loop import SelfPlayRun
from spade.selfplay.memory import EnvMemory
from spade.selfplay.rewards import DESIGNER_REWARDS, SkillEMA
from spade.suites import freeze_suite, verify_suite
from tests.envs.test_scaffold import DESIGN as PATH_DESIGN

ENV_SOURCE = (
    Path(__file__).resolve().parents[2] / "envs_snapshots/spade-seed/1.0.0/envs/hidden_number.py"
).read_text()
HINT = "Keep the interval of values still possible and always guess its midpoint."
# Ends after two turns with a reward that depends on the reply, so a tiny model's random
# replies give plays with different returns (a learning signal) in every iteration.
LENGTH_ENV = """
import random

class LengthEnv:
    metadata = {"kind": "game", "skill": "counting", "difficulty": "easy"}

    def __init__(self, max_turns=2):
        self.max_turns = max_turns

    def reset(self, seed=None):
        self.target = random.Random(seed).randint(3, 6)
        self.turn = 0
        return "Say anything, then reply with a word of the secret length.", {}

    def step(self, action):
        self.turn += 1
        if self.turn == 1:
            return f"The length is {self.target}.", 0.0, False, False, {}
        reward = 1.0 if action == "x" * self.target else (sum(map(ord, action)) % 4) / 4
        return "Done.", reward, True, False, {}

    def solution(self):
        return ["hello", "x" * self.target]

    def close(self):
        pass
"""


class StandInDesigner:
    """Designer and hint requests get fixed replies; agent requests go to the real policy.

    A fixed reply carries the token ids a model would have sampled to write it (its text
    tokenised, then the end-of-turn token) and the prompt's rendered ids, so the designer's
    training samples are built as for a real reply."""

    designer_prompts: list[str] = []  # every designer prompt's text, for the ablation tests
    sources = [LENGTH_ENV, ENV_SOURCE]

    def __init__(self, policy_responder: Responder, tokenizer: Any) -> None:
        self.policy = policy_responder
        self.tokenizer = tokenizer
        self.end_of_turn = end_of_turn_id(tokenizer)

    def fixed(self, request: GenRequest, text: str) -> Completion:
        prompt = render_prompt(self.tokenizer, list(request.messages))
        prompt_ids = self.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        ids = [*self.tokenizer(text, add_special_tokens=False)["input_ids"], self.end_of_turn]
        return Completion(text, "stop", len(prompt_ids), len(ids), token_ids=ids,
                          prompt_token_ids=prompt_ids)  # fmt: skip

    def __call__(self, requests: Sequence[GenRequest]) -> list[list[Completion]]:
        answers: list[list[Completion] | None] = [None] * len(requests)
        agent = []
        for index, request in enumerate(requests):
            if request.phase == "designer":
                text = "\n".join(str(m["content"]) for m in request.messages)
                StandInDesigner.designer_prompts.append(text)
                sources = self.sources[: request.n]
                answers[index] = [self.fixed(request, f"```python\n{source}```")
                                  for source in sources]  # fmt: skip
            elif request.phase == "hint":
                answers[index] = [self.fixed(request, HINT)] * request.n
            else:
                agent.append(index)
        for index, texts in zip(agent, self.policy([requests[i] for i in agent]), strict=True):
            answers[index] = texts
        return [a for a in answers if a is not None]


class StandInRun(SelfPlayRun):
    def responder(self, step: int) -> Responder:
        return StandInDesigner(super().responder(step), self.learner.tokenizer)


def tiny_config(model: Path, **extra: object) -> dict[str, object]:
    return {
        "model": str(model),
        "iterations": 1,
        "designer.designs_per_iteration": 1,
        "designer.group_size": 2,
        "agent.plays": 4,
        "agent.turn_cap": 3,
        "agent.max_gen_toks": 8,
        "agent.replay_envs": 0,
        # The loop's logic on designed envs alone: no procedural pool filling the iteration
        # (the plain defaults add one; the pool tests below set theirs).
        "agent.envs_per_iteration": None,
        "pool.tasks": {},
        "pool.schedule_levels": False,
        "agent.refill_rounds": 0,  # dynamic sampling has its own test below
        "update.lr": 1e-3,
        "freeze_at_end": False,
        # The loop's own logic on the learner's model; the engines (and `auto`, the default,
        # which picks vLLM where it is installed) are tests/selfplay/test_generation.py's.
        "generation.backend": "live",
        **extra,
    }


def weights(run: SelfPlayRun) -> torch.Tensor:
    return torch.cat([p.detach().flatten().clone() for p in run.learner.model.parameters()])


def test_one_iteration_end_to_end(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = load_config(None, tiny_config(tiny_model_dir, **{"corpus.source": None}))
    run = StandInRun(config, tmp_path / "run")
    run.start()
    before = weights(run)
    metrics = run.iteration()
    shown = capsys.readouterr().err  # the iteration's progress: its phases as they run
    assert "iteration 0" in shown and "designer: 1 prompts" in shown and "agent:" in shown
    assert metrics["designer/candidates"] == 2 and metrics["designer/valid"] == 2
    assert metrics["envs/played"] == 2 and metrics["agent/episodes"] == 8
    assert metrics["samples/designer"] == 2
    # One design prompt, two valid designs: its rewards differ or they don't.
    assert metrics["designer/groups_with_signal"] in (0.0, 1.0)
    assert not torch.equal(before, weights(run)), "the update must change the weights"
    record = json.loads((tmp_path / "run/metrics.jsonl").read_text().splitlines()[0])
    assert {
        "envs/regret",
        "envs/win_rate",
        "time/update",
        "time/rollouts",
        "agent/progress",
        "designer/groups_with_signal",
    } <= record.keys()
    assert metrics["samples/agent"] > 0
    designs = [
        json.loads(line) for line in (tmp_path / "run/designs.jsonl").read_text().splitlines()
    ]
    assert [(d["step"], d["valid"], d["hint"]) for d in designs] == [(0, True, HINT)] * 2
    assert "class LengthEnv" in designs[0]["reply"]
    memory = EnvMemory.load(tmp_path / "run")
    assert len(memory) == 2 and all(e.hint == HINT for e in memory)
    assert (tmp_path / "run/checkpoints").is_dir()
    assert any((tmp_path / "run/tensorboard").glob("events.out.tfevents.*"))
    # A second iteration: the env is now a near-duplicate of memory and is rejected.
    metrics = run.iteration()
    assert metrics["designer/valid"] == 0
    assert metrics["designer/failures"] == {"near_duplicate": 2}
    assert metrics["designer/groups_with_signal"] == 0.0  # no valid design, no signal
    # Each was repaired once: the record keeps the designer's own first reply and its failure.
    lines = (tmp_path / "run/designs.jsonl").read_text().splitlines()
    repaired = [json.loads(line) for line in lines[2:]]
    assert [d["attempts"] for d in repaired] == [2, 2] and designs[0]["first_reply"] is None
    assert all(d["first_failure"].startswith("near_duplicate") for d in repaired)
    assert all("class " in d["first_reply"] for d in repaired)


def test_resume_restores_the_checkpointed_state(tiny_model_dir: Path, tmp_path: Path) -> None:
    config = load_config(None, tiny_config(tiny_model_dir, iterations=2))
    run = StandInRun(config, tmp_path / "run")
    run.start()
    run.iteration()
    saved = weights(run)
    saved_memory = [e.id for e in run.memory]
    del run  # the process "dies" here: nothing but the run directory survives
    resumed = StandInRun(config, tmp_path / "run")
    resumed.resume()
    assert resumed.step == 1
    assert torch.equal(weights(resumed), saved)
    assert [e.id for e in resumed.memory] == saved_memory
    resumed.run()
    assert resumed.step == 2
    steps = [json.loads(line)["step"] for line in (tmp_path / "run/metrics.jsonl").open()]
    assert steps == [0, 1]


def test_a_kill_right_after_a_checkpoint_loses_none_of_its_records(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The iteration's records are written before its checkpoint is published: a process
    killed just after the publish (here while old checkpoints are pruned) resumes past an
    iteration whose metrics, designs and episodes are all on disk."""
    config = load_config(None, tiny_config(tiny_model_dir, iterations=2))
    run = StandInRun(config, tmp_path / "run")
    run.start()

    def killed(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(learner_module, "prune_checkpoints", killed)
    with pytest.raises(KeyboardInterrupt):
        run.iteration()
    del run
    resumed = StandInRun(config, tmp_path / "run")
    resumed.resume()
    assert resumed.step == 1
    for name in ("metrics", "designs", "episodes"):
        steps = {json.loads(line)["step"] for line in (tmp_path / f"run/{name}.jsonl").open()}
        assert steps == {0}, name


def test_fixed_baseline_trains_the_agent_on_a_suite_without_a_designer(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    config = load_config(None, tiny_config(tiny_model_dir, mode="fixed"))
    run = SelfPlayRun(config, tmp_path / "run")
    run.start()
    metrics = run.iteration()
    assert metrics["designer/candidates"] == 0 and metrics["samples/designer"] == 0
    assert math.isnan(metrics["designer/groups_with_signal"])  # nothing designed
    assert metrics["envs/played"] == 2 and metrics["samples/agent"] > 0


def test_a_fixed_baseline_iteration_with_reward_variance_changes_the_weights(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    """On a pool whose episodes end with reply-dependent rewards, the agent's plays differ in
    return, so the update has a gradient and takes a step (an empty update would not)."""
    source = tmp_path / "length_env.py"
    source.write_text(LENGTH_ENV)
    freeze_suite([source], "lengths", "1.0.0", root=tmp_path / "suites")
    overrides = {"mode": "fixed", "fixed_suite": "lengths@1.0.0", "designer.group_size": 1,
                 "memory.cold_start_suite": "lengths@1.0.0"}  # fmt: skip
    config = load_config(None, tiny_config(tiny_model_dir, **overrides))
    run = SelfPlayRun(config, tmp_path / "run", suites_root=tmp_path / "suites")
    run.start()
    before = weights(run)
    metrics = run.iteration()
    assert metrics["agent/truncated"] == 0.0  # every play ended inside the env's budget
    assert metrics["update/optimizer_steps"] >= 1 and metrics["update/agent/with_gradient"] > 0
    assert not torch.equal(before, weights(run))
    assert "update/mismatch/logprob_abs_diff_mean" in metrics


# Solved only by the exact secret word: a tiny model's plays all return 0 (no signal).
EXACT_ENV = """
class ExactWordEnv:
    metadata = {"kind": "game", "skill": "recall", "difficulty": "easy"}

    def __init__(self, max_turns=2):
        self.max_turns = max_turns

    def reset(self, seed=None):
        self.word = f"zq{seed}vx"
        self.turn = 0
        return "Say anything, then reply with the secret word.", {}

    def step(self, action):
        self.turn += 1
        if self.turn == 1:
            return f"The word is {self.word}.", 0.0, False, False, {}
        return "Done.", float(action.strip() == self.word), True, False, {}

    def solution(self):
        return ["hello", self.word]

    def close(self):
        pass
"""


@pytest.mark.parametrize("rounds", [0, 2])
def test_dynamic_sampling_replaces_an_env_whose_plays_carry_no_signal(
    rounds: int, tiny_model_dir: Path, tmp_path: Path
) -> None:
    """The first round plays an env every play fails alike (no gradient); with
    `agent.refill_rounds` a fresh env of the pool is played in its place, whose plays differ,
    and the update steps; without, the iteration has no optimizer step."""
    for name, source in (("exact_env.py", EXACT_ENV), ("length_env.py", LENGTH_ENV)):
        (tmp_path / name).write_text(source)
    freeze_suite([tmp_path / "exact_env.py", tmp_path / "length_env.py"], "mixed", "1.0.0",
                 root=tmp_path / "suites")  # fmt: skip
    overrides = {"mode": "fixed", "fixed_suite": "mixed@1.0.0", "agent.envs_per_iteration": 1,
                 "memory.cold_start_suite": "mixed@1.0.0",
                 "agent.refill_rounds": rounds}  # fmt: skip
    config = load_config(None, tiny_config(tiny_model_dir, **overrides))
    run = SelfPlayRun(config, tmp_path / "run", suites_root=tmp_path / "suites")
    exact = [env for env in run.fixed_pool if "ExactWord" in env.key]
    run._envs_to_play = lambda candidates, rng: [(exact[0], None)]  # type: ignore[method-assign]
    run.start()
    metrics = run.iteration()
    assert metrics["envs/played"] == 1 and metrics["agent/envs_with_signal"] == 0
    assert metrics["agent/refill_envs"] == (1 if rounds else 0)
    assert metrics["agent/refill_envs_with_signal"] == (1 if rounds else 0)
    assert (metrics.get("update/optimizer_steps", 0) >= 1) == bool(rounds)
    assert 0 <= metrics["time/refill"] <= metrics["time/rollouts"]


def test_the_same_plays_give_different_designer_advantages_under_each_reward() -> None:
    """Three designs of one prompt whose envs were played with different outcomes: every
    reward kind ranks or spaces them differently, so their advantages differ."""
    plays = [_plays([1, 1, 0, 0], [1, 1, 1, 0]), _plays([1, 0, 0, 0], [1, 1, 1, 1]),
             _plays([1, 1, 1, 0], [1, 1, 1, 1])]  # fmt: skip
    candidates = [_candidate(f"c{i}") for i in range(3)]
    ema = SkillEMA(RewardConfig().ema_alpha, {"search": 0.2})
    found = {}
    for kind in DESIGNER_REWARDS:
        rewards = designer_rewards(candidates, plays, RewardConfig(kind=kind), ema)
        assert list(rewards) == ["design/0"] and len(rewards["design/0"]) == 3
        samples = designer_samples(candidates, rewards)
        found[kind] = tuple(round(s.advantage, 6) for s in samples)
        assert len(found[kind]) == 3 and abs(sum(found[kind])) < 1e-5  # centred in the group
    assert len(set(found.values())) == 4, found
    # An invalid design gets no sample (no gradient) unless a penalty is configured.
    with_invalid = [plays[0], None, plays[2]]
    rewards = designer_rewards(candidates, with_invalid, RewardConfig(), ema)
    assert rewards["design/0"][1] is None and len(designer_samples(candidates, rewards)) == 2
    penalised = RewardConfig(invalid_penalty=-1.0)
    rewards = designer_rewards(candidates, with_invalid, penalised, ema)
    assert rewards["design/0"][1] == -1.0 and len(designer_samples(candidates, rewards)) == 3


def test_learning_potential_compares_with_the_skill_s_average_before_the_iteration() -> None:
    """A skill's first design scores 0 (no average yet); a known skill's, |w − its EMA|."""
    design = [_plays([1, 1, 0, 0], [1, 1, 0, 0])]  # w = 0.5
    config = RewardConfig(kind="learning_potential")
    fresh = SkillEMA(config.ema_alpha)
    assert designer_rewards([_candidate("c")], design, config, fresh) == {"design/0": [0.0]}
    known = SkillEMA(config.ema_alpha, {"search": 0.2})
    [value] = designer_rewards([_candidate("c")], design, config, known)["design/0"]
    assert value == pytest.approx(0.3)


def _plays(unhinted: list[int], hinted: list[int]) -> EnvPlays:
    def episode(won: int, hint: str | None) -> Episode:
        return Episode("k", 0, hint, rewards=[0.2, float(won) or 0.5], terminated=True)

    env = PlayableEnv("env", "", "a hint", "game", "search")
    return EnvPlays(env, [0] * len(unhinted), [episode(w, None) for w in unhinted],
                    [episode(w, "a hint") for w in hinted])  # fmt: skip


def _candidate(name: str) -> Candidate:
    request = DesignRequest("doc", "", "search", "easy", "game")
    reply = Completion(
        "```python\n...```", "stop", 3, 2, token_ids=[5, 6], prompt_token_ids=[1, 2, 3]
    )
    return Candidate("design/0", request, [], reply)


def test_a_run_without_an_optimizer_step_says_so(tmp_path: Path) -> None:
    idle = [{"update/optimizer_steps": 0}, {"update/optimizer_steps": 0}]
    assert update_summary(idle, tmp_path / "final").startswith("no update: 0 optimizer steps in 2")
    busy = [{"update/optimizer_steps": 1, "update/agent/with_gradient": 6,
             "update/designer/with_gradient": 2}, {}]  # fmt: skip
    assert update_summary(busy, tmp_path) == (
        "updates: 1 optimizer steps in 2 iterations; samples with gradient: agent 6, designer 2"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "agent.nope=1"], "agent.nope"),
        (["--set", "agent.plays=0"], "agent.plays"),
        (["--set", "update.lr=oops"], "update.lr: Input should be a valid number"),
        (["--set", "update.lora=maybe"], "update.lora: Input should be a valid boolean"),
        (["--config", "/nonexistent.yaml"], "cannot read"),
        (["--set", "update.role_temperatures={agent: 0.5}"], "set those instead"),
        (["--set", "model=/nonexistent"], "model /nonexistent: not a Hugging Face model dir"),
        pytest.param(
            ["--set", "update.device=cuda"],
            "no usable CUDA device",
            marks=pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA"),
        ),
        (["--set", "corpus.source=/nonexistent.jsonl"], "/nonexistent.jsonl: cannot open"),
    ],
)
def test_bad_config_is_a_one_line_error(args: list[str], message: str, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "spade.cli.train", "--run-dir", str(tmp_path / "r"), *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "r").exists()


def test_an_update_override_keeps_the_other_laptop_defaults() -> None:
    overrides = {"update.lora": True, "agent.temperature": 0.7, "designer.temperature": 0.0}
    config = load_config(None, overrides)
    assert config.update == {"lr": 2e-6, "micro_batch_size": 2, "max_length": 2048,
                             "lora": True}  # fmt: skip
    update = config.update_config()
    assert update.micro_batch_size == 2
    # Each role is scored at its sampling temperature (greedy logprobs are at 1).
    assert update.role_temperatures == {"designer": 1.0, "agent": 0.7}
    # PyYAML reads 1e-5 (no dot) as a string; the update config still takes it as a number.
    assert load_config(None, {"update.lr": "1e-5"}).update_config().lr == 1e-5


@pytest.mark.parametrize(
    ("args", "refused"),
    [
        (["--set", "agent.plays=5"], True),
        (["--iterations", "5", "--set", "agent.plays=5"], True),  # more iterations, not more
        (["--iterations", "5"], False),
        ([], False),  # a config.yaml naming some fields only is the same config as written
    ],
)
def test_resume_with_a_changed_config_is_refused(
    tmp_path: Path, args: list[str], refused: bool
) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    # A model that is not there: an accepted resume stops at it, before anything is written
    # (the embedded model would be bootstrapped first, spade.selfplay.bootstrap).
    (run_dir / "config.yaml").write_text(
        "model: /nonexistent\niterations: 2\nupdate: {lr: 1.0e-5}\n"
    )
    command = [sys.executable, "-m", "spade.cli.train", "--resume", str(run_dir), *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert ("would change the run's config" in result.stderr) == refused, result.stderr
    assert refused or "model /nonexistent" in result.stderr, result.stderr
    assert sorted(p.name for p in run_dir.iterdir()) == ["config.yaml"]


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ({"no_corpus": True}, "no document in the designer prompt"),
        ({"no_memory": True}, "no reference env in the designer prompt"),
        ({"no_designer_training": True}, "no designer samples in the update"),
        ({"reward.kind": "regret"}, "designer samples"),
        ({"reward.kind": "solve_rate"}, "designer samples"),
        ({"reward.kind": "learning_potential"}, "designer samples"),
    ],
)
def test_each_ablation_and_reward_variant_runs_an_iteration(
    setting: dict[str, object], expected: str, tiny_model_dir: Path, tmp_path: Path
) -> None:
    config = load_config(None, tiny_config(tiny_model_dir, **setting))
    run = StandInRun(config, tmp_path / "run")
    run.start()
    StandInDesigner.designer_prompts.clear()
    metrics = run.iteration()
    prompts = StandInDesigner.designer_prompts
    assert prompts and metrics["designer/valid"] == 2 and metrics["samples/agent"] > 0
    if expected.startswith("no document"):
        assert not any("Source document" in p for p in prompts)
    elif expected.startswith("no reference"):
        assert not any("Reference environment" in p for p in prompts)
    elif expected.startswith("no designer samples"):
        assert metrics["samples/designer"] == 0
    else:
        assert metrics["samples/designer"] == 2
    if "no_corpus" not in setting:
        assert any("Source document" in p for p in prompts)
    if "no_memory" not in setting:
        assert any("Reference environment" in p for p in prompts)


def test_a_design_that_repeats_a_known_warm_start_env_is_rejected(tmp_path: Path) -> None:
    known = tmp_path / "designer.jsonl"
    record = {"reply": f"```python\n{LENGTH_ENV}```", "mechanic": "length"}
    known.write_text(json.dumps(record) + "\n")
    [(name, source)] = known_designs(str(known))
    assert name.startswith("known:") and "class LengthEnv" in source
    renamed = LENGTH_ENV.replace("LengthEnv", "SizeEnv").replace("target", "goal")
    duplicate = find_near_duplicate(renamed, [(name, source)])
    assert duplicate is not None and duplicate.of == name
    with pytest.raises(ConfigError, match="designer.known_designs"):
        known_designs(str(tmp_path / "missing.jsonl"))
    # Several files (a warm start and the one continued from it): every design of each.
    second = tmp_path / "more" / "designer.jsonl"
    second.parent.mkdir()
    second.write_text(json.dumps({"reply": f"```python\n{renamed}```"}) + "\n")
    both = known_designs([str(known), str(second)])
    assert len(both) == 2 and len({name for name, _ in both}) == 2
    with pytest.raises(ConfigError, match="missing.jsonl"):
        known_designs([str(known), str(tmp_path / "missing.jsonl")])


# A second scaffolded design, unlike PATH_DESIGN in structure (not a near-duplicate of it).
TALLY_DESIGN = """\
class TallyEnv(TextScaffold):
    metadata = {"kind": "game", "skill": "arithmetic", "difficulty": "easy"}
    max_turns = 5

    def setup(self, rng):
        self.goal = rng.randint(6, 12)
        self.total = 0
        return f"Reach exactly {self.goal} by adding 1, 2 or 3 per turn: \\\\boxed{{2}}."

    def act(self, command):
        step = int(command)
        if step not in (1, 2, 3):
            return "Add 1, 2 or 3.", None
        self.total += step
        if self.total > self.goal:
            self.total = 0
            return "Too far: back to 0.", 0.0
        # Most of the credit is for landing on the goal: adding at random comes close too.
        progress = 1.0 if self.total == self.goal else 0.4 * self.total / self.goal
        return f"Total {self.total}.", progress

    def solution(self):
        rest = ["\\\\boxed{%d}" % (self.goal % 3)] if self.goal % 3 else []
        return ["\\\\boxed{3}"] * (self.goal // 3) + rest
"""


class ScaffoldedDesigner(StandInDesigner):
    """Replies with two designs on the text-env scaffold (each a subclass only)."""

    sources = [PATH_DESIGN, TALLY_DESIGN]


class ScaffoldedRun(SelfPlayRun):
    def responder(self, step: int) -> Responder:
        return ScaffoldedDesigner(super().responder(step), self.learner.tokenizer)


def test_a_scaffolded_designers_envs_are_played_remembered_and_frozen_whole(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    """The loop assembles a scaffolded reply into a whole env: that is what the agent plays,
    the memory keeps and the frozen suite holds (and verifies), while the designer's sample
    is its reply as written."""
    overrides = {"corpus.source": None, "designer.scaffold": "text", "designer.kinds": ["game"],
                 "freeze_at_end": True}  # fmt: skip
    config = load_config(None, tiny_config(tiny_model_dir, **overrides))
    run = ScaffoldedRun(config, tmp_path / "run")
    run.start()
    metrics = run.iteration()
    assert metrics["designer/valid"] == 2 and metrics["envs/played"] == 2
    memory = EnvMemory.load(tmp_path / "run")
    assert sorted(design_part(e.source) for e in memory) == sorted(ScaffoldedDesigner.sources)
    assert all(e.source.startswith(PRELUDE) for e in memory)
    designs = [
        json.loads(line) for line in (tmp_path / "run/designs.jsonl").read_text().splitlines()
    ]
    assert all(d["code"].startswith(PRELUDE) and "TextScaffold" in d["reply"] for d in designs)
    assert all("class TextScaffold" not in d["reply"] for d in designs)
    frozen = freeze_accepted(run)
    assert frozen is not None
    report = verify_suite(frozen.split(" ")[0], root=tmp_path / "run/suites")
    assert report.ok, report


def test_fit_turn_cap_and_envs_per_iteration_choose_what_the_agent_plays(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    """`fit_turn_cap` keeps the train envs whose stated budget fits in the cap (a longer env's
    plays end truncated, masked from the update); `envs_per_iteration` has replays fill up
    what the designs left, so SPADE plays as many envs as the fixed arm."""
    fitting = {
        "CodeBreakerEnv",
        "HiddenNumberEnv",
        "HiddenModulusEnv",
        "TwentyQuestionsEnv",
        "HiddenRecurrenceEnv",
    }  # spade-seed@1.1.0's train envs of at most 10 turns
    agent = {"agent.turn_cap": 10, "agent.fit_turn_cap": True}
    fixed = SelfPlayRun(load_config(None, tiny_config(tiny_model_dir, mode="fixed", **agent)),
                        tmp_path / "fixed")  # fmt: skip
    assert {env.key.split("/")[1].removesuffix("-v1") for env in fixed.fixed_pool} == fitting
    config = load_config(None, tiny_config(tiny_model_dir, **agent, **{
        "agent.replay_envs": 1, "agent.envs_per_iteration": 4}))  # fmt: skip
    spade = SelfPlayRun(config, tmp_path / "spade")
    played = spade._envs_to_play([], random.Random(0))
    assert len(played) == 4 and all(c is None for _, c in played)
    assert {env.key.split("/")[1].removesuffix("-v1") for env, _ in played} <= fitting
    config = load_config(None, tiny_config(tiny_model_dir, **{"agent.replay_envs": 1}))
    assert len(SelfPlayRun(config, tmp_path / "plain")._envs_to_play([], random.Random(0))) == 1
    too_short = tiny_config(tiny_model_dir, mode="fixed", **{"agent.fit_turn_cap": True})
    with pytest.raises(ConfigError, match="agent.fit_turn_cap"):  # turn_cap 3: no env fits
        SelfPlayRun(load_config(None, too_short), tmp_path / "short")


def test_the_adaptive_pool_plays_scheduled_levels_and_resume_restores_the_ceilings(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    """Fixed mode on spade-seed@1.2.0 plus a procedural task: every play happens at the
    level its env's ceiling allows, what the (tiny, never-solving) policy does moves the
    ceilings (demotion configured here), and a resumed run has them back."""
    overrides = {"mode": "fixed", "fixed_suite": "spade-seed@1.2.0", "iterations": 2,
                 "agent.envs_per_iteration": 2, "agent.plays": 2,
                 "pool.tasks": {"family_relationships": 5}, "pool.schedule_levels": True,
                 "pool.scheduler.start": 3, "pool.scheduler.span": 1,
                 "pool.scheduler.window": 2, "pool.scheduler.demote_below": 0.0,
                 "agent.hinted_plays": False}  # fmt: skip
    config = load_config(None, tiny_config(tiny_model_dir, **overrides))

    def start(run: SelfPlayRun) -> SelfPlayRun:
        keep = ("rg:family_relationships", "spade-seed/HiddenNumberEnv-v1")
        run.fixed_pool = [env for env in run.fixed_pool if env.key in keep]
        return run

    run = start(SelfPlayRun(config, tmp_path / "run"))
    assert len(run.fixed_pool) == 2
    assert [e.levels for e in run.fixed_pool] == [5, 5]
    run.start()
    metrics = run.iteration()
    # Two unsolved plays at ceiling 3 make a full window at 0 success: one level down.
    assert metrics["levels/played_mean"] == 3.0
    assert metrics["levels/ceilings"] == {"rg:family_relationships": 2,
                                          "spade-seed/HiddenNumberEnv-v1": 2}  # fmt: skip
    episodes = [json.loads(line) for line in (tmp_path / "run/episodes.jsonl").open()]
    assert any(e["env"] == "rg:family_relationships" for e in episodes)
    assert not any(e["hinted"] for e in episodes) and metrics["agent/episodes"] == 4
    # Every play, not the sample above: its env, the level it was played at, how it ended.
    plays = [json.loads(line) for line in (tmp_path / "run/plays.jsonl").open()]
    assert len(plays) == 4 and {p["step"] for p in plays} == {0}
    pool = ["rg:family_relationships", "spade-seed/HiddenNumberEnv-v1"]
    assert sorted(p["env"] for p in plays) == sorted(2 * pool)
    assert {p["level"] for p in plays} == {3} and not any(p["solved"] for p in plays)
    assert all(p["turns"] >= 1 and not p["hinted"] for p in plays)
    saved = run.scheduler.to_json()
    del run
    resumed = start(SelfPlayRun(config, tmp_path / "run"))
    resumed.resume()
    assert resumed.scheduler.to_json() == saved
    assert resumed.iteration()["levels/played_mean"] == 2.0
    replayed = [json.loads(line) for line in (tmp_path / "run/plays.jsonl").open()]
    assert [p["step"] for p in replayed] == [0] * 4 + [1] * 4
    assert {p["level"] for p in replayed[4:]} == {2}


class LevelledDesigner(StandInDesigner):
    """Replies with designs that declare difficulty levels (two seed envs of 1.2.0)."""

    root = Path(__file__).resolve().parents[2] / "envs_snapshots/spade-seed/1.2.0/envs"
    sources = [(root / "code_breaker.py").read_text(), (root / "hidden_number.py").read_text()]


class LevelledRun(SelfPlayRun):
    def responder(self, step: int) -> Responder:
        return LevelledDesigner(super().responder(step), self.learner.tokenizer)


def test_designs_with_levels_are_played_at_the_scheduler_s_start_level(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    overrides = {"corpus.source": None, "pool.schedule_levels": True, "pool.scheduler.start": 1}
    config = load_config(None, tiny_config(tiny_model_dir, **overrides))
    run = LevelledRun(config, tmp_path / "run")
    run.start()
    metrics = run.iteration()
    assert metrics["designer/valid"] == 2 and metrics["envs/played"] == 2
    assert metrics["levels/played_mean"] == 1.0
    assert metrics["levels/ceilings"] == {}  # a design is played once: no ceiling of its own
    episodes = [json.loads(line) for line in (tmp_path / "run/episodes.jsonl").open()]
    assert any("5 guesses" in e["transcript"][1]["content"] for e in episodes)  # level 1


def test_skipping_hinted_plays_is_refused_where_the_designer_reward_needs_regret(
    tiny_model_dir: Path,
) -> None:
    with pytest.raises(ConfigError, match="hinted_plays: false leaves no regret"):
        load_config(None, tiny_config(tiny_model_dir, **{"agent.hinted_plays": False}))
    fine = {"agent.hinted_plays": False, "reward.kind": "solve_rate"}
    assert not load_config(None, tiny_config(tiny_model_dir, **fine)).agent.hinted_plays
