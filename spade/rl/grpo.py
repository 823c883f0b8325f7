"""The policy update: a GRPO-style clipped policy gradient with precomputed per-role advantages.

Objective, per completion token t of a sample with advantage A (one policy, two roles;
A arrives normalised per role from `spade.rl.advantages`):

    ratio_t = exp(logp_t - old_logp_t)
    loss_t  = -min(ratio_t * A, clip(ratio_t, 1 - epsilon, 1 + epsilon_high) * A)
              (+ beta * KL_t to the initial policy, k3 estimator, when beta > 0)

`old_logp` is the policy before this update, computed once up front (a no-grad pass) when
there are several passes (`num_iterations`) or several optimizer steps per batch, and the clip
bounds how far later passes move. With one pass and one step every micro-batch sees the
weights before any move, so `old_logp` is the gradient pass's own `logp.detach()`: the ratio
is exactly 1, the step is the plain policy gradient, and the mismatch and the TIS weights read
those logprobs (a forward pass over the batch fewer; the figures are the same).

Rollout-vs-learner mismatch: the sampler's per-token logprobs (`TrainingSample.
sampled_logprobs`, from the generation backend) are compared with `old_logp` on the same
tokens before any weight moves, and reported as `mismatch/*` (mean and max |Δ logp|, the
max and min ratio, a k3 KL), as verl and prime-rl do; with nothing to train on, a few
samples are scored anyway so every update reports it. With `tis_cap`, each token's loss is
weighted by min(exp(old_logp - sampled_logp), tis_cap) (truncated importance sampling), the
correction for a sampler whose numerics differ from the learner's.
Without a KL term a zero-advantage sample has exactly zero gradient: it counts in the
normaliser but is not run, and an update with no signal at all takes no optimizer step
(AdamW's momentum would otherwise still move the weights).

Normalisation ('dapo', TRL's default `loss_type`): every completion token of an optimizer
step weighs the same, 1 / (completion tokens in the step), whichever micro-batch it sits in.
Why for SPADE: an agent episode is split into one sample per turn, and token-level weighting
makes that split neutral, the same as TRL's multi-turn training of a whole episode as one
completion with observation tokens masked ('grpo', per-sequence means, would give a turn
of a 20-turn episode as much weight as a whole one-turn episode). 'grpo' is kept as an option.

Why not TRL's `GRPOTrainer` itself (trl 1.16): its `rollout_func` hook only replaces
generation (it returns prompt/completion ids and logprobs); advantages are then always
computed inside the trainer from reward functions, as (reward - group mean) / std over fixed
groups of `num_generations` completions of one dataset prompt. SPADE's advantages are
precomputed per role over variable-sized groups (the plays of one env, spread over several
turns each; designer groups by skill), and a reward function returning them would still be
re-centred in the wrong groups. The trainer also owns the loop (dataset sampler, `train()`,
its own checkpoints), while SPADE's loop must checkpoint the env memory with the policy.
Bending it would mean overriding private methods that change between releases. So this
module uses TRL's pieces instead: `selective_log_softmax` and `entropy_from_logits` for
per-token log-probabilities, TRL's input layout (left-padded prompts, right-padded
completions, logits only for the completion positions) and TRL's loss, written here as the
pure function `clipped_surrogate`; `tests/rl/test_grpo.py` checks it against TRL's
`GRPOTrainer._compute_loss` on the same inputs.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import torch
from trl.trainer.utils import entropy_from_logits, selective_log_softmax

from spade.rl.config import UpdateConfig
from spade.rl.distributed import SINGLE_PROCESS, World
from spade.rl.metrics import MismatchTally, RoleTally, UpdateMetrics, mean, role_metrics
from spade.rl.samples import Batch, Role, TokenizedSample, collate

ReferenceLogprobs = Callable[[Batch, float], torch.Tensor]
"""Per-token log-probabilities of a batch's completions under the reference policy, at a
temperature."""


@dataclass
class SurrogateTerms:
    per_token_loss: torch.Tensor
    ratio: torch.Tensor
    is_clipped: torch.Tensor
    """Where the clipped branch is taken, so the token has no gradient (TRL's region clip)."""
    kl: torch.Tensor | None


def clipped_surrogate(
    logps: torch.Tensor,
    old_logps: torch.Tensor,
    advantages: torch.Tensor,
    epsilon_low: float,
    epsilon_high: float,
    ref_logps: torch.Tensor | None = None,
    beta: float = 0.0,
) -> SurrogateTerms:
    """Per-token clipped surrogate loss; `advantages` has one value per row (B,) or per token."""
    adv = advantages.unsqueeze(1) if advantages.dim() == 1 else advantages
    ratio = torch.exp(logps - old_logps)
    clipped_ratio = torch.clamp(ratio, 1 - epsilon_low, 1 + epsilon_high)
    per_token_loss = -torch.min(ratio * adv, clipped_ratio * adv)
    kl = None
    if beta != 0.0:
        if ref_logps is None:
            raise ValueError("beta > 0 needs reference log-probabilities")
        delta = ref_logps - logps
        kl = torch.exp(delta) - delta - 1  # k3: unbiased, always >= 0
        per_token_loss = per_token_loss + beta * kl
    is_clipped = ((ratio < 1 - epsilon_low) & (adv < 0)) | ((ratio > 1 + epsilon_high) & (adv > 0))
    return SurrogateTerms(per_token_loss, ratio, is_clipped, kl)


def token_weight(completion_len: int, step_tokens: int, step_samples: int, loss_type: str) -> float:
    """Weight of each of a sample's completion tokens in its optimizer step's loss."""
    if loss_type == "dapo":
        return 1.0 / step_tokens
    return 1.0 / (completion_len * step_samples)  # 'grpo': mean per sequence, then over them


def completion_logprobs(
    model: Any, batch: Batch, temperature: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probability and entropy (detached) at each completion position, (B, width) each."""
    width = batch.completion_width
    # Logits only for the positions that predict completion tokens: the prompt's logits
    # are never computed, let alone in the loss.
    logits = model(
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=batch.position_ids,
        logits_to_keep=width + 1,
        use_cache=False,
    ).logits[:, :-1, :]
    logits = logits.float()  # fp32 softmax: bf16 log-probs would make a noisy ratio
    if temperature != 1.0:
        logits = logits / temperature
    logps = selective_log_softmax(logits, batch.input_ids[:, -width:])
    with torch.no_grad():
        entropy = entropy_from_logits(logits.detach())
    return logps, entropy


@dataclass
class _MicroBatch:
    batch: Batch
    weights: torch.Tensor
    """(B, width): completion mask times each token's weight in its step's loss."""
    role: Role
    old_logps: torch.Tensor | None = None
    ref_logps: torch.Tensor | None = None


def grpo_update(
    model: Any,
    optimizer: torch.optim.Optimizer,
    samples: Sequence[TokenizedSample],
    config: UpdateConfig,
    *,
    pad_id: int,
    step: int,
    optimizer_steps_done: int,
    reference: ReferenceLogprobs | None = None,
    autocast: Callable[[], AbstractContextManager[Any]] = nullcontext,
    world: World = SINGLE_PROCESS,
) -> UpdateMetrics:
    """One update on a batch of samples; `step` numbers the update (it seeds the batch order).

    With several processes (`world`), each is called with the same samples and builds the same
    plan; it runs its share of each step's micro-batches, and the gradients are summed over
    processes before the step. The token weights are already global per step, so every
    process takes the single-process step (up to float summation order).
    """
    start = time.perf_counter()
    device = next(model.parameters()).device
    params = [p for p in model.parameters() if p.requires_grad]
    tally: dict[str, RoleTally] = defaultdict(RoleTally)
    mismatch = MismatchTally()
    live = _count_samples(samples, tally, config.beta)
    plan = _plan_steps(live, config, pad_id, step, device)
    losses: list[float] = []
    norms: list[float] = []
    skipped, lr = 0, config.lr
    was_training = model.training
    model.train()
    try:
        # The learner's own logprobs before any weight moves: the ratio's denominator over
        # several passes or steps, the TIS weights, and the mismatch against the sampler.
        # With one pass and one step the gradient pass scores them itself (no weight has
        # moved when any micro-batch runs), so only the reference may need a pass up front.
        needs_old = config.num_iterations > 1 or len(plan) > 1
        own = [micro_batches[world.rank :: world.size] for micro_batches in plan]
        if needs_old or reference is not None:
            _score_before_update(model, own, config, needs_old, reference, autocast, mismatch)
        in_pass = None if needs_old else mismatch
        # No micro-batch runs (no samples, or only zero-advantage ones): probe instead.
        if not any(plan) and world.is_main:
            _probe_mismatch(model, samples, config, pad_id, device, autocast, mismatch)
        for _ in range(config.num_iterations):
            for micro_batches in plan:
                lr = _learning_rate(config, optimizer_steps_done + len(norms))
                loss, norm = _optimizer_step(
                    model,
                    optimizer,
                    params,
                    micro_batches,
                    config,
                    tally,
                    lr,
                    autocast,
                    world,
                    in_pass,
                )
                losses.append(loss)
                if norm is None:
                    skipped += 1
                else:
                    norms.append(norm)
    finally:
        model.train(was_training)
    if world.size > 1:
        losses = _sum_over_ranks(losses, tally, world)
    return UpdateMetrics(
        loss=mean(losses),
        grad_norm=mean(norms),
        optimizer_steps=len(norms),
        skipped_steps=skipped,
        lr=lr,
        seconds=time.perf_counter() - start,
        roles={role: role_metrics(t) for role, t in sorted(tally.items())},
        mismatch=mismatch.as_dict(),
    )


def _optimizer_step(
    model: Any,
    optimizer: torch.optim.Optimizer,
    params: list[torch.Tensor],
    micro_batches: list[_MicroBatch],
    config: UpdateConfig,
    tally: dict[str, RoleTally],
    lr: float,
    autocast: Callable[[], AbstractContextManager[Any]],
    world: World,
    mismatch: MismatchTally | None = None,
) -> tuple[float, float | None]:
    """Accumulate the step's micro-batches, clip, step. Returns (loss, grad norm or None).

    The loss is this process's share; `grpo_update` sums it over processes. `mismatch`:
    tally the sampler's logprobs against the gradient pass's (the update's one step)."""
    optimizer.zero_grad(set_to_none=True)
    total_loss, stash = 0.0, None
    by_role = _group_by_role(micro_batches, world)
    for role, group in by_role.items():
        for mb in group:
            total_loss += _backward(model, mb, config, tally[role], autocast, mismatch)
        if config.role_grad_norms:
            _reduce_grads(params, world)  # the role's whole gradient, before measuring it
            tally[role].grad_norms.append(_grad_norm(params))
            if len(by_role) > 1:  # set this role's gradient aside so the next one's is its own
                stash = _move_grads(params, stash)
    if stash is not None:
        _move_grads(params, stash, restore=True)
    if not micro_batches:  # nothing in the whole step had signal: leave the policy as it is
        return total_loss, None
    if not config.role_grad_norms:
        _reduce_grads(params, world)
    if all(p.grad is None for p in params):  # no trainable parameter took part
        return total_loss, None
    norm = float(torch.nn.utils.clip_grad_norm_(params, config.max_grad_norm))
    if not math.isfinite(norm):
        optimizer.zero_grad(set_to_none=True)
        return total_loss, None
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return total_loss, norm


def _backward(
    model: Any,
    mb: _MicroBatch,
    config: UpdateConfig,
    tally: RoleTally,
    autocast: Callable[[], AbstractContextManager[Any]],
    mismatch: MismatchTally | None = None,
) -> float:
    with autocast():
        logps, entropy = completion_logprobs(model, mb.batch, config.temperature_of(mb.role))
    old = logps.detach() if mb.old_logps is None else mb.old_logps
    if mismatch is not None:
        _add_mismatch(mismatch, mb.batch, old)
    terms = clipped_surrogate(
        logps,
        old,
        mb.batch.advantages,
        config.epsilon,
        config.epsilon_high,
        mb.ref_logps,
        config.beta,
    )
    weights = mb.weights
    if config.tis_cap is not None and mb.batch.sampled_logprobs is not None:
        weights = weights * tis_weights(old, mb.batch.sampled_logprobs, config.tis_cap)
    loss = (terms.per_token_loss * weights).sum()
    loss.backward()
    with torch.no_grad():
        mask = mb.batch.completion_mask[:, -mb.batch.completion_width :].float()
        tally.scored_tokens += float(mask.sum())
        tally.loss_sum += float((terms.per_token_loss * mask).sum())
        tally.ratio_sum += float((terms.ratio * mask).sum())
        tally.clipped += float((terms.is_clipped.float() * mask).sum())
        tally.entropy_sum += float((entropy * mask).sum())
        if terms.kl is not None:
            tally.kl_sum += float((terms.kl * mask).sum())
    return float(loss.detach())


def tis_weights(old_logps: torch.Tensor, sampled: torch.Tensor, cap: float) -> torch.Tensor:
    """Truncated importance weights min(pi_learner / pi_sampler, cap) per token (no gradient):
    the off-policy correction for a sampler that is not numerically the learner."""
    return torch.exp(old_logps.detach() - sampled).clamp(max=cap)


@torch.no_grad()
def _score_before_update(
    model: Any,
    plan: list[list[_MicroBatch]],
    config: UpdateConfig,
    old: bool,
    reference: ReferenceLogprobs | None,
    autocast: Callable[[], AbstractContextManager[Any]],
    mismatch: MismatchTally,
) -> None:
    """Old and/or reference log-probabilities of every micro-batch, before any weight moves;
    the old ones are compared with the sampler's."""
    for mb in (mb for micro_batches in plan for mb in micro_batches):
        temperature = config.temperature_of(mb.role)
        with autocast():
            if old:
                mb.old_logps = completion_logprobs(model, mb.batch, temperature)[0]
                _add_mismatch(mismatch, mb.batch, mb.old_logps)
            if reference is not None:
                mb.ref_logps = reference(mb.batch, temperature)


def _add_mismatch(mismatch: MismatchTally, batch: Batch, learner: torch.Tensor) -> None:
    if batch.sampled_logprobs is not None:
        mask = batch.completion_mask[:, -batch.completion_width :]
        mismatch.add(learner, batch.sampled_logprobs, mask)


@torch.no_grad()
def _probe_mismatch(
    model: Any,
    samples: Sequence[TokenizedSample],
    config: UpdateConfig,
    pad_id: int,
    device: torch.device,
    autocast: Callable[[], AbstractContextManager[Any]],
    mismatch: MismatchTally,
) -> None:
    """With no signal to train on, still measure the mismatch, on a few samples (masked ones
    included: the sampler's numerics do not depend on an episode's outcome)."""
    probe = [s for s in samples if s.sampled_logprobs is not None][: config.mismatch_probe]
    for role in sorted({s.role for s in probe}):  # a batch scores at one role's temperature
        of_role = [s for s in probe if s.role == role]
        for first in range(0, len(of_role), config.micro_batch_size):
            batch = collate(of_role[first : first + config.micro_batch_size], pad_id).to(device)
            with autocast():
                logps = completion_logprobs(model, batch, config.temperature_of(role))[0]
            _add_mismatch(mismatch, batch, logps)


def _count_samples(
    samples: Sequence[TokenizedSample], tally: dict[str, RoleTally], beta: float
) -> list[TokenizedSample]:
    for s in samples:
        t = tally[s.role]
        t.masked += s.masked
        if not s.masked:
            t.samples += 1
            t.with_gradient += s.advantage != 0.0 or beta > 0
            t.truncated += s.truncated
            t.tokens += s.trained_tokens
            t.advantage_sum += s.advantage
    return [s for s in samples if not s.masked]


def _plan_steps(
    live: list[TokenizedSample], config: UpdateConfig, pad_id: int, step: int, device: torch.device
) -> list[list[_MicroBatch]]:
    """Split the batch into optimizer steps of role-pure, length-sorted micro-batches."""
    if not live:
        return []
    per_step = config.micro_batch_size * config.grad_accum if config.grad_accum else len(live)
    if per_step < len(live):  # several steps: mix roles and lengths across them, reproducibly
        generator = torch.Generator().manual_seed(config.seed * 1_000_003 + step)
        live = [live[i] for i in torch.randperm(len(live), generator=generator).tolist()]
    plan = []
    for first in range(0, len(live), per_step):
        chunk = live[first : first + per_step]
        step_tokens = sum(s.trained_tokens for s in chunk)
        # A zero-advantage sample has exactly zero gradient without a KL term: it still
        # counts in the normaliser, but is not run.
        run = [s for s in chunk if s.advantage != 0.0 or config.beta > 0]
        run.sort(key=lambda s: (s.role, len(s.prompt_ids) + len(s.completion_ids)))
        micro_batches = []
        for role in sorted({s.role for s in run}):
            of_role = [s for s in run if s.role == role]
            for i in range(0, len(of_role), config.micro_batch_size):
                part = of_role[i : i + config.micro_batch_size]
                batch = collate(part, pad_id)
                weights = batch.completion_mask[:, -batch.completion_width :].float()
                scale = [
                    token_weight(s.trained_tokens, step_tokens, len(chunk), config.loss_type)
                    for s in part
                ]
                weights = weights * torch.tensor(scale).unsqueeze(1)
                micro_batches.append(_MicroBatch(batch.to(device), weights.to(device), role))
        plan.append(micro_batches)
    return plan


def _learning_rate(config: UpdateConfig, optimizer_step: int) -> float:
    if config.warmup_steps and optimizer_step < config.warmup_steps:
        return config.lr * (optimizer_step + 1) / config.warmup_steps
    return config.lr


def _group_by_role(micro_batches: list[_MicroBatch], world: World) -> dict[Role, list[_MicroBatch]]:
    """This process's share of the step's micro-batches by role, keyed by every role of the
    whole step in plan order: all processes then reduce the same roles in the same order."""
    groups: dict[Role, list[_MicroBatch]] = {mb.role: [] for mb in micro_batches}
    for mb in micro_batches[world.rank :: world.size]:
        groups[mb.role].append(mb)
    return groups


def _reduce_grads(params: list[torch.Tensor], world: World) -> None:
    """Sum the gradients over processes; one that ran no micro-batch (of a role) adds zeros.

    So a parameter no forward pass used would get a zero gradient (AdamW would then step it,
    where one process skips it); every trainable parameter of a causal LM takes part."""
    if world.size == 1:
        return
    grads = []
    for p in params:
        if p.grad is None:
            p.grad = torch.zeros_like(p)
        grads.append(p.grad)
    world.all_reduce_sum_(grads)


_SHARED_TALLIES = ("scored_tokens", "loss_sum", "ratio_sum", "clipped", "entropy_sum", "kl_sum")
"""The `RoleTally` fields each process counts for its own micro-batches only."""


def _sum_over_ranks(losses: list[float], tally: dict[str, RoleTally], world: World) -> list[float]:
    """Sum the step losses and the backward tallies over processes, in one collective."""
    keys = [(role, name) for role in sorted(tally) for name in _SHARED_TALLIES]
    total = world.all_reduce_floats([*losses, *(getattr(tally[role], name) for role, name in keys)])
    for (role, name), value in zip(keys, total[len(losses) :], strict=True):
        setattr(tally[role], name, value)
    return total[: len(losses)]


def _grad_norm(params: list[torch.Tensor]) -> float:
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return 0.0
    norms = torch.stack([torch.linalg.vector_norm(g) for g in grads])
    return float(torch.linalg.vector_norm(norms))


def _move_grads(
    params: list[torch.Tensor], stash: list[torch.Tensor | None] | None, restore: bool = False
) -> list[torch.Tensor | None]:
    """Add the live gradients into `stash` and clear them; or, restoring, add `stash` back."""
    stash = stash if stash is not None else [None] * len(params)
    for i, p in enumerate(params):
        held, live = stash[i], p.grad
        total = held if live is None else live if held is None else held.add_(live)
        if restore:
            p.grad = total
        else:
            stash[i], p.grad = total, None
    return stash
