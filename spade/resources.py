"""Where the data spade ships beside its code lives: benchmark declarations and frozen suites.

Both are top-level folders of the source tree (`benchmarks/`, `envs_snapshots/`). Running
from a checkout (an editable install) they are read there, so an edit takes effect at once;
a wheel carries copies under `spade/_data/`, put there at build time by `build_hooks.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

ShippedFolder = Literal["benchmarks", "envs_snapshots"]

PACKAGE_DIR = Path(__file__).resolve().parent
CHECKOUT_DIR = PACKAGE_DIR.parent
"""The source tree, when the package is imported from one; in an installed wheel this is
site-packages, which has no `pyproject.toml`."""
PACKAGE_DATA_DIR = PACKAGE_DIR / "_data"


def shipped_dir(name: ShippedFolder) -> Path:
    """The folder `name` as shipped: the checkout's own when running from one, else the copy
    inside the installed package (which may be missing from a broken install: the callers'
    errors then name the path)."""
    checkout = CHECKOUT_DIR / name
    if (CHECKOUT_DIR / "pyproject.toml").is_file() and checkout.is_dir():
        return checkout
    return PACKAGE_DATA_DIR / name
