"""Live runs: a scenario on real Linux traffic through aqmlab's own queue code (docs/live.md)."""

from .runner import DEFAULT_BASE_PORT, run_live

__all__ = ["run_live", "DEFAULT_BASE_PORT"]
