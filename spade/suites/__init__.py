"""Frozen env suites: freeze, verify, publish and load versioned sets of env sources.

A suite lives at `<root>/<name>/<version>/` as `manifest.json` (format:
`manifest.schema.json`) plus `envs/*.py`; its envs have gymnasium-style ids
`<name>/<ClassName>-v<major>`.
"""

from spade.envs.random_agent import RandomAgent
from spade.suites.errors import SuiteError
from spade.suites.freeze import Duplicate, FreezeOptions, FreezeReport, Rejection, freeze_suite
from spade.suites.manifest import (
    KINDS,
    SPLITS,
    EnvEntry,
    Manifest,
    ReferenceScores,
    manifest_errors,
    read_manifest,
)
from spade.suites.normalise import normalised_sha256
from spade.suites.publish import PublishResult, publish_suite
from spade.suites.reference import PlayError, reference_scores, score_source
from spade.suites.seeds import eval_seeds, training_seeds
from spade.suites.store import (
    SHIPPED_ROOT,
    Listing,
    list_suites,
    lookup_roots,
    resolve_suite,
    suites_root,
)
from spade.suites.suite import Suite, SuiteEnv, load_suite
from spade.suites.verify import Problem, VerifyReport, verify_suite

SEED_ENVS_DIR = SHIPPED_ROOT / "spade-seed" / "1.0.0" / "envs"
"""The hand-written seed envs, as frozen in `spade-seed@1.0.0` (a new version of the seed
suite starts from a copy of these files)."""
SEED_SUITE = "spade-seed"

__all__ = [
    "KINDS",
    "SPLITS",
    "SEED_ENVS_DIR",
    "SEED_SUITE",
    "Duplicate",
    "EnvEntry",
    "FreezeOptions",
    "FreezeReport",
    "Listing",
    "Manifest",
    "PlayError",
    "Problem",
    "PublishResult",
    "RandomAgent",
    "ReferenceScores",
    "Rejection",
    "Suite",
    "SuiteEnv",
    "SuiteError",
    "VerifyReport",
    "eval_seeds",
    "freeze_suite",
    "list_suites",
    "load_suite",
    "lookup_roots",
    "manifest_errors",
    "normalised_sha256",
    "publish_suite",
    "read_manifest",
    "reference_scores",
    "resolve_suite",
    "score_source",
    "suites_root",
    "training_seeds",
    "verify_suite",
]
