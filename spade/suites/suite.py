"""A frozen suite loaded for play, evaluation, or as a fixed training pool.

`load_suite("NAME@VERSION" | "suite:NAME@VERSION" | PATH)` checks the manifest against its
schema and every env file against its sha256, then hands out env factories: each `make()`
re-reads and re-hashes its file and starts the env in its own sandboxed worker.

`suite.envs_in("train")` is what training may play, `suite.envs_in("heldout")` what only
evaluation plays; in an unsplit suite (no env has a `split`) every env is `train`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym

from spade.envs.gym import TextEnv
from spade.envs.remote import RemoteEnv
from spade.sandbox import SandboxConfig
from spade.suites.errors import SuiteError
from spade.suites.manifest import SPLITS, EnvEntry, Manifest, read_manifest
from spade.suites.normalise import sha256_hex
from spade.suites.store import resolve_suite


@dataclass(frozen=True)
class SuiteEnv:
    """One env of a frozen suite: its manifest entry and a sandboxed factory."""

    suite_path: Path
    entry: EnvEntry

    @property
    def id(self) -> str:
        return self.entry.id

    @property
    def path(self) -> Path:
        return self.suite_path / self.entry.file

    @property
    def split(self) -> str:
        """`train` or `heldout`; an env of an unsplit suite is `train`."""
        return self.entry.split or "train"

    def source(self) -> str:
        """The env's code, after checking it still has the manifest's sha256."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            raise SuiteError(
                f"{self.path}: missing (listed in the manifest as {self.id})"
            ) from None
        except OSError as exc:
            raise SuiteError(f"{self.path}: cannot read ({exc.strerror or exc})") from None
        digest = sha256_hex(data)
        if digest != self.entry.sha256:
            raise SuiteError(
                f"{self.path}: sha256 mismatch (manifest {self.entry.sha256[:12]}…, "
                f"file {digest[:12]}…): the file was changed after freezing"
            )
        return data.decode("utf-8")

    def remote(self, config: SandboxConfig | None = None) -> RemoteEnv:
        return RemoteEnv(self.source(), Path(self.entry.file).name, config)

    def make(self, config: SandboxConfig | None = None) -> TextEnv:
        """A fresh gymnasium env running this env's code in the sandbox."""
        remote = self.remote(config)
        try:
            return TextEnv(remote)
        except BaseException:
            remote.close()
            raise


@dataclass(frozen=True)
class Suite:
    path: Path
    manifest: Manifest
    envs: list[SuiteEnv]

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def version(self) -> str:
        return self.manifest.version

    @property
    def ref(self) -> str:
        return self.manifest.ref

    def __iter__(self) -> Iterator[SuiteEnv]:
        return iter(self.envs)

    def __len__(self) -> int:
        return len(self.envs)

    def envs_in(self, split: str) -> list[SuiteEnv]:
        """The envs of one split, in manifest order; raises `SuiteError` for an unknown split."""
        if split not in SPLITS:
            raise SuiteError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
        return [env for env in self.envs if env.split == split]

    def env(self, env_id: str) -> SuiteEnv:
        """An env by its id, or by the id's short form `Name-vN` / `Name`."""
        for env in self.envs:
            short = env.id.split("/", 1)[1]
            if env_id in (env.id, short, short.rsplit("-v", 1)[0]):
                return env
        raise SuiteError(f"suite {self.ref} has no env {env_id!r}")

    def factories(self, config: SandboxConfig | None = None) -> dict[str, Callable[[], TextEnv]]:
        """Env id → a no-argument factory of a fresh sandboxed env (the fixed env pool)."""
        return {env.id: functools.partial(env.make, config) for env in self.envs}

    def register(self, config: SandboxConfig | None = None) -> list[str]:
        """Register every env with gymnasium, so `gymnasium.make(env_id)` builds it."""
        for env in self.envs:
            # The sandboxed env enforces its own turn limit; gymnasium's checker would call
            # reset/step with sampled random strings, which is what `check` does already.
            gym.register(id=env.id, entry_point=_factory(env, config), disable_env_checker=True)
        return [env.id for env in self.envs]


def _factory(env: SuiteEnv, config: SandboxConfig | None) -> gym.envs.registration.EnvCreator:
    def make(**_: object) -> TextEnv:
        return env.make(config)

    return make


def load_suite(ref: str | Path, root: str | Path | None = None) -> Suite:
    """The suite `ref` names, with every env file present and matching its sha256."""
    path = resolve_suite(ref, root)
    manifest = read_manifest(path)
    envs = [SuiteEnv(path, entry) for entry in manifest.envs]
    for env in envs:
        env.source()  # fail now, naming the file, rather than mid-evaluation
    return Suite(path, manifest, envs)
