"""Live runs: a scenario on real Linux traffic through aqmlab's own queue code (docs/live.md)."""

from .runner import DEFAULT_BASE_PORT, run_live
from .twin import simulated_twin

__all__ = ["run_live", "simulated_twin", "DEFAULT_BASE_PORT"]
