"""Many machines, on Ray: sharded evaluation and env workers on remote nodes.

Ray places the workers, moves the data and restarts what dies; spade adds no scheduler.

- `Cluster` joins a Ray cluster (or starts a local one) and refuses, in one line, an address
  it cannot reach or workers the cluster has no CPUs or GPUs for.
- `run_sharded` splits named tasks' ids into shards over N workers, each with its own state
  (for evaluation: a policy backend behind the completion cache, the sandbox next to it), and
  merges each task's results in id order; a shard whose worker dies is retried once.
- `EnvHosts` puts sandboxed env workers on Ray actors; its `open` is an env factory whose
  `RayEnv`s have `RemoteEnv`'s interface, so episodes play as they do locally.

Below evaluation and training (beside `spade.rollout`): what a shard does is passed in by the
caller, so neither `spade.evals` nor `spade.selfplay` is imported here. Importing this package
does not import Ray (an optional extra: `pip install 'spade[ray]'`); `Cluster` does.
"""

from spade.distributed.cluster import AUTO, LOCAL, Cluster, Resources
from spade.distributed.env_hosts import EnvHost, EnvHosts, RayEnv
from spade.distributed.errors import ClusterError, EnvHostLost, ShardFailed
from spade.distributed.remote_errors import PackedError, RemoteTraceback, pack_error
from spade.distributed.shards import Shard, ShardedRun, ShardWorker, Workers, run_sharded, split_ids

__all__ = [
    "AUTO",
    "LOCAL",
    "Cluster",
    "ClusterError",
    "EnvHost",
    "EnvHostLost",
    "EnvHosts",
    "PackedError",
    "RayEnv",
    "RemoteTraceback",
    "Resources",
    "Shard",
    "ShardFailed",
    "ShardWorker",
    "ShardedRun",
    "Workers",
    "pack_error",
    "run_sharded",
    "split_ids",
]
