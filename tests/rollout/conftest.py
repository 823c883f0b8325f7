"""The tiny locally built model the RL tests use serves the rollout tests too."""

from tests.rl.conftest import smollm2_tokenizer, tiny_model_dir  # noqa: F401
