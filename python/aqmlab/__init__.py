"""aqmlab: a fast, validated lab for router queue management.

Run a scenario with :func:`run`; check one with :func:`validate`; run a grid of them on Dask with
:func:`sweep` (:mod:`aqmlab.sweep`, docs/sweep.md). Analytic models live in :mod:`aqmlab.models`.
"""

from ._native import version as _version
from .api import Result, default_scenario_path, run, validate
from .exceptions import AqmlabError, ScenarioError, SimulationError
from .sweep import sweep  # the function; the module stays importable as `from aqmlab.sweep import ...`

__version__ = _version()
__all__ = [
    "AqmlabError",
    "Result",
    "ScenarioError",
    "SimulationError",
    "default_scenario_path",
    "run",
    "sweep",
    "validate",
    "__version__",
]
