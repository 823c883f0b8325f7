"""The warm start: teach the small model the env contract and the action formats (SFT)."""
