"""Data-parallel updates on the tiny model, run by `test_distributed.py` under
`torchrun --nproc_per_node 2` (gloo on CPU).

usage: _distributed_update.py MODEL_DIR OUT_DIR

Every rank writes its trainable weights after each learner; rank 0 also writes the update
metrics and a checkpoint that a third learner then loads on every rank. First, each rank
writes what `World`'s collectives made of rank-dependent tensors.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from safetensors.torch import save_file

from spade.rl import Learner, UpdateConfig, distributed
from tests.rl.token_samples import sample

PROMPT_A = [{"role": "user", "content": "Open the door."}]
PROMPT_B = [{"role": "user", "content": "Write an environment about mazes."}]
SAMPLES = [
    sample(PROMPT_A, "\\boxed{open door}", 1.0, "agent"),
    sample(PROMPT_B, "class MazeEnv: pass", -1.0, "designer"),
    sample(PROMPT_A, "\\boxed{wait}", -0.5, "agent"),
    sample(PROMPT_B, "class RoomEnv:\n    pass", 0.7, "designer"),
    sample(PROMPT_A, "\\boxed{look around the room}", 0.3, "agent"),
    sample(PROMPT_A, "\\boxed{go north}", 0.0, "agent"),  # normaliser only, not run
    sample(PROMPT_B, "import random\nclass Cave: pass", 0.4, "designer"),
]
UPDATES = [SAMPLES, SAMPLES[2:]]
"""Two updates: 6 and 4 micro-batches that run (micro_batch_size 1), so ranks get unequal
shares, and a step of `grad_accum=3` may leave rank 1 with nothing of a role, or nothing."""
CONFIGS = {
    # Several shuffled steps; each role's gradient reduced on its own for its norm.
    "steps": UpdateConfig(lr=1e-3, micro_batch_size=1, grad_accum=3),
    # One step per pass, two passes (old log-probs), KL to the reference, one reduction.
    "one_step": UpdateConfig(
        lr=1e-3, micro_batch_size=1, num_iterations=2, beta=0.1, role_grad_norms=False
    ),
}


def trainable(learner: Learner) -> dict[str, torch.Tensor]:
    return {
        name: p.detach().clone().contiguous()
        for name, p in learner.model.named_parameters()
        if p.requires_grad
    }


def collectives(out: Path) -> None:
    """Sums and a broadcast through buckets of at most 8 elements: one of two tensors (one not
    contiguous), one cut off by size, one by dtype."""
    world = distributed.join_world()
    value = float(world.rank + 1)
    summed = {
        "a": torch.full((3,), value),
        "b": torch.full((2, 2), value).t(),
        "c": torch.arange(5.0) * value,
        "d": torch.full((2, 3), value, dtype=torch.bfloat16),
    }
    layer = torch.nn.Linear(2, 2).to(torch.bfloat16)  # weight and bias: one bucket
    with torch.no_grad():
        layer.weight.fill_(value)
        layer.bias.fill_(value)
    default, distributed._BUCKET_ELEMENTS = distributed._BUCKET_ELEMENTS, 8
    world.all_reduce_sum_(list(summed.values()))
    world.broadcast_parameters(layer)
    distributed._BUCKET_ELEMENTS = default
    floats = world.all_reduce_floats([value, 0.5])
    broadcast = torch.cat([layer.weight.detach().flatten(), layer.bias.detach()])
    result = {**summed, "broadcast": broadcast, "floats": torch.tensor(floats)}
    save_file(
        {k: v.contiguous() for k, v in result.items()},
        str(out / f"world-rank{world.rank}.safetensors"),
    )


def main(model_dir: Path, out: Path) -> None:
    collectives(out)
    for name, config in CONFIGS.items():
        learner = Learner(model_dir, config)
        assert learner.world.size == 2
        if learner.world.is_main:
            metrics = [learner.update(batch).as_dict() for batch in UPDATES]
            (out / f"{name}.json").write_text(json.dumps(metrics))
            learner.save_checkpoint(out / f"{name}-checkpoints")
            learner.close()
        else:
            learner.follow()  # returns once the driver closes
        save_file(trainable(learner), str(out / f"{name}-rank{learner.world.rank}.safetensors"))

    resumed = Learner(model_dir, CONFIGS["steps"])
    if resumed.world.is_main:
        resumed.load_checkpoint(out / "steps-checkpoints")
        resumed.close()
    else:
        resumed.follow()
        try:
            resumed.save_checkpoint(out / "follower-checkpoints")
        except RuntimeError as exc:
            (out / "follower-save.txt").write_text(str(exc))
    save_file(trainable(resumed), str(out / f"resumed-rank{resumed.world.rank}.safetensors"))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
