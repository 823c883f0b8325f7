"""The manifest of a frozen suite: typed records, JSON Schema validation, stable writing.

`manifest.schema.json` (shipped beside this module) is the format; the checks here add what a
schema cannot say (unique ids and files, ids in the suite's namespace and major version).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from spade.suites.errors import SuiteError

SCHEMA_VERSION = 1
MANIFEST_FILE = "manifest.json"
ENVS_DIR = "envs"
KINDS = ("game", "reasoning", "tool_use")
SPLITS = ("train", "heldout")
"""An env's `split`: training may play `train` envs; `heldout` ones are only evaluated."""
HAND_WRITTEN = "hand-written"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_MAX_MESSAGE = 200


class ManifestUnreadable(SuiteError):
    """manifest.json is missing, unreadable or not JSON."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.reason = reason


@dataclass(frozen=True)
class ReferenceScores:
    """Returns of reference players on the env's eval seeds (each in [0, 1])."""

    solution_return: float
    random_return: float
    random_success_rate: float
    random_agent: str


@dataclass(frozen=True)
class EnvEntry:
    """One env of a suite, as its manifest records it."""

    id: str
    class_name: str
    file: str
    sha256: str
    normalised_sha256: str
    kind: str
    skill: str
    difficulty: str
    hint: str
    source_document: str
    eval_seeds: list[int]
    max_turns: int | None
    tools: list[str] | None
    validation: dict[str, Any]
    reference_scores: ReferenceScores
    provenance: dict[str, Any] | None = None
    split: str | None = None
    """`train` or `heldout` (SPLITS); None in an unsplit suite, where every env is `train`."""
    difficulty_levels: int | None = None
    """Levels 0..N-1 the env takes at reset (the difficulty contract); None: no knob."""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for optional in ("provenance", "split", "difficulty_levels"):
            if data[optional] is None:
                del data[optional]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EnvEntry:
        fields = dict(data)
        fields["reference_scores"] = ReferenceScores(**data["reference_scores"])
        return cls(**fields)


@dataclass(frozen=True)
class Manifest:
    name: str
    version: str
    created: str
    spade_version: str
    description: str
    license: str
    envs: list[EnvEntry] = field(default_factory=list)
    schema_version: int = SCHEMA_VERSION
    sandbox: dict[str, Any] | None = None
    """The backend the envs were checked in (`spade.sandbox.describe_backend`); None in
    manifests written before it was recorded."""

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"

    def counts_by_kind(self) -> dict[str, int]:
        counts = dict.fromkeys(KINDS, 0)
        for env in self.envs:
            counts[env.kind] = counts.get(env.kind, 0) + 1
        return counts

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["envs"] = [env.to_json() for env in self.envs]
        if self.sandbox is None:
            del data["sandbox"]
        return data

    def dumps(self) -> str:
        # Sorted keys and a fixed indent: the same suite always serialises to the same bytes.
        return json.dumps(self.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        fields = dict(data)
        fields["envs"] = [EnvEntry.from_json(env) for env in data["envs"]]
        return cls(**fields)


def major_version(version: str) -> int:
    return int(version.split(".", 1)[0])


def env_id(suite: str, name: str, major: int) -> str:
    """The gymnasium-style id of an env in a suite: `<suite>/<Name>-v<major>`."""
    return f"{suite}/{name}-v{major}"


def semver_key(version: str) -> tuple[int, int, int, int, str]:
    """Sort key for semantic versions (a pre-release sorts before its release)."""
    core, _, _build = version.partition("+")
    numbers, dash, pre = core.partition("-")
    try:
        major, minor, patch = (int(part) for part in numbers.split("."))
    except ValueError:
        return (-1, -1, -1, 0, version)
    return (major, minor, patch, 0 if dash else 1, pre)


def check_semver(version: str) -> None:
    if not re.match(schema()["properties"]["version"]["pattern"], version):
        raise SuiteError(f"version {version!r} is not a semantic version such as 1.0.0")


def check_name(name: str) -> None:
    if not NAME_PATTERN.match(name):
        raise SuiteError(
            f"suite name {name!r} must be 1–64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )


@functools.cache
def schema() -> dict[str, Any]:
    text = resources.files("spade.suites").joinpath("manifest.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def manifest_errors(data: object) -> list[str]:
    """Every way `data` fails the manifest format, each naming its field path."""
    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    messages = [f"{_field_path(e.absolute_path)}: {_shorten(e.message)}" for e in errors]
    if messages or not isinstance(data, dict):
        return messages
    return _consistency_errors(data)


def _consistency_errors(data: dict[str, Any]) -> list[str]:
    messages: list[str] = []
    major = major_version(data["version"])
    ids: dict[str, int] = {}
    files: dict[str, int] = {}
    split = [env for env in data["envs"] if "split" in env]
    if split and len(split) < len(data["envs"]):  # a forgotten split would count as train
        unsplit = next(i for i, env in enumerate(data["envs"]) if "split" not in env)
        messages.append(f"envs[{unsplit}].split: missing, but other envs of the suite have one")
    for index, env in enumerate(data["envs"]):
        where = f"envs[{index}]"
        namespace, _, rest = env["id"].partition("/")
        if namespace != data["name"]:
            messages.append(f"{where}.id: {env['id']!r} is not in suite namespace {data['name']!r}")
        if not rest.endswith(f"-v{major}"):
            messages.append(f"{where}.id: {env['id']!r} does not end in -v{major} (version)")
        if env["validation"]["class_name"] != env["class_name"]:
            messages.append(f"{where}.validation.class_name: differs from class_name")
        for key, seen in (("id", ids), ("file", files)):
            if env[key] in seen:
                messages.append(f"{where}.{key}: {env[key]!r} repeats envs[{seen[env[key]]}]")
            seen.setdefault(env[key], index)
    return messages


def parse_manifest(data: object, where: str = MANIFEST_FILE) -> Manifest:
    """A `Manifest` from JSON data; raises `SuiteError` naming the first bad field."""
    errors = manifest_errors(data)
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise SuiteError(f"{where}: {errors[0]}{more}")
    assert isinstance(data, dict)
    return Manifest.from_json(data)


def read_manifest_json(suite_dir: Path) -> object:
    """The raw JSON of a suite's manifest; raises `ManifestUnreadable` when there is none."""
    path = suite_dir / MANIFEST_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestUnreadable(path, "missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestUnreadable(path, f"cannot read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ManifestUnreadable(path, f"not valid JSON ({exc.msg} at line {exc.lineno})") from None


def read_manifest(suite_dir: Path) -> Manifest:
    return parse_manifest(read_manifest_json(suite_dir), str(suite_dir / MANIFEST_FILE))


def _field_path(path: Any) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text.lstrip(".") or "(top level)"


def _shorten(message: str) -> str:
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 3] + "..."
