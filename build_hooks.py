"""setuptools build hook: ship the benchmark declarations and frozen suites inside the wheel.

They stay top-level folders of the source tree (`benchmarks/`, `envs_snapshots/`), which
setuptools' package data cannot reach (it only looks inside package folders), so this
`build_py` (named in pyproject.toml's `[tool.setuptools.cmdclass]`) copies them to
`spade/_data/` in the build, where `spade.resources` finds them in an installed wheel. It
also lists them, and itself, as sources so that an sdist carries everything a wheel build
from it needs. Editable installs copy nothing: there the checkout's own folders are read.
"""

from __future__ import annotations

from pathlib import Path

from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
PACKAGE_DATA = Path("spade", "_data")
SHIPPED = {
    # Declarations and the lm-eval task templates they render; not perf/ (scripts).
    "benchmarks": ("*.yaml", "lm_eval_tasks/*.yaml"),
    # Frozen suites: <name>/<version>/manifest.json + envs/*.py.
    "envs_snapshots": ("*/*/manifest.json", "*/*/envs/*.py"),
}


def shipped_files() -> list[Path]:
    """The shipped files, relative to the source tree."""
    found: set[Path] = set()
    for folder, patterns in SHIPPED.items():
        for pattern in patterns:
            found.update(p.relative_to(ROOT) for p in (ROOT / folder).glob(pattern) if p.is_file())
    return sorted(found)


class BuildPyWithData(build_py):
    """`build_py` that also copies `SHIPPED` into `<build_lib>/spade/_data/`."""

    def _data_mapping(self) -> dict[str, str]:
        """Build path → source path of every shipped file."""
        target = Path(self.build_lib) / PACKAGE_DATA
        return {str(target / file): str(ROOT / file) for file in shipped_files()}

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        for target, source in self._data_mapping().items():
            self.mkpath(str(Path(target).parent))
            self.copy_file(source, target)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = super().get_outputs(include_bytecode)
        if self.editable_mode:  # the base class lists get_output_mapping()'s keys then
            return outputs
        return [*outputs, *self._data_mapping()]

    def get_output_mapping(self) -> dict[str, str]:
        return {**super().get_output_mapping(), **self._data_mapping()}

    def get_source_files(self) -> list[str]:
        hook = str(Path(__file__).resolve().relative_to(ROOT))
        return [*super().get_source_files(), hook, *map(str, shipped_files())]
