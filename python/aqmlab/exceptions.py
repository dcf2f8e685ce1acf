"""Exceptions raised by aqmlab.

Every user mistake raises :class:`ScenarioError` with a one-line message naming the key path
(and line, for files) and what is allowed, e.g.
``queue.max_th (line 12): must be greater than min_th (5), got 3``.
"""

__all__ = ["AqmlabError", "ScenarioError", "SimulationError"]


class AqmlabError(Exception):
    """Base class of every aqmlab error."""


class ScenarioError(AqmlabError, ValueError):
    """A scenario is malformed, incomplete or impossible."""


class SimulationError(AqmlabError):
    """A run failed after its scenario was accepted (e.g. the capture file could not be written)."""
