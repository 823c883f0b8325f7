"""Pieces that adapt transformers' `generate` to SamplingParams, and read its output back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from transformers import LogitsProcessor, StoppingCriteria

from spade.models.policy import Completion, FinishReason, SamplingParams, cut_at_stop


class TokenPicker(LogitsProcessor):
    """Chooses every next token itself (greedy, or sampled) and records its log-probability.

    Why not `do_sample=True`: transformers samples from the global torch RNG, so a seeded
    call would disturb, and be disturbed by, everything else using it (threads included).
    Here a per-call `torch.Generator` draws the token; `generate` runs greedy, and this
    processor, last in the list, leaves only the chosen token finite. Recording the
    log-probability here also avoids keeping every step's full-vocabulary logits.
    """

    def __init__(self, sampling: SamplingParams, generator: torch.Generator | None) -> None:
        self.sampling = sampling
        self.generator = generator
        self.picked: list[torch.Tensor] = []
        self.logprobs: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        logits = scores.float()
        if self.sampling.greedy:
            token = logits.argmax(dim=-1)
        else:
            logits = logits / self.sampling.temperature
            probs = _top_p(torch.softmax(logits, dim=-1), self.sampling.top_p)
            token = torch.multinomial(probs, 1, generator=self.generator).squeeze(1)
        self.picked.append(token)
        if self.sampling.logprobs:
            logp = torch.log_softmax(logits, dim=-1).gather(1, token[:, None]).squeeze(1)
            self.logprobs.append(logp)
        only_pick = torch.full_like(scores, float("-inf"))
        return only_pick.scatter_(1, token[:, None], 0.0)  # type: ignore[return-value]


def _top_p(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    """Zero all but the smallest set of most likely tokens whose mass reaches top_p."""
    if top_p >= 1.0:
        return probs
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs
    sorted_probs = sorted_probs.masked_fill(mass_before >= top_p, 0.0)  # keeps the top token
    return torch.zeros_like(probs).scatter_(-1, order, sorted_probs)


class StopOnStrings(StoppingCriteria):
    """Ends a row once its generated text contains a stop string; notes at which step.

    Only the generated part is looked at (transformers' StopStringCriteria also matches
    across the prompt boundary), and only its tail: an earlier match would have ended the
    row at an earlier step.
    """

    def __init__(self, tokenizer: Any, stop: tuple[str, ...], prompt_len: int, rows: int) -> None:
        self.tokenizer = tokenizer
        self.stop = stop
        self.prompt_len = prompt_len
        # A token decodes to at least one byte, a character to at most four.
        self.window = 4 * max(len(s) for s in stop) + 4
        self.hit_at: list[int | None] = [None] * rows

    def __call__(
        self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs: Any
    ) -> torch.BoolTensor:
        generated = input_ids[:, self.prompt_len :]
        tails = self.tokenizer.batch_decode(
            generated[:, -self.window :].tolist(), skip_special_tokens=True
        )
        done = [any(s in tail for s in self.stop) for tail in tails]
        for row, hit in enumerate(done):
            if hit and self.hit_at[row] is None:
                self.hit_at[row] = generated.shape[1]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)  # type: ignore[return-value]


@dataclass
class BatchDecode:
    """Everything needed to turn one `generate` output back into Completions."""

    tokenizer: Any
    sampling: SamplingParams
    eos_ids: set[int]
    prompts: list[list[int]]
    picker: TokenPicker
    stopper: StopOnStrings | None

    def completions(self, generated: torch.Tensor) -> list[Completion]:
        """`generated`: [rows, steps] token ids after the (padded) prompt."""
        rows = generated.tolist()
        picked: list[list[int]] = []
        logprobs: list[list[float]] = []
        if self.sampling.logprobs and self.picker.picked:
            picked = torch.stack(self.picker.picked, dim=1).tolist()
            logprobs = torch.stack(self.picker.logprobs, dim=1).tolist()
        return [self._one(i, ids, picked, logprobs) for i, ids in enumerate(rows)]

    def _one(
        self, row: int, ids: list[int], picked: list[list[int]], logprobs: list[list[float]]
    ) -> Completion:
        # A finished row is padded on while others run (and pad may be eos), so the row's
        # length is where it really ended: its first end-of-turn token or its stop-string hit.
        n = next((i + 1 for i, t in enumerate(ids) if t in self.eos_ids), len(ids))
        stop_hit = self.stopper.hit_at[row] if self.stopper else None
        if stop_hit is not None:
            n = min(n, stop_hit)
        ids = ids[:n]
        ended = bool(ids) and ids[-1] in self.eos_ids
        body = ids[:-1] if ended else ids
        text, found = cut_at_stop(
            self.tokenizer.decode(body, skip_special_tokens=True), self.sampling.stop
        )
        finish: FinishReason = "stop" if ended or found or stop_hit is not None else "length"
        completion = Completion(
            text=text,
            finish_reason=finish,
            prompt_tokens=len(self.prompts[row]),
            completion_tokens=n,
            token_ids=ids,
            prompt_token_ids=list(self.prompts[row]),
        )
        if self.sampling.logprobs:
            if picked[row][:n] != ids:  # the output must be the tokens this picker chose
                raise RuntimeError("generate() changed the picked tokens; logprobs would not match")
            completion.logprobs = logprobs[row][:n]
        return completion
