"""Benchmark declarations: versioned YAML files under `benchmarks/`.

A declaration says where the data comes from (and its sha256), how the model is prompted,
with which generation settings, how outputs are scored, and which metric is primary.
Changing a prompt or a scorer means bumping `version`; every result carries it.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from spade.models.policy import SamplingParams
from spade.resources import shipped_dir

_Options = TypeVar("_Options", bound=BaseModel)
BENCHMARKS_DIR = shipped_dir("benchmarks")
RunnerName = Literal[
    "lm_eval", "code", "bfcl", "acebench", "games", "reasoning_gym", "suite", "ladder"
]


class DeclarationError(ValueError):
    """A benchmark declaration is missing or malformed."""


class DataFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="path relative to --data-dir")
    sha256: str = Field(description="expected content hash; a mismatch is an error")


class HubSource(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Hugging Face dataset id, used when no --data-dir is given")
    name: str | None = None
    split: str = "test"


class Generation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_gen_toks: int = Field(1024, ge=1, description="always explicit; never lm-eval's 256")
    temperature: float = Field(0.0, ge=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    stop: list[str] = Field(default_factory=list)
    n: int = Field(1, ge=1)

    def sampling(self, seed: int = 0) -> SamplingParams:
        """The one sampling-settings type (`n` is the request's: see `GenRequest.n`)."""
        return SamplingParams(
            max_new_tokens=self.max_gen_toks,
            temperature=self.temperature,
            top_p=self.top_p,
            stop=tuple(self.stop),
            seed=seed,
        )


class Slices(BaseModel):
    """How many samples each preset takes: a fixed, seeded subset of the test split."""

    model_config = ConfigDict(extra="forbid")

    ci: int | None = 10
    quick: int | None = 50
    full: int | None = None
    seed: int = 1234
    stratify: bool = Field(False, description="spread slices evenly over id groups")


class Declaration(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    version: str = Field(pattern=r"^\d+\.\d+\.\d+$")
    description: str
    runner: RunnerName
    data: list[DataFile] = Field(default_factory=list)
    hub: HubSource | None = None
    generation: Generation = Field(default_factory=Generation)
    scorer: str = Field(description="how outputs are scored, in words (and the runner's key)")
    primary: str = Field(description="the primary metric's name")
    slices: Slices = Field(default_factory=Slices)
    options: dict[str, Any] = Field(default_factory=dict, description="runner-specific settings")
    source_file: str = ""

    def typed_options(self, model: type[_Options]) -> _Options:
        """`options` validated as a runner's own pydantic model; a bad field is a one-line
        `DeclarationError` naming the declaration file and the field."""
        try:
            return model.model_validate(self.options)
        except ValidationError as exc:
            field, message = first_error(exc)
            where = self.source_file or self.name
            raise DeclarationError(f"{where}: options.{field}: {message}") from None

    def data_hashes(self) -> dict[str, str]:
        return {d.path: d.sha256 for d in self.data}

    def verify_data(self, data_dir: Path) -> None:
        """Raise `DeclarationError` naming the first missing or altered data file."""
        for item in self.data:
            path = data_dir / item.path
            if not path.is_file():
                raise DeclarationError(f"{self.name}: data file {path} is missing")
            digest = file_sha256(path)
            if digest != item.sha256:
                raise DeclarationError(
                    f"{self.name}: {path} has sha256 {digest[:12]}…, expected {item.sha256[:12]}…"
                )


@cache
def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_declaration(path: Path) -> Declaration:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        declaration = Declaration.model_validate({**raw, "source_file": str(path)})
    except OSError as exc:
        raise DeclarationError(f"{path}: cannot read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise DeclarationError(f"{path}: not valid YAML ({exc})") from None
    except ValidationError as exc:
        field, message = first_error(exc)
        raise DeclarationError(f"{path}: {field}: {message}") from None
    return declaration


def first_error(exc: ValidationError) -> tuple[str, str]:
    """(dotted field path, message) of a validation error's first problem: one line's worth."""
    first = exc.errors()[0]
    return ".".join(str(p) for p in first["loc"]), first["msg"]


def declarations(directory: Path = BENCHMARKS_DIR) -> dict[str, Declaration]:
    """Every declaration under `directory`, by benchmark name."""
    if not directory.is_dir():
        raise DeclarationError(f"{directory}: no benchmark declarations here (reinstall spade)")
    found: dict[str, Declaration] = {}
    for path in sorted(directory.glob("*.yaml")):
        if path.name == "presets.yaml":  # which benchmarks each preset runs, not a benchmark
            continue
        declaration = load_declaration(path)
        if declaration.name in found:
            raise DeclarationError(f"{path}: benchmark {declaration.name!r} declared twice")
        found[declaration.name] = declaration
    return found
