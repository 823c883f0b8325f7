"""Turn a checkpoint string (the `spade-eval --checkpoint` forms) into a Policy."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, TypeVar

from spade.models.builtin import BUILTIN_MODELS, builtin_model_dir
from spade.models.policy import Policy, PolicyError

_C = TypeVar("_C")


class ModelSpecError(ValueError):
    """A checkpoint string names nothing loadable; the message says what would be valid."""


def valid_forms() -> str:
    aliases = ", ".join(sorted(BUILTIN_MODELS))
    return (
        f"a local HF model dir (with config.json), a built-in alias ({aliases}), "
        "vllm:PATH, or openai:MODEL@BASE_URL"
    )


def load_policy(
    spec: str,
    serve: bool = False,
    log_dir: str | Path | None = None,
    defer_start: bool = False,
    **options: Any,
) -> Policy:
    """The policy a checkpoint string names; `options` go to that backend's config.

    - `openai:MODEL@BASE_URL`: OpenAIPolicy (options: OpenAIConfig fields);
    - `vllm:PATH` (PATH a model dir or a built-in alias): VLLMPolicy (VLLMConfig fields);
    - a model dir or a built-in alias: TransformersPolicy (TransformersConfig fields).

    `serve`: a model dir, an alias or `vllm:PATH` is served by a `vllm serve` that this
    process starts and owns (VLLMConfig fields; its log goes to `log_dir`), and the policy
    talks to it over HTTP; the server stops when this process exits.

    `batch_size` is taken by every backend: the transformers batch, vLLM's max_num_seqs, and
    for an HTTP server the requests in flight (`concurrency`, unless that is given too).

    `defer_start`: an in-process vLLM engine starts at its first generation, not here
    (`VLLMPolicy`), so a run answered from the completion cache starts none.
    """
    if spec.startswith("openai:"):
        from spade.models.openai_backend import OpenAIConfig, OpenAIPolicy

        model, _, base_url = spec.removeprefix("openai:").partition("@")
        if not model or not base_url.startswith(("http://", "https://")):
            raise ModelSpecError(
                f"checkpoint {spec!r}: expected openai:MODEL@BASE_URL, "
                "e.g. openai:Qwen/Qwen3-8B@http://localhost:8000/v1"
            )
        if serve:
            raise ModelSpecError(f"checkpoint {spec!r} is served already: drop --serve")
        if "batch_size" in options:
            options.setdefault("concurrency", options.pop("batch_size"))
        return OpenAIPolicy(model, base_url, _config(OpenAIConfig, options, spec))
    if spec.startswith("vllm:") or serve:
        return _load_vllm(spec, serve, log_dir, options, defer_start)

    from spade.models.transformers_backend import TransformersConfig, TransformersPolicy

    config = _config(TransformersConfig, options, spec)
    path = _model_dir(spec, spec)
    return TransformersPolicy.from_pretrained(path, config, name=_name(spec, path))


def _load_vllm(
    spec: str,
    serve: bool,
    log_dir: str | Path | None,
    options: dict[str, Any],
    defer_start: bool = False,
) -> Policy:
    from spade.models.vllm_backend import VLLMConfig, VLLMPolicy, require_vllm_installed
    from spade.models.vllm_server import ServeConfig, VLLMServer

    target = spec.removeprefix("vllm:")
    vllm_config = _config(VLLMConfig, options, spec)
    if target not in BUILTIN_MODELS:
        _model_dir(target, spec)  # a bad path is reported before a missing vllm,
    require_vllm_installed()  # and a missing vllm before an alias's first-time download
    path = _model_dir(target, spec)
    try:
        if not serve:
            return VLLMPolicy(path, vllm_config, _name(target, path), defer_start)
        concurrency = vllm_config.batch_size or ServeConfig.concurrency
        config = ServeConfig(engine=vllm_config, concurrency=concurrency)
        return VLLMServer(path, config, log_dir, _name(target, path)).start().policy()
    except PolicyError as exc:
        raise ModelSpecError(f"checkpoint {spec!r}: {exc}") from None


def local_model_dir(spec: str) -> Path | None:
    """The local model dir a checkpoint string loads (an alias fetched and converted on first
    use), or None for a remote one (`openai:`); a bad path raises ModelSpecError."""
    if spec.startswith("openai:"):
        return None
    target = spec.removeprefix("vllm:")
    return _model_dir(target, spec)


def _name(target: str, path: Path) -> str:
    # An alias is reported as itself: its cache path differs from machine to machine.
    return target if target in BUILTIN_MODELS else str(path)


def _model_dir(target: str, spec: str) -> Path:
    if target in BUILTIN_MODELS:
        return builtin_model_dir(target)
    path = Path(target).expanduser()
    if not target or not path.exists():
        raise ModelSpecError(
            f"checkpoint {spec!r} is not an existing model dir or a known alias; "
            f"expected {valid_forms()}"
        )
    if not (path / "config.json").is_file():
        raise ModelSpecError(
            f"checkpoint {spec!r}: {path} has no config.json, so it is not a Hugging Face "
            f"model dir; expected {valid_forms()}"
        )
    return path


def _config(config_type: type[_C], options: dict[str, Any], spec: str) -> _C:
    known = {f.name for f in dataclasses.fields(config_type)}  # type: ignore[arg-type]
    unknown = sorted(set(options) - known)
    if unknown:
        raise ModelSpecError(
            f"checkpoint {spec!r}: unknown option(s) {', '.join(unknown)} for "
            f"{config_type.__name__}; valid: {', '.join(sorted(known))}"
        )
    return config_type(**options)
