"""Live against simulated: one dumbbell under several disciplines, run on real Linux traffic
(`aqmlab live`) and in the simulator, printed as the markdown table in docs/live.md.

Needs root (network namespaces, TUN devices). Takes about 35 s of wall time per discipline.
Usage: python validation/live/compare.py [--duration 30s] [--flows 4] [--cc cubic] [--queues codel,fq_codel]
"""

from __future__ import annotations

import argparse

import aqmlab
from aqmlab.live import run_live, simulated_twin

QUEUES = {
    "droptail (100 pkts)": {"kind": "droptail", "limit": 100},
    "red (5/15, max_p 0.1)": {"kind": "red", "limit": 100, "min_th": 5, "max_th": 15, "max_p": 0.1, "weight": 0.002},
    "codel": {"kind": "codel"},
    "fq_codel": {"kind": "fq_codel"},
    "pie": {"kind": "pie"},
    "fq_pie": {"kind": "fq_pie"},
}


def scenario(queue: dict, duration: str, flows: int, cc: str) -> dict:
    return {"run": {"duration": duration, "warmup": "5s", "seed": 1},
            "topology": {"bottleneck": {"rate": "10Mbps", "delay": "20ms"}, "access": {"rate": "100Mbps", "delay": "1ms"}},
            "queue": queue, "flows": [{"kind": "tcp", "count": flows, "congestion_control": cc, "start_jitter": "1s",
                                       # BBR needs SACK in the simulator; the kernel always has it.
                                       **({"variant": "sack"} if cc == "bbr" else {})}]}


def row(res) -> list[str]:
    q, agg = res.queues.iloc[0], res.aggregate
    retrans = res.flows["retransmits"].sum()
    timeouts = res.flows["timeouts"]
    rtos = "–" if timeouts.isna().any() else f"{timeouts.sum():.0f}"  # live: Linux 6.7+ only
    return [f"{agg['goodput_bps'] / 1e6:.2f}", f"{agg['jain_index']:.3f}", f"{q['mean_sojourn_s'] * 1e3:.1f}",
            f"{q['p99_sojourn_s'] * 1e3:.1f}", f"{q['drop_rate'] * 100:.2f}", f"{retrans:.0f}", rtos]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", default="30s")
    ap.add_argument("--flows", type=int, default=4)
    ap.add_argument("--cc", default="cubic")
    ap.add_argument("--queues", default="", help="comma-separated prefixes of the disciplines to run (default: all)")
    args = ap.parse_args()
    wanted = [w for w in args.queues.split(",") if w]
    head = ["goodput Mb/s", "Jain", "mean sojourn ms", "p99 sojourn ms", "drop %", "retransmits", "timeouts"]
    print(f"{args.flows} {args.cc} flows (simulated: the live run's twin, `profile = \"linux\"`), 10 Mb/s / 20 ms bottleneck, 1 ms access links, {args.duration} "
          "(5 s warm-up); live on kernel " + __import__("os").uname().release)
    print()
    print("| discipline | run | " + " | ".join(head) + " |")
    print("|---|---|" + "---|" * len(head))
    for name, queue in QUEUES.items():
        if wanted and not any(name.split(" ")[0] == w for w in wanted):
            continue
        sc = scenario(queue, args.duration, args.flows, args.cc)
        # the simulator's TCP with Linux's defaults and the kernel module's arithmetic (live/twin.py)
        for label, res in (("live", run_live(sc, plot=False)), ("simulated", aqmlab.run(simulated_twin(sc)))):
            print(f"| {name} | {label} | " + " | ".join(row(res)) + " |", flush=True)


if __name__ == "__main__":
    main()
