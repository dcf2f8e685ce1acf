"""Key paths into a scenario (``"queue.max_p"``, ``"flows[0].count"``): how a sweep file names what it
varies and how ``aqmlab run --set KEY=VALUE`` names what it changes.

Errors name where the key came from (``label``, e.g. ``'grid.toml: [sweep] "queue.max_p"'``) and what
the scenario holds there, so a wrong path is fixed without reading the code.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from .exceptions import ScenarioError

__all__ = ["parse_key", "show_key", "set_key", "with_overrides"]

_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)((?:\[\d+\])*)")


def parse_key(key: str, label: str) -> list[str | int]:
    """``"flows[0].count"`` → ``["flows", 0, "count"]``."""
    tokens: list[str | int] = []
    for part in key.split("."):
        m = _SEGMENT.fullmatch(part)
        if not m:
            raise ScenarioError(f'{label}: not a key path; write table keys joined by dots and list items as '
                                f'[i], e.g. "queue.max_p" or "flows[0].count"')
        tokens.append(m.group(1))
        tokens.extend(int(i) for i in re.findall(r"\d+", m.group(2)))
    return tokens


def show_key(tokens: list[str | int]) -> str:
    """The key path of `tokens` as written (``["flows", 0, "count"]`` → ``"flows[0].count"``)."""
    return "".join(f"[{t}]" if isinstance(t, int) else (f".{t}" if i else t) for i, t in enumerate(tokens))


def set_key(scenario: dict[str, Any], tokens: list[str | int], value: Any, label: str,
            base: str = "the base scenario") -> None:
    """Sets the value at a key path of `scenario` (called `base` in errors); a missing table on the way is
    created (the scenario's validation then says whether it may exist), a missing list item is an error."""
    cur: Any = scenario
    for i, tok in enumerate(tokens):
        last = i == len(tokens) - 1
        where = show_key(tokens[:i]) or "the scenario"
        if isinstance(tok, int):
            if not isinstance(cur, list):
                raise ScenarioError(f"{label}: {where} is not a list in {base}")
            if tok >= len(cur):
                raise ScenarioError(f"{label}: {where} has {len(cur)} item(s) in {base}, so there is no "
                                    f"{show_key(tokens[:i + 1])}")
        elif not isinstance(cur, dict):
            raise ScenarioError(f"{label}: {where} is a {type(cur).__name__} in {base}, not a table")
        if last:
            cur[tok] = value
        else:
            if isinstance(cur, dict) and tok not in cur:
                if isinstance(tokens[i + 1], int):
                    raise ScenarioError(f"{label}: {base} has no {show_key(tokens[:i + 1])}")
                cur[tok] = {}
            cur = cur[tok]


def with_overrides(scenario: Any, overrides: Mapping[str, Any] | Sequence[tuple[str, Any]],
                   label: str = "override") -> dict[str, Any]:
    """`scenario` (a path or a dict) as a dict with each key path of `overrides` set to its value, in order:
    ``with_overrides("my.toml", {"queue.kind": "fq_codel", "flows[0].count": 8})``. The result is not
    validated (run or validate it); errors about a path name it as ``{label} "{key}"``."""
    from . import api

    data = api.scenario_dict(scenario)
    items = overrides.items() if isinstance(overrides, Mapping) else overrides
    for key, value in items:
        where = f'{label} "{key}"'
        set_key(data, parse_key(key, where), api._plain(value, key), where, base="the scenario")
    return data
