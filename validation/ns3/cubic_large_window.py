"""An open defect, reproduced: aqmlab's `cubic-ns3` against ns-3 3.44's TcpCubic outside ns-3's
default 128 KiB socket buffers (docs/validation.md, "Remaining differences").

`red_10flows_ns3_profile` (ns-3 at all its TCP defaults, aqmlab's `profile = "ns3"`) agrees. With
1448-byte segments and 6 MiB buffers on both sides (a Linux-like setting), ns-3 stays healthy and
aqmlab's flows run away: drop rates of 40 % and hundreds of RTO expiries. Needs the ns-3 build of
`python -m aqmlab.ns3ref` (validation/ns3/build/dumbbell). Usage: python validation/ns3/cubic_large_window.py
"""

import dataclasses
import json
import subprocess
from pathlib import Path

import aqmlab
from aqmlab import ns3ref

LARGE = {"--mss=536": "--mss=1448", "--sndBuf=131072": "--sndBuf=6291456", "--rcvBuf=131072": "--rcvBuf=6291456"}


def main() -> None:
    base = ns3ref.PROFILE_SCENARIOS["red_10flows_ns3_profile"]
    binary = (Path(ns3ref.NS3_DIR) / "build" / "dumbbell").resolve()
    for label, large in (("ns-3 defaults (536 B, 128 KiB)", False), ("1448 B, 6 MiB buffers", True)):
        for seed in (1, 2):
            sc = dataclasses.replace(base, seed=seed)
            args = [LARGE.get(a, a) if large else a for a in sc.ns3_args()]
            ns3 = json.loads(subprocess.run([str(binary), *args], capture_output=True, text=True, check=True,
                                            cwd=ns3ref.NS3_DIR).stdout)
            ours_sc = sc.aqmlab_scenario()
            if large:
                for f in ours_sc["flows"]:
                    f["mss"], f["max_window"] = "1448B", "6291456B"
            ours = aqmlab.run(ours_sc)
            theirs = ns3["bottleneck"]["after_warmup"]
            rto = sum(f["rto_expiries_after_warmup"] for f in ns3["flows"])
            print(f"{label}, seed {seed}: drop rate aqmlab {ours.queues.iloc[0]['drop_rate']:.4f} vs ns-3 "
                  f"{theirs['drop_rate']:.4f}; RTO expiries {int(ours.flows['timeouts'].sum())} vs {rto}; goodput "
                  f"{ours.aggregate['goodput_bps'] / 1e6:.2f} vs {ns3['aggregate']['tcp_goodput_bps'] / 1e6:.2f} Mb/s")


if __name__ == "__main__":
    main()
