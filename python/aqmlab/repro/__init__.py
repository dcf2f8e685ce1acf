"""Reproductions of the seed theses: `aqmlab repro <thesis>` (see docs/repro/)."""
