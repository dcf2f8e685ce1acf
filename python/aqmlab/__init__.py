"""aqmlab: a fast, validated lab for router queue management.

Run a scenario with :func:`run` (a file, a dict, or a built-in one: :func:`builtin_path`; change keys of
any with :func:`with_overrides`); check one with :func:`validate`; run a grid of them on Dask with
:func:`sweep` (:mod:`aqmlab.sweep`, docs/sweep.md). Analytic models live in :mod:`aqmlab.models`.
"""

from ._native import version as _version
from .api import Result, default_scenario_path, run, validate
from .exceptions import AqmlabError, ScenarioError, SimulationError
from .library import builtin_names, builtin_path
from .scenario_keys import with_overrides
from .sweep import sweep  # the function; the module stays importable as `from aqmlab.sweep import ...`

__version__ = _version()
__all__ = [
    "AqmlabError",
    "Result",
    "ScenarioError",
    "builtin_names",
    "builtin_path",
    "SimulationError",
    "default_scenario_path",
    "run",
    "sweep",
    "validate",
    "with_overrides",
    "__version__",
]
