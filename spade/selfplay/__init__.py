"""SPADE self-play: designer prompts, hints, rollouts, regret, rewards, memory, the loop."""
