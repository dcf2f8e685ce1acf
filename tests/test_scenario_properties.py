"""Property tests over random scenario dicts (issue #2's "no panic, no traceback" rule): whatever a
dict holds, :func:`aqmlab.validate` and :func:`aqmlab.run` either accept it or raise
:class:`aqmlab.ScenarioError` with one line that starts with the key path it is about.

A dict is a valid scenario with a few random edits: a key of a table (known or made up) set to a
random value (integers from -2^63 to 2^64-1, finite floats, unit strings such as "3e9Mbps",
bools, lists, tables, deep nesting), a key removed, or a table replaced by a list or a number.
Bounded for CI: 200 validations and 100 runs of 200 simulated ms, no deadline (seconds in all).
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aqmlab
from aqmlab import api

BASE = {
    "run": {"duration": "200ms", "warmup": "50ms", "seed": 1},
    "topology": {"bottleneck": {"rate": "10Mbps", "delay": "5ms"}, "access": {"rate": "100Mbps", "delay": "1ms"}},
    "queue": {"kind": "red", "limit": 50, "min_th": 5, "max_th": 15},
    "flows": [{"kind": "tcp", "count": 2}, {"kind": "udp-cbr", "rate": "1Mbps"}],
    "output": {"bin": "50ms"},
}

CATALOG = json.loads(api._native.qdiscs())
QDISC_KINDS = sorted(entry["kind"] for entry in CATALOG)
QDISC_KEYS = sorted({key for entry in CATALOG for key in entry["keys"]})
CATALOG_KEYS = {entry["kind"]: sorted(entry["keys"]) for entry in CATALOG}
FLOW_KINDS = ["tcp", "udp-cbr", "udp-poisson", "mpeg", "proshare", "tfrc", "http"]
KEYS = sorted(set(QDISC_KEYS) | {
    "duration", "warmup", "seed", "kind", "bottleneck", "access", "receiver_access", "rate", "delay", "loss",
    "tx_ring", "rate_schedule", "at", "count", "direction", "start", "stop", "start_jitter", "class", "dscp",
    "access_delay", "variant", "congestion_control", "mss", "initial_window", "delayed_ack", "timeout",
    "max_window", "ecn", "size", "repeat", "packet_size", "bin", "per_flow_timeseries", "packet_delays",
    "flow_counter", "name", "classes", "colour",
})
UNITS = ["bps", "Mbps", "Tbps", "B", "KB", "GB", "ms", "s", "ns", "min", "", "furlongs"]

#: An error line: a key path (``flows[0].count``, ``queue.classes[1].max_th``) or ``scenario``, then
#: ": " and the message.
KEY_LINE = re.compile(r"^(scenario|[A-Za-z_][\w-]*(\[\d+\])*(\.[A-Za-z_][\w-]*(\[\d+\])*)*): \S")

numbers = st.one_of(st.integers(-(2**63), 2**64 - 1), st.integers(-3, 300),
                    st.floats(allow_nan=False, allow_infinity=False))
unit_strings = st.builds(lambda n, u: f"{n}{u}", st.one_of(st.integers(-5, 10**6), st.sampled_from(["1e30", "1e-12", "0.5", "1e300"])),
                         st.sampled_from(UNITS))
scalars = st.one_of(numbers, unit_strings, st.booleans(), st.sampled_from(QDISC_KINDS + FLOW_KINDS + ["none", "auto", ""]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
                      max_leaves=12)
def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


deep = st.integers(25, 200).map(_nested)  # around api.MAX_NESTING (32) and the core's JSON limit (128)


def _tables(d, path=()):
    """Every table in `d` with its path (lists of tables included)."""
    yield path, d
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _tables(v, path + (k,))
        elif isinstance(v, list):
            for i, item in enumerate(v):
                if isinstance(item, dict):
                    yield from _tables(item, path + (k, i))


@st.composite
def scenarios(draw, edits: int = 4, value_strategy=values):
    d = json.loads(json.dumps(BASE))
    if draw(st.booleans()):
        d["queue"] = {"kind": draw(st.sampled_from(QDISC_KINDS))}
    for _ in range(draw(st.integers(1, edits))):
        tables = list(_tables(d))
        _, table = tables[draw(st.integers(0, len(tables) - 1))]
        action = draw(st.sampled_from(["set", "set", "set", "drop", "reshape"]))
        if action == "set":
            # Mostly a key the table takes (so that validation gets past "unknown key"), else any.
            kind = table.get("kind")
            own = sorted(table) + (CATALOG_KEYS.get(kind, []) if isinstance(kind, str) else [])
            key = draw(st.sampled_from(own if own and draw(st.integers(0, 3)) else KEYS))
            table[key] = draw(st.one_of(value_strategy, deep) if draw(st.integers(0, 20)) == 0 else value_strategy)
        elif table:
            key = draw(st.sampled_from(sorted(table)))
            if action == "drop":
                del table[key]
            elif isinstance(table[key], dict):
                # A list where a table belongs, or a number: refused, never read field by field.
                table[key] = draw(st.sampled_from([list(table[key].values()), [table[key]], 5]))
    return d


def check(call, scenario) -> object | None:
    """Calls `call(scenario)`; any error must be one ScenarioError line naming a key."""
    try:
        return call(scenario)
    except aqmlab.ScenarioError as e:
        msg = str(e)
        assert "\n" not in msg, msg
        assert KEY_LINE.match(msg), msg
        return None
    except BaseException as e:  # a PanicException (a BaseException) or any other error is a bug
        raise AssertionError(f"{type(e).__name__}: {e} for {json.dumps(scenario)[:2000]}") from e


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenarios())
def test_validate_accepts_or_names_the_key(scenario: dict) -> None:
    check(aqmlab.validate, scenario)


# Runs: edits to the queue and the flows only (the run stays 200 ms at 10 Mb/s, so each takes
# milliseconds), and small numbers, so that a valid scenario is quick to run.
small_values = st.one_of(st.integers(-2, 64), st.floats(-1, 100, allow_nan=False), st.booleans(),
                         st.sampled_from(["1ms", "20ms", "1500B", "64KB", "1Mbps", "none", "auto", "ns2", "linux", "ns3"]))


@st.composite
def runnable(draw):
    d = json.loads(json.dumps(BASE))
    d["queue"] = {"kind": draw(st.sampled_from(QDISC_KINDS))}
    for _ in range(draw(st.integers(0, 3))):
        d["queue"][draw(st.sampled_from(QDISC_KEYS))] = draw(small_values)
    if draw(st.booleans()):
        d["flows"][0]["count"] = draw(st.integers(-1, 8))
    return d


@pytest.mark.filterwarnings("ignore")
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runnable())
def test_run_completes_or_names_the_key(scenario: dict) -> None:
    result = check(lambda s: aqmlab.run(s, plot=False), scenario)
    if result is not None:
        assert result.summary["simulated_s"] == pytest.approx(0.2)
