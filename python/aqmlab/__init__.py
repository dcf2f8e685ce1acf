"""aqmlab: a fast, validated lab for router queue management.

Run a scenario with :func:`run`; check one with :func:`validate`. Analytic models live in
:mod:`aqmlab.models`.
"""

from ._native import version as _version
from .api import Result, default_scenario_path, run, validate
from .exceptions import AqmlabError, ScenarioError, SimulationError

__version__ = _version()
__all__ = [
    "AqmlabError",
    "Result",
    "ScenarioError",
    "SimulationError",
    "default_scenario_path",
    "run",
    "validate",
    "__version__",
]
