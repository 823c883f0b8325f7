"""Below both evaluation and training: the generation seam and the one episode player.

`GenRequest` / `Responder` are how anything asks the policy; `PolicyResponder` generates
(behind the `CompletionCache`), `Predictions` replays saved outputs. `play` drives any set of
multi-turn `Driver`s in lockstep; `EnvDriver` is the driver of sandboxed-env episodes, chat
prompted for evaluation or token-in for training.
"""

from spade.rollout.agent_prompt import action_from_reply, first_tool_call, system_prompt
from spade.rollout.cache import CompletionCache, request_key
from spade.rollout.chains import Chains, describe_critical_path
from spade.rollout.env_episode import (
    HISTORY_CHARS,
    EnvDriver,
    Episode,
    EpisodeSpec,
    TokenTurn,
    trim_history,
)
from spade.rollout.player import Driver, Replayer, play
from spade.rollout.replay import Predictions, PredictionsError, read_predictions
from spade.rollout.requests import POLICY, GenRequest, Responder
from spade.rollout.responders import PolicyResponder

__all__ = [
    "HISTORY_CHARS",
    "POLICY",
    "Chains",
    "CompletionCache",
    "Driver",
    "EnvDriver",
    "Episode",
    "EpisodeSpec",
    "GenRequest",
    "PolicyResponder",
    "Predictions",
    "PredictionsError",
    "Replayer",
    "Responder",
    "TokenTurn",
    "action_from_reply",
    "describe_critical_path",
    "first_tool_call",
    "play",
    "read_predictions",
    "request_key",
    "system_prompt",
    "trim_history",
]
