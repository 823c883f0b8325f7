"""An lm-eval `LM` that answers through spade's `Responder`, keeping prompts as chats.

lm-eval builds each prompt itself (few-shot turns, system description) and hands it to the
model's `apply_chat_template`. Ours returns the messages serialised as JSON instead of a
rendered string; `generate_until` decodes them again. So lm-eval still decides what the
conversation is, while the backend (transformers, vLLM, an HTTP endpoint) applies the
model's real chat template, and the completion cache keys on the messages.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from lm_eval.api.instance import Instance
from lm_eval.api.model import LM

from spade.evals.declarations import DeclarationError
from spade.models.policy import Message, SamplingParams
from spade.rollout import GenRequest, Responder

CHAT_FORMAT = "spade-chat-json"
"""Stands in for a tokenizer name in lm-eval's request-cache keys."""

TaskDoc = tuple[str, int]
"""(lm-eval task name, position of the doc among the selected docs): lm-eval's metadata."""


class ResponderLM(LM):
    """Generation only: one batched responder call for every request lm-eval makes."""

    def __init__(
        self,
        respond: Responder,
        benchmark: str,
        sampling: SamplingParams,
        sample_ids: Mapping[TaskDoc, str],
    ) -> None:
        super().__init__()
        self.respond = respond
        self.benchmark = benchmark
        self.sampling = sampling
        self.sample_ids = sample_ids
        self.raw_outputs: dict[str, str] = {}
        """What the responder returned by SAMPLE_ID, before cutting at stop sequences."""

    # -- chat ------------------------------------------------------------------------------
    @property
    def tokenizer_name(self) -> str:
        return CHAT_FORMAT

    def chat_template(self, chat_template: bool | str = False) -> str:
        return CHAT_FORMAT

    def apply_chat_template(
        self, chat_history: list[dict[str, str]], add_generation_prompt: bool = True
    ) -> str:
        if not add_generation_prompt:
            # lm-eval asks for this only for a task's `gen_prefix` (a prefilled assistant
            # turn), which chat APIs cannot express faithfully.
            raise DeclarationError(
                f"{self.benchmark}: the lm-eval task prefills the answer (gen_prefix); "
                "spade's chat backends cannot continue an assistant turn: choose another task"
            )
        return json.dumps(chat_history, ensure_ascii=False)

    # -- generation --------------------------------------------------------------------------
    def generate_until(self, requests: list[Instance]) -> list[str]:
        gen_requests = [self._request(instance) for instance in requests]
        answers = self.respond(gen_requests)
        if len(answers) != len(gen_requests):
            raise RuntimeError(f"responder gave {len(answers)} answers to {len(gen_requests)}")
        outputs = []
        for request, reply in zip(gen_requests, answers, strict=True):
            raw = reply[0].text if reply else ""
            self.raw_outputs[request.sample_id] = raw
            outputs.append(cut_at_stops(raw, request.sampling.stop))
        return outputs

    def loglikelihood(self, requests: list[Instance]) -> list[tuple[float, bool]]:
        raise NotImplementedError("spade scores lm-eval tasks generatively (generate_until)")

    def loglikelihood_rolling(self, requests: list[Instance]) -> list[float]:
        raise NotImplementedError("spade scores lm-eval tasks generatively (generate_until)")

    def _request(self, instance: Instance) -> GenRequest:
        task_name, position, _ = instance.metadata
        context, gen_kwargs = instance.args[0], instance.args[1]
        until = gen_kwargs.get("until") or []
        stops = [until] if isinstance(until, str) else list(until)
        sampling = replace(self.sampling, stop=merge_stops(stops, self.sampling.stop))
        sample_id = self.sample_ids[(str(task_name), int(position))]
        return GenRequest(self.benchmark, sample_id, decode_chat(context), sampling)


def decode_chat(context: str) -> tuple[Message, ...]:
    """The messages `apply_chat_template` serialised."""
    try:
        messages: Any = json.loads(context)
    except json.JSONDecodeError:
        messages = None
    if not isinstance(messages, list):
        raise DeclarationError(
            "lm-eval built a plain-text prompt: run lm_eval tasks with apply_chat_template"
        )
    return tuple(messages)


def merge_stops(task_stops: Sequence[str], declared: Sequence[str]) -> tuple[str, ...]:
    """lm-eval's `until` first, then the declaration's extra stops; no duplicates or blanks."""
    return tuple(dict.fromkeys(s for s in (*task_stops, *declared) if s))


def cut_at_stops(text: str, stops: Sequence[str]) -> str:
    """Cut the way lm-eval's HF model does (`text.split(stop)[0]` for every stop).

    Backends stop at these strings already, but not all can take them all (OpenAI-style APIs
    accept four), and saved predictions may run past them, so the cut is re-applied here.
    """
    for stop in stops:
        text = text.split(stop)[0]
    return text
