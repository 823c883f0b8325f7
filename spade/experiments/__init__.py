"""Experiments as a protocol: a pre-registered plan, resumable units, committed artifacts and
a generated verdict (`spade-experiment`)."""

from spade.experiments.plan import Plan, PlanError, load_plan
from spade.experiments.records import Experiment
from spade.experiments.runner import ExperimentError, Runner
from spade.experiments.units import Unit, units

__all__ = [
    "Experiment",
    "ExperimentError",
    "Plan",
    "PlanError",
    "Runner",
    "Unit",
    "load_plan",
    "units",
]
