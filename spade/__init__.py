"""spade: self-play in adaptive synthetic executable environments, evaluation first."""

__version__ = "0.1.0"
