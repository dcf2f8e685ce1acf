"""The built-in scenarios shipped in ``aqmlab/scenarios/``: ``aqmlab run NAME`` runs one,
``aqmlab scenarios`` lists them, and each file's opening comment says what it is and where it comes from."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["builtin_names", "builtin_path", "builtin_summary"]


def _directory() -> Path:
    return Path(str(resources.files("aqmlab") / "scenarios"))


def builtin_names() -> list[str]:
    """Names of the built-in scenarios, sorted (``default`` among them)."""
    return sorted(p.stem for p in _directory().glob("*.toml"))


def builtin_path(name: str) -> Path | None:
    """The file of the built-in scenario `name`, or None when there is none of that name."""
    return _directory() / f"{name}.toml" if name in builtin_names() else None


def builtin_summary(name: str) -> str:
    """The first line of the scenario's opening comment: what it is, in one line."""
    path = builtin_path(name)
    if path is None:
        raise KeyError(name)
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
        if line.strip():
            break
    return ""
