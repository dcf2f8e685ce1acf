"""Shared fixtures: small scenarios and a runner for the command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Runs ``python -m aqmlab ARGS`` the way a user's shell would, capturing output."""
    return subprocess.run([sys.executable, "-m", "aqmlab", *args], capture_output=True, text=True, cwd=cwd)


SMALL_TCP = """\
[run]
duration = "4s"
warmup = "1s"
seed = 7

[topology]
bottleneck = { rate = "10Mbps", delay = "10ms" }
access = { rate = "100Mbps", delay = "1ms" }

[queue]
kind = "red"
limit = 60
min_th = 5
max_th = 15
max_p = 0.1
weight = 0.002

[[flows]]
kind = "tcp"
count = 4
start_jitter = "500ms"

[[flows]]
kind = "udp-poisson"
rate = "1Mbps"
packet_size = "500B"
"""


@pytest.fixture
def small_scenario(tmp_path: Path) -> Path:
    """A 4-second RED dumbbell with 4 TCP flows and a Poisson UDP flow."""
    p = tmp_path / "small.toml"
    p.write_text(SMALL_TCP)
    return p
