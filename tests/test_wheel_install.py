"""spade as an installed wheel: built from this checkout, installed into a fresh venv, run from
an unrelated folder, with nothing of the checkout in sight.

The build goes sdist → wheel from a copy of the checkout, as `python -m build` does (without
build isolation: no network), so the sdist is proven to carry what the wheel needs. The
fresh venv gets only the wheel (`--no-deps`); its dependencies come from this interpreter's
site-packages through a `.pth` line, which puts that folder on sys.path without running the
`.pth` files inside it, so the editable install's finder (mapping `spade` to the checkout)
never loads. Every run asserts that the `spade` it imports is the wheel's.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from spade.suites import SEED_SUITE, verify_suite
from tests.data import DATA_DIR

REPO = Path(__file__).resolve().parents[1]
SEED = f"{SEED_SUITE}@1.0.0"
SEED_DIR = REPO / "envs_snapshots" / SEED_SUITE / "1.0.0"
# What .gitignore keeps out of the checkout; the copy leaves it out too.
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", ".tox", "build", "dist", "*.egg-info", "__pycache__", ".*_cache",
    "runs", "results", ".ci-results",
)  # fmt: skip
TIMEOUT_S = 300


@dataclass(frozen=True)
class Install:
    wheel: Path
    python: Path
    bin: Path
    site_packages: Path
    elsewhere: Path
    """An empty folder outside the checkout, the working directory of every command."""

    def run(self, *argv: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in LEAKS}
        return subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                              cwd=cwd or self.elsewhere, env=env, timeout=TIMEOUT_S)  # fmt: skip


# Variables that would let the checkout, or another suites root, in.
LEAKS = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "SPADE_SUITES_ROOT"}


def checked(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args}: exit {done.returncode}\n{done.stderr[-3000:]}"
    return done.stdout


def build_wheel(tmp: Path) -> Path:
    source = tmp / "checkout"
    shutil.copytree(REPO, source, ignore=NOT_SOURCES)
    build_sdist = (
        "import sys; from setuptools import build_meta; build_meta.build_sdist(sys.argv[1])"
    )
    checked(subprocess.run([sys.executable, "-c", build_sdist, str(tmp / "sdist")], cwd=source,
                           capture_output=True, text=True, timeout=TIMEOUT_S))  # fmt: skip
    (sdist,) = (tmp / "sdist").glob("spade-*.tar.gz")
    wheel_cmd = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                 "--no-index", "-w", str(tmp / "wheel"), str(sdist)]  # fmt: skip
    checked(subprocess.run(wheel_cmd, capture_output=True, text=True, timeout=TIMEOUT_S))
    (wheel,) = (tmp / "wheel").glob("spade-*.whl")
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Install:
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(tmp)
    venv = tmp / "venv"
    checked(subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)],
                           capture_output=True, text=True, timeout=TIMEOUT_S))  # fmt: skip
    python = venv / "bin" / "python"
    where = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site_packages = Path(checked(subprocess.run([python, "-c", where], capture_output=True,
                                                text=True, timeout=TIMEOUT_S)).strip())  # fmt: skip
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
               "--no-deps", "--no-index", str(wheel)]  # fmt: skip
    checked(subprocess.run(install, capture_output=True, text=True, timeout=TIMEOUT_S))
    # Only now: pip, seeing the editable install's metadata, would try to replace it.
    ours = dict.fromkeys(sysconfig.get_path(key) for key in ("purelib", "platlib"))
    (site_packages / "spade_test_dependencies.pth").write_text("\n".join(ours) + "\n")
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    return Install(wheel, python, venv / "bin", site_packages, elsewhere)


def test_the_wheel_carries_the_declarations_and_suites_but_not_the_perf_scripts(
    installed: Install,
) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    shipped = {n.removeprefix("spade/_data/") for n in names if n.startswith("spade/_data/")}
    declarations = {p.relative_to(REPO).as_posix() for p in REPO.glob("benchmarks/**/*.yaml")}
    manifest = json.loads((SEED_DIR / "manifest.json").read_text())
    seed = {f"envs_snapshots/{SEED_SUITE}/1.0.0/{e['file']}" for e in manifest["envs"]}
    assert declarations >= {"benchmarks/gsm8k.yaml", "benchmarks/lm_eval_tasks/gsm8k.yaml"}
    assert declarations | seed | {f"envs_snapshots/{SEED_SUITE}/1.0.0/manifest.json"} <= shipped
    assert not [n for n in shipped if "perf/" in n or n.endswith(".pyc")]
    assert "build_hooks.py" not in names  # the build hook is not part of the package


def test_the_installed_spade_is_the_wheels_and_reads_its_own_copy(installed: Install) -> None:
    probe = (
        "import json, spade; from spade.evals.declarations import BENCHMARKS_DIR; "
        "from spade.suites import SHIPPED_ROOT; "
        "print(json.dumps([spade.__file__, str(BENCHMARKS_DIR), str(SHIPPED_ROOT)]))"
    )
    module, benchmarks, suites = json.loads(checked(installed.run(installed.python, "-c", probe)))
    package = installed.site_packages / "spade"
    assert Path(module) == package / "__init__.py"
    assert Path(benchmarks) == package / "_data" / "benchmarks"
    assert Path(suites) == package / "_data" / "envs_snapshots"


def test_spade_suite_lists_and_verifies_the_seed_suite_from_another_folder(
    installed: Install,
) -> None:
    listed = json.loads(checked(installed.run(installed.bin / "spade-suite", "list", "--json")))
    assert [(r["suite"], r["version"], r["envs"]) for r in listed] == [
        (SEED_SUITE, "1.0.0", 34),
        (SEED_SUITE, "1.1.0", 34),
        (SEED_SUITE, "1.2.0", 34),
    ]
    # An explicit root is the only place looked in.
    empty = installed.elsewhere / "empty"
    out = checked(installed.run(installed.bin / "spade-suite", "list", "--root", empty))
    assert out.strip() == f"no suites under {empty}"
    # pip byte-compiles the shipped env files on install; verify still passes (bytecode is
    # not part of a suite), and that with the sandbox re-check of all 34 envs.
    assert list(installed.site_packages.glob("spade/_data/envs_snapshots/*/*/envs/__pycache__"))
    out = checked(installed.run(installed.bin / "spade-suite", "verify", SEED))
    assert f"OK {SEED}: 34 envs pass hashes, schema and sandbox re-check" in out


def test_freeze_writes_under_the_working_directory_never_the_package(installed: Install) -> None:
    cwd = installed.elsewhere / "work"
    cwd.mkdir()
    source = SEED_DIR / "envs" / "hidden_number.py"
    freeze: list[str | Path] = ["freeze", source, "--name", SEED_SUITE, "--version", "9.0.0",
                                "--eval-seeds", "2"]  # fmt: skip
    checked(installed.run(installed.bin / "spade-suite", *freeze, "--json", cwd=cwd))
    assert (cwd / "envs_snapshots" / SEED_SUITE / "9.0.0" / "manifest.json").is_file()
    assert not (installed.site_packages / "spade" / "_data" / "envs_snapshots" / SEED_SUITE
                / "9.0.0").exists()  # fmt: skip
    # Without --root a version resolves under ./envs_snapshots first, then the shipped suites,
    # so the new version does not hide the shipped one.
    listing = installed.run(installed.bin / "spade-suite", "list", "--json", cwd=cwd)
    listed = [(r["suite"], r["version"], r["envs"]) for r in json.loads(checked(listing))]
    assert listed == [
        (SEED_SUITE, "1.0.0", 34),
        (SEED_SUITE, "1.1.0", 34),
        (SEED_SUITE, "1.2.0", 34),
        (SEED_SUITE, "9.0.0", 1),
    ]
    for version, folder in (("1.0.0", installed.site_packages / "spade" / "_data"), ("9.0.0", cwd)):
        show = installed.run(installed.bin / "spade-suite", "show", f"{SEED_SUITE}@{version}",
                             "--json", cwd=cwd)  # fmt: skip
        shown = cwd / json.loads(checked(show))["path"]  # relative where the root is
        assert (folder / "envs_snapshots" / SEED_SUITE / version).samefile(shown)


@pytest.mark.skipif(not DATA_DIR.is_dir(), reason=f"offline benchmark data not found at {DATA_DIR}")
def test_spade_eval_scores_predictions_from_another_folder(installed: Install) -> None:
    # The seed suite's own solution for one episode, computed by the installed package.
    solve = (
        "import json, sys; from spade.suites import load_suite; "
        "env = load_suite(sys.argv[1]).envs[0]; seed = env.entry.eval_seeds[0]; "
        "game = env.remote(); game.reset(seed); "
        "print(json.dumps([f'{env.id}/{seed}', game.solution()])); game.close()"
    )
    episode, solution = json.loads(checked(installed.run(installed.python, "-c", solve, SEED)))
    with gzip.open(DATA_DIR / "humaneval" / "HumanEval.jsonl.gz", "rt") as handle:
        problem = json.loads(handle.readline())
    lines = [
        {"benchmark": "gsm8k", "id": "0", "output": "9 eggs are sold. The final answer is 18"},
        {"benchmark": "gsm8k", "id": "1", "output": "The final answer is 7"},
        {"benchmark": "humaneval", "id": problem["task_id"],
         "output": f"```python\n{problem['prompt']}{problem['canonical_solution']}```"},
        {"benchmark": "humaneval", "id": "HumanEval/1",
         "output": "```python\ndef separate_paren_groups(paren_string):\n    return []\n```"},
        {"benchmark": f"suite:{SEED}", "id": episode, "output": solution},
    ]  # fmt: skip
    predictions = installed.elsewhere / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    checked(installed.run(installed.bin / "spade-eval", "--predictions", predictions.name,
                          "--data-dir", DATA_DIR, "--output", "out"))  # fmt: skip
    results = json.loads((installed.elsewhere / "out" / "results.json").read_text())["benchmarks"]
    scores = {name: (r["n"], r["metrics"][r["primary"]]["value"]) for name, r in results.items()}
    assert scores == {"gsm8k": (2, 0.5), "humaneval": (2, 0.5), f"suite:{SEED}": (1, 1.0)}


def test_verify_ignores_bytecode_caches_but_not_other_unlisted_files(tmp_path: Path) -> None:
    suite = tmp_path / SEED_SUITE / "1.0.0"
    shutil.copytree(SEED_DIR, suite, ignore=shutil.ignore_patterns("__pycache__"))
    (suite / "envs" / "__pycache__").mkdir()
    (suite / "envs" / "__pycache__" / "battleship.cpython-311.pyc").write_bytes(b"\x00")
    assert verify_suite(suite, recheck=False).ok
    (suite / "envs" / "extra.py").write_text("")
    problems = verify_suite(suite, recheck=False).problems
    assert [(p.file, p.message) for p in problems] == [
        ("envs/extra.py", "not listed in the manifest")
    ]
