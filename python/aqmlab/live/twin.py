"""The simulation to set beside a live run: the same scenario with each TCP group modelled as the
Linux TCP that the live run actually used.

A live run plays TCP with the kernel's stack whatever the scenario's aqmlab TCP keys say (only
`congestion_control`, `ecn` and `mss` reach the kernel; `variant` is accepted but Linux recovers
with SACK either way). Simulating the scenario as written would compare the kernel with aqmlab's
default TCP (NewReno without SACK). The twin gives each TCP group `profile = "linux"`
(docs/tcp-profiles.md), drops `variant` so the profile's SACK applies, and pins
`congestion_control` to the simulator's model of the kernel module the live run used: `reno`,
`dctcp`, and for the kernel's CUBIC `cubic-linux` (tcp_cubic.c's arithmetic; the scenario's
`cubic` is RFC 9438 when simulated). Without a profile the default is Reno, which the Linux
profile would otherwise turn into CUBIC.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ..api import load_scenario, scenario_dict, validate
from .support import LINUX_CC, SIMULATED_LINUX_CC


def simulated_twin(scenario, *, seed: int | None = None) -> dict[str, Any]:
    """``scenario`` as a dict whose TCP groups model the kernel's TCP of a live run."""
    text, _ = load_scenario(scenario_dict(scenario), seed=seed)  # file names anchored (a trace)
    raw = json.loads(text)
    echo = validate(raw)
    twin = copy.deepcopy(raw)
    for group, used in zip(twin.get("flows", []), echo.get("flows", [])):
        if group.get("kind") != "tcp":
            continue
        group["profile"] = "linux"
        group.pop("variant", None)
        group["congestion_control"] = SIMULATED_LINUX_CC[LINUX_CC[used["congestion_control"]]]
    return twin
