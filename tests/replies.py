"""Scripted responders for tests: plain functions that answer requests with texts.

A real `Responder` returns `Completion`s; `text_responder` wraps a function returning one list
of texts per request (the scripted agents, users and oracles of the runner tests) so it can
stand in for a model. The completions carry no token ids: only the text is scripted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from spade.models.policy import Completion
from spade.rollout import GenRequest

TextFunction = Callable[[Sequence[GenRequest]], list[list[str]]]


def completion(text: str) -> Completion:
    return Completion(text=text, finish_reason="stop", prompt_tokens=0, completion_tokens=0)


def text_responder(fn: TextFunction) -> Callable[[Sequence[GenRequest]], list[list[Completion]]]:
    def respond(requests: Sequence[GenRequest]) -> list[list[Completion]]:
        return [[completion(text) for text in texts] for texts in fn(requests)]

    return respond
