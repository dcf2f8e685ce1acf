"""`aqmlab repro fpq`: R. T. Morris, *Scalable TCP Congestion Control* (Harvard, 1999), rerun.

Each experiment below is one section of the thesis (spec `seed004-fpq.md` §5): it builds the
scenarios (`fpq_scenarios`), runs them over every core, compares with the analytic models
(`aqmlab.models.fpq`), draws the figure and states the claims with a verdict. The thesis's curves
survive only as captions and prose, so the claims are its stated numbers and shapes; each
criterion is written next to the claim before looking at our numbers.

`--quick` runs 100 simulated seconds per point and one seed (well under a minute on 2 cores); the
full run uses 500 s (the thesis's length) and five seeds per point. Both run every point.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..models import fpq as model  # noqa: E402
from . import fpq_scenarios as S  # noqa: E402
from .common import Claim, Job, Timer, claim_notes, claims_table, ensure_dir, run_jobs, save_figure, wall_time  # noqa: E402


@dataclasses.dataclass(frozen=True)
class Plan:
    """How much to run."""

    duration_s: float
    warmup_s: float
    seeds: tuple[int, ...]
    quick: bool
    workers: int | None = None
    quiet: bool = False

    def scenario(self, n: int, queue: dict[str, Any], seed: int, **kw: Any) -> dict[str, Any]:
        return S.scenario(n, queue, duration_s=self.duration_s, warmup_s=self.warmup_s, seed=seed, **kw)


def plan(quick: bool, workers: int | None = None, quiet: bool = False) -> Plan:
    if quick:
        return Plan(100.0, 20.0, (1,), True, workers, quiet)
    return Plan(500.0, 20.0, (1, 2, 3, 4, 5), False, workers, quiet)


# One figure per experiment, named after the thesis figures it corresponds to.
FIGURES = {
    "single_flow": "fig5_1-5_4_single_flow.png",
    "tail_drop": "fig5_5-5_9_droptail_random_drop.png",
    "red_sweeps": "fig5_11-5_16_red_sweeps.png",
    "fpq_validation": "fig6_5-6_7_fpq_validation.png",
    "t_clear_sweep": "fig6_8-6_10_t_clear.png",
    "ppf_sweep": "fig7_1-7_2_ppf.png",
    "delay_analysis": "fig7_4-7_12_fpq_vs_red217.png",
}


# ---- what every run reports ----

def extract(res) -> dict[str, Any]:
    q = res.queues.iloc[0]
    fl = res.flows
    measured = res.summary["measured_s"]
    n = len(fl)
    arrivals = q["arrivals"] + q["link_losses"]
    sent = fl["packets_sent"].sum()
    warmup = res.summary["simulated_s"] - measured
    ts = res.timeseries[res.timeseries["time_s"] > warmup]
    out = {
        "loss": (q["drops"] + q["link_losses"]) / arrivals if arrivals else float("nan"),
        "queue": q["mean_len_packets"],
        "queue_cv": float(ts["queue_pkts"].std() / ts["queue_pkts"].mean()) if ts["queue_pkts"].mean() > 0 else 0.0,
        "utilization": q["utilization"],
        "goodput_bps": fl["goodput_bps"].sum(),
        "timeouts_per_pkt": fl["timeouts"].sum() / sent if sent else float("nan"),
        "time_in_timeout": fl["timeout_wait_s"].sum() / (n * measured),
        "cwnd": fl["mean_cwnd_segments"].mean(),
        "flow_estimate": q.get("mean_flow_estimate", float("nan")),
    }
    tr = res.transfers
    if len(tr):
        out["transfers"] = tr[["segments", "delay_s", "timeouts"]].to_numpy()
    return out


def _run(p: Plan, jobs: list[Job], desc: str) -> pd.DataFrame:
    rows = run_jobs(jobs, extract, workers=p.workers, desc=desc, quiet=p.quiet)
    return pd.DataFrame(rows)


def _mean_over_seeds(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    num = [c for c in df.columns if c not in keys + ["seed", "transfers"] and pd.api.types.is_numeric_dtype(df[c])]
    return df.groupby(keys, as_index=False)[num].mean()


# ---- Sec. 5.1: one TCP under random loss (Figs. 5.1–5.4) ----

def single_flow(p: Plan, out: Path) -> tuple[pd.DataFrame, list[Claim]]:
    losses = [0.001, 0.003, 0.005, 0.01, 0.016, 0.02, 0.03, 0.05, 0.1]
    jobs = [Job(p.scenario(1, S.droptail(1000), seed, loss=l, variant=v, access_delay_ms=5.0),
                {"variant": v, "l": l, "seed": seed})
            for v in ("tahoe", "reno") for l in losses for seed in p.seeds]
    df = _mean_over_seeds(_run(p, jobs, "Figs 5.1-5.4"), ["variant", "l"])
    rtt = 0.1
    df["pif"] = df["goodput_bps"] / (S.MSS * 8) * rtt
    df["eq51"] = [model.avg_window(l) for l in df["l"]]
    df["eq53"] = [model.timeouts_per_packet(l) for l in df["l"]]
    df["eq54"] = [model.time_in_timeout(l, rtt) for l in df["l"]]
    df["eq55"] = [model.packets_in_flight(l, rtt) for l in df["l"]]

    fig, ax = plt.subplots(1, 4, figsize=(17, 4))
    for v, mk in (("tahoe", "o"), ("reno", "s")):
        d = df[df["variant"] == v]
        ax[0].loglog(d["l"], d["cwnd"], mk, label=f"{v} (aqmlab)")
        ax[1].loglog(d["l"], d["timeouts_per_pkt"].clip(lower=1e-6), mk, label=v)
        ax[2].semilogx(d["l"], d["time_in_timeout"], mk, label=v)
        ax[3].loglog(d["l"], d["pif"], mk, label=v)
    t = df[df["variant"] == "tahoe"]
    for a, col, name in ((ax[0], "eq51", "Eq 5.1: 0.87/√l"), (ax[1], "eq53", "Eq 5.3"), (ax[2], "eq54", "Eq 5.4"),
                         (ax[3], "eq55", "Eq 5.5")):
        a.plot(t["l"], t[col], "k-", label=name)
        a.set_xlabel("loss rate l")
        a.legend(fontsize=8)
    ax[0].set(ylabel="average cwnd (packets)", title="Fig 5.1")
    ax[1].set(ylabel="timeouts per packet", title="Fig 5.2")
    ax[2].set(ylabel="fraction of time in timeout", title="Fig 5.3 (RTT 100 ms)")
    ax[3].set(ylabel="packets in flight", title="Fig 5.4")
    save_figure(fig, out, FIGURES["single_flow"])

    mid = t[(t["l"] >= 0.005) & (t["l"] <= 0.05)]
    ratio = float((mid["cwnd"] / mid["eq51"]).mean())
    r = df[df["variant"] == "reno"].set_index("l")["cwnd"]
    diff = (t.set_index("l")["cwnd"] / r - 1).abs()
    tahoe_reno = float(diff.max())
    reno_ratio = float((r[(r.index >= 0.005) & (r.index <= 0.05)] / mid.set_index("l")["eq51"]).mean())
    valid = t[(t["l"] >= 0.01) & (t["l"] <= 0.03)]
    o_ratio = valid["timeouts_per_pkt"] / valid["eq53"]
    big_o_ratio = valid["time_in_timeout"] / valid["eq54"]
    claims = [
        Claim("5.1a", "Fig 5.1", "Eq 5.1 over-estimates the simulated average window by about 20 %",
              "sim ≈ 0.8 × Eq 5.1", f"sim = {ratio:.2f} × Eq 5.1 (mean, 0.5 %–5 % loss)", 0.7 <= ratio <= 0.9,
              "criterion: ratio in [0.7, 0.9]"),
        Claim("5.1b", "Fig 5.1", "Tahoe and Reno give nearly identical window curves", "nearly identical",
              f"largest difference {tahoe_reno:.0%}", tahoe_reno <= 0.15, "criterion: ≤ 15 % at every loss rate",
              note="Tahoe/Reno window difference by loss rate: " + ", ".join(f"{l:g}: {d:.0%}" for l, d in diff.items())
              + f". Reno's time-averaged window sits at {reno_ratio:.2f} × Eq 5.1, Tahoe's at {ratio:.2f} ×: after each fast "
              "retransmit Tahoe restarts from one segment and slow-starts back, Reno halves. The gap is largest where "
              "windows are large (low loss) and shrinks where the thesis looked (small windows); the thesis's claim "
              "holds there, not at every loss rate."),
        Claim("5.2", "Fig 5.2, Eq 5.3", "timeouts per packet follow l(1 − (1 − l)^13) where windows exceed 4",
              "agreement (no numbers)", "sim/model = " + ", ".join(f"{x:.2f}" for x in o_ratio) + " at l = 1–3 %",
              bool(((o_ratio > 0.5) & (o_ratio < 2)).all()), "criterion: within a factor 2 at 1 %–3 % loss"),
        Claim("5.3", "Fig 5.3, Eq 5.4", "fraction of time in timeout follows Eq 5.4 (RTT 100 ms)",
              "agreement (no numbers)", "sim/model = " + ", ".join(f"{x:.2f}" for x in big_o_ratio) + " at l = 1–3 %",
              bool(((big_o_ratio > 0.5) & (big_o_ratio < 2)).all()), "criterion: within a factor 2 at 1 %–3 % loss"),
    ]
    return df, claims


# ---- Sec. 5.2: drop-tail and random drop, 500 buffers, 10 ms (Figs. 5.5–5.9) ----

def tail_drop(p: Plan, out: Path) -> tuple[pd.DataFrame, list[Claim]]:
    ns = [10, 20, 30, 50, 75, 100, 150, 200, 300]
    kinds = {"droptail": S.droptail(500), "random-drop": S.random_drop(500)}
    jobs = [Job(p.scenario(n, q, seed, rtt_ms=10), {"queue_kind": k, "n": n, "seed": seed})
            for k, q in kinds.items() for n in ns for seed in p.seeds]
    df = _mean_over_seeds(_run(p, jobs, "Figs 5.5-5.7"), ["queue_kind", "n"])
    df["predicted"] = [model.droptail_loss(n, 500) if k == "droptail" else model.random_drop_loss(n, 500)
                       for k, n in zip(df["queue_kind"], df["n"])]

    # Figs 5.8/5.9: queue against time at 30 flows (one seed).
    traces = {}
    import aqmlab

    for k, q in kinds.items():
        res = aqmlab.run(p.scenario(30, q, p.seeds[0], rtt_ms=10))
        ts = res.timeseries
        traces[k] = ts
    at_full = {k: float((ts[ts["time_s"] > p.warmup_s]["queue_pkts"] >= 495).mean()) for k, ts in traces.items()}

    fig, ax = plt.subplots(1, 4, figsize=(18, 4))
    for k, mk in (("droptail", "o"), ("random-drop", "s")):
        d = df[df["queue_kind"] == k]
        ax[0].loglog(d["n"], d["loss"], mk, label=f"{k} (aqmlab)")
        ax[0].loglog(d["n"], d["predicted"], "-", label=f"{k}: Eq {'5.6' if k == 'droptail' else '5.7'}")
        ax[1].plot(d["n"], d["queue"], mk + "-", label=k)
        ax[2].plot(d["n"], d["time_in_timeout"], mk + "-", label=k)
    ax[0].set(xlabel="flows n", ylabel="loss rate", title="Fig 5.7 (500 buffers, 10 ms)")
    ax[1].set(xlabel="flows n", ylabel="average queue (packets)", title="Fig 5.5")
    ax[2].set(xlabel="flows n", ylabel="fraction of time in timeout", title="Fig 5.6")
    for k, ts in traces.items():
        w = ts[(ts["time_s"] > 40) & (ts["time_s"] <= 60)]
        ax[3].plot(w["time_s"], w["queue_pkts"], label=k, lw=0.8)
    ax[3].set(xlabel="time (s)", ylabel="queue (packets)", title="Figs 5.8/5.9 (30 flows)")
    for a in ax:
        a.legend(fontsize=8)
    save_figure(fig, out, FIGURES["tail_drop"])

    dt = df[df["queue_kind"] == "droptail"].set_index("n")
    rd = df[df["queue_kind"] == "random-drop"].set_index("n")
    low = dt[dt.index <= 50]
    low_ratio = (low["loss"] / low["predicted"])
    high = dt[dt.index >= 150]
    claims = [
        Claim("5.7a", "Fig 5.7, Eq 5.6", "drop-tail loss follows 0.76·n²/(n+q)² with q = 500 while n is well below 100",
              "follows the prediction", "sim/model = " + ", ".join(f"{r:.2f}" for r in low_ratio) + f" at n = {list(low.index)}",
              bool(((low_ratio > 0.5) & (low_ratio < 2)).all()), "criterion: within a factor 2 for n ≤ 50"),
        Claim("5.7b", "Fig 5.7", "as n approaches ~100 and beyond, real loss falls below the prediction (timeouts)",
              "sim < prediction", "sim/model = " + ", ".join(f"{r:.2f}" for r in high["loss"] / high["predicted"])
              + f" at n = {list(high.index)}", bool((high["loss"] < high["predicted"]).all()) if len(high) else None,
              "criterion: below at every n ≥ 150"),
        Claim("5.7c", "Fig 5.7", "random drop has the lower loss rate", "random drop < drop-tail",
              f"lower at {int((rd['loss'] < dt['loss']).sum())} of {len(dt)} flow counts",
              bool((rd["loss"] < dt["loss"]).mean() > 0.5), "criterion: at most flow counts"),
        Claim("5.5", "Fig 5.5", "random drop's average queue is longer than drop-tail's", "random drop > drop-tail",
              f"longer at {int((rd['queue'] > dt['queue']).sum())} of {len(dt)} flow counts",
              bool((rd["queue"] > dt["queue"]).mean() > 0.5), "criterion: at most flow counts"),
        Claim("5.6", "Fig 5.6", "drop-tail's fraction of time in timeout is higher than random drop's",
              "drop-tail > random drop", f"higher at {int((dt['time_in_timeout'] > rd['time_in_timeout']).sum())} of {len(dt)}",
              bool((dt["time_in_timeout"] > rd["time_in_timeout"]).mean() > 0.5), "criterion: at most flow counts"),
        Claim("5.8", "Figs 5.8, 5.9", "with 30 flows the queue stays at the full level longer under drop-tail",
              "drop-tail longer at full", f"time with ≥ 495 queued: drop-tail {at_full['droptail']:.0%}, random drop {at_full['random-drop']:.0%}",
              at_full["droptail"] > at_full["random-drop"], "criterion: larger share of time at ≥ 99 % of the buffer"),
    ]
    return df, claims


# ---- Sec. 5.3.2: RED parameter sweeps at 10 ms (Figs. 5.11–5.16) ----

def red_sweeps(p: Plan, out: Path) -> tuple[pd.DataFrame, list[Claim]]:
    base = {"n": 100, "max_th": 500.0, "max_p": 0.02}
    sweeps = {
        "n": [10, 20, 40, 100, 200, 300],
        "max_p": [0.005, 0.01, 0.02, 0.04, 0.08],
        "max_th": [100, 200, 500, 1000, 2000],
    }
    jobs = []
    for swept, values in sweeps.items():
        for v in values:
            cfg = {**base, swept: v}
            for seed in p.seeds:
                jobs.append(Job(p.scenario(int(cfg["n"]), S.red(cfg["max_th"], cfg["max_p"]), seed, rtt_ms=10),
                                {"sweep": swept, "value": v, **cfg, "seed": seed}))
    df = _mean_over_seeds(_run(p, jobs, "Figs 5.11-5.16"), ["sweep", "value", "n", "max_th", "max_p"])
    for name, fn in (("p1", lambda r: model.red_p1(r.n, r.max_th, r.max_p, constants="thesis")),
                     ("p2", lambda r: model.red_p2(r.n, r.max_th, r.max_p, pps=2170, rtt_s=0.01, variant="literal")),
                     ("p2q", lambda r: model.red_p2(r.n, r.max_th, r.max_p, pps=2170, rtt_s=0.01, variant="queueing"))):
        preds = [fn(r) for r in df.itertuples()]
        df[f"{name}_loss"] = [x.loss for x in preds]
        df[f"{name}_queue"] = [x.queue_pkts for x in preds]

    fig, ax = plt.subplots(3, 3, figsize=(15, 12))
    for j, swept in enumerate(sweeps):
        d = df[df["sweep"] == swept].sort_values("value")
        for i, (col, label) in enumerate((("loss", "loss rate"), ("queue", "average queue (packets)"))):
            a = ax[i][j]
            a.plot(d["value"], d[col], "ko", label="aqmlab")
            for m, style in (("p1", "r--"), ("p2", "b-"), ("p2q", "g:")):
                a.plot(d["value"], d[f"{m}_{col}"], style, label={"p1": "P1", "p2": "P2 (thesis)", "p2q": "P2′ (queueing RTT)"}[m])
            a.set(xscale="log", xlabel=swept, ylabel=label)
            a.legend(fontsize=8)
        ax[2][j].plot(d["value"], d["time_in_timeout"], "ko-")
        ax[2][j].set(xscale="log", xlabel=swept, ylabel="fraction of time in timeout")
    ax[0][0].set_title("Fig 5.11 (N swept)")
    ax[0][1].set_title("Fig 5.12 (max_p swept)")
    ax[0][2].set_title("Fig 5.13 (max_th swept)")
    ax[2][0].set_title("Figs 5.14-5.16")
    save_figure(fig, out, FIGURES["red_sweeps"])

    over = ((df["p1_loss"] > df["loss"]) & (df["p1_queue"] > df["queue"])).mean()

    def log_err(m: str) -> float:
        return float(np.mean(np.abs(np.log(df[f"{m}_loss"] / df["loss"]))) + np.mean(np.abs(np.log(df[f"{m}_queue"] / df["queue"]))))

    n_sweep = df[df["sweep"] == "n"].set_index("value")
    th_sweep = df[df["sweep"] == "max_th"].set_index("value")
    mp_sweep = df[df["sweep"] == "max_p"].set_index("value")
    claims = [
        Claim("5.11a", "Figs 5.11–5.13", "P1 over-predicts both queue and loss in all RED runs", "all points",
              f"P1 above both at {over:.0%} of points", over >= 0.8, "criterion: at ≥ 80 % of points"),
        Claim("5.11b", "Sec. 5.3.3", "P2 comes closer to the simulation than P1", "P2 closer",
              f"mean |log error| loss+queue: P1 {log_err('p1'):.2f}, P2 {log_err('p2'):.2f}, P2′ {log_err('p2q'):.2f}",
              log_err("p2") < log_err("p1"), "criterion: smaller mean |log(model/sim)|"),
    ]
    if 200 in n_sweep.index or 300 in n_sweep.index:
        top = n_sweep.loc[n_sweep.index >= 200, "queue"]
        claims.append(Claim("5.11c", "Fig 5.11", "the queue stops rising abruptly at max_th (500) at about 200 flows",
                            "queue ≈ 500 from ~200 flows", "queue " + ", ".join(f"{q:.0f}" for q in top) + f" at N = {list(top.index)}",
                            bool((top > 0.85 * 500).all() and (top < 1.05 * 500).all()), "criterion: within 85 %–105 % of max_th"))
    if 10 in n_sweep.index and 40 in n_sweep.index:
        per10, per40 = n_sweep.loc[10, "queue"] / 10, n_sweep.loc[40, "queue"] / 40
        claims.append(Claim("5.11d", "Fig 5.11", "max_th 500, max_p 2 % works for 10–40 flows with about 6 and 4 buffers per flow",
                            "6 and 4", f"{per10:.1f} and {per40:.1f}", bool(4 <= per10 <= 8 and 3 <= per40 <= 5.5),
                            "criterion: 4–8 at 10 flows, 3–5.5 at 40"))
    if 1000 in th_sweep.index:
        ppf = th_sweep.loc[1000, "queue"] / 100
        claims.append(Claim("5.13", "Fig 5.13", "max_th = 1000 gives about 4 packets per flow at 100 flows", "≈ 4",
                            f"{ppf:.1f}", 3 <= ppf <= 5, "criterion: 3–5"))
    if 0.08 in mp_sweep.index:
        o = mp_sweep.loc[0.08, "time_in_timeout"]
        claims.append(Claim("5.15", "Fig 5.15", "at max_p = 0.08 about half the TCPs are in timeout at any moment", "≈ 0.5",
                            f"{o:.2f}", 0.35 <= o <= 0.65, "criterion: 0.35–0.65"))
    return df, claims


# ---- Sec. 6.4: FPQ validation up to 1400 flows (Figs. 6.5–6.7) ----

def fpq_validation(p: Plan, out: Path) -> tuple[pd.DataFrame, list[Claim]]:
    ns = [50, 100, 200, 400, 700, 1000, 1400]
    jobs = [Job(p.scenario(n, S.fpq(), seed), {"n": n, "seed": seed}) for n in ns for seed in p.seeds]
    raw = _run(p, jobs, "Figs 6.5-6.7")
    df = _mean_over_seeds(raw, ["n"])
    df["target_q"] = [model.fpq_target_queue(n, S.BDP_PKTS) for n in df["n"]]
    df["ppf_total"] = (df["queue"] + S.BDP_PKTS) / df["n"]
    df["ppf_router"] = df["queue"] / df["n"]

    fig, ax = plt.subplots(1, 3, figsize=(15, 4))
    ax[0].plot(df["n"], df["queue"], "ko-", label="aqmlab average queue")
    ax[0].plot(df["n"], df["target_q"], "r--", label="target max(r/(2f−1), 5f)")
    ax[0].plot(df["n"], df["flow_estimate"], "b:", label="counted flows f")
    ax[0].set(xlabel="flows", ylabel="packets", title="Fig 6.5")
    ax[1].plot(df["n"], df["ppf_total"], "ko-", label="(queue + 217)/flows")
    ax[1].plot(df["n"], df["ppf_router"], "bs-", label="queue/flows")
    ax[1].axhline(5, color="r", ls="--")
    ax[1].set(xlabel="flows", ylabel="packets per flow", title="Fig 6.6")
    ax[2].plot(df["n"], df["loss"], "ko-", label="drop rate")
    ax[2].plot(df["n"], df["timeouts_per_pkt"], "bs-", label="timeouts per packet")
    ax[2].axhline(0.016, color="r", ls="--", label="target 1.6 %")
    ax[2].set(xlabel="flows", ylabel="rate", title="Fig 6.7")
    for a in ax:
        a.legend(fontsize=8)
    save_figure(fig, out, FIGURES["fpq_validation"])

    big = df[df["n"] >= 100]
    q_ratio = big["queue"] / big["target_q"]
    large = df[df["n"] >= 400]
    est = df[df["n"] <= 400]
    claims = [
        Claim("6.1", "Sec. 6.1, Fig 6.5", "the bit-vector count tracks the number of active flows", "(no figure of f itself)",
              "mean estimate / true: " + ", ".join(f"{f / n:.2f}" for n, f in zip(df["n"], df["flow_estimate"])),
              bool(((est["flow_estimate"] / est["n"] - 1).abs() < 0.1).all()),
              "criterion: within 10 % while v_max ≥ 5f and the RTT is well below t_clear (n ≤ 400)"),
        Claim("6.5", "Fig 6.5", "FPQ's average queue grows with the flows, close to 5f and slightly below it",
              "close to, slightly below 5f", "queue/target = " + ", ".join(f"{r:.2f}" for r in q_ratio) + f" at n = {list(big['n'])}",
              bool(((q_ratio > 0.7) & (q_ratio <= 1.02)).all()), "criterion: 0.7–1.02 of the target for n ≥ 100",
              note="The counter's mean estimate is " + ", ".join(f"{f:.0f} of {n}" for n, f in zip(df["n"], df["flow_estimate"]))
              + ". It falls behind at large n because the round trip grows with the queue (≈ "
              + f"{0.1 + df['queue'].iloc[-1] / S.PPS:.1f} s at {df['n'].iloc[-1]} flows) towards t_clear = 4 s, so bits of slow or "
              "timed-out flows are cleared before their next packet (§6.1: t_clear must exceed the largest RTT). RED then "
              "settles where TCP's loss matches the larger queue, which lands the average near 5n anyway, with loss above the 1.6 % target."),
        Claim("6.6", "Fig 6.6", "counting the 217 packets on the links, packets per flow stay close to 5 across flow counts",
              "≈ 5", ", ".join(f"{x:.1f}" for x in big["ppf_total"]) + f" at n = {list(big['n'])}",
              bool(((big["ppf_total"] > 4) & (big["ppf_total"] < 6)).all()), "criterion: 4–6 for n ≥ 100",
              note="FPQ's own target is q = 5f, so (q + 217)/f = 5 + 217/f: "
              + ", ".join(f"{(5 * n + 217) / n:.1f} at {n}" for n in big["n"][:3])
              + ". The measured values follow that target (slightly below it, as the thesis says); 'close to 5' is reached "
              "only where 217/f is small, i.e. from a few hundred flows on."),
        Claim("6.7a", "Fig 6.7", "the drop rate approaches the 1.6 % target at large flow counts", "≈ 1.6 %",
              ", ".join(f"{x:.2%}" for x in large["loss"]) + f" at n = {list(large['n'])}",
              bool(((large["loss"] > 0.008) & (large["loss"] < 0.024)).all()), "criterion: 0.8 %–2.4 % for n ≥ 400"),
        Claim("6.7b", "Fig 6.7", "timeouts per packet stay well under 1 per 100 packets", "< 0.01",
              f"at most {df['timeouts_per_pkt'].max():.4f}", bool(df["timeouts_per_pkt"].max() < 0.01), "criterion: < 0.01 at every n"),
    ]
    return df, claims


# ---- Sec. 6.4: t_clear sensitivity at 300 flows (Figs. 6.8–6.10) ----

def t_clear_sweep(p: Plan, out: Path) -> tuple[pd.DataFrame, list[Claim]]:
    values = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 4.0, 8.0]
    jobs = [Job(p.scenario(300, S.fpq(t_clear_s=t), seed), {"t_clear": t, "seed": seed}) for t in values for seed in p.seeds]
    df = _mean_over_seeds(_run(p, jobs, "Figs 6.8-6.10"), ["t_clear"])
    import aqmlab

    trace = aqmlab.run(p.scenario(300, S.fpq(t_clear_s=0.05), p.seeds[0])).timeseries
    steady = aqmlab.run(p.scenario(300, S.fpq(t_clear_s=4.0), p.seeds[0])).timeseries

    fig, ax = plt.subplots(1, 3, figsize=(15, 4))
    for ts, lab in ((trace, "t_clear 0.05 s"), (steady, "t_clear 4 s")):
        w = ts[(ts["time_s"] > 40) & (ts["time_s"] <= 70)]
        ax[0].plot(w["time_s"], w["queue_pkts"], lw=0.8, label=lab)
    ax[0].set(xlabel="time (s)", ylabel="queue (packets)", title="Fig 6.8 (300 flows)")
    ax[1].semilogx(df["t_clear"], df["flow_estimate"], "ko-", label="counted flows (mean)")
    ax[1].axhline(300, color="r", ls="--", label="true 300")
    ax[1].set(xlabel="t_clear (s)", ylabel="flows", title="Fig 6.9")
    ax[2].semilogx(df["t_clear"], df["loss"], "ko-", label="drop rate")
    ax[2].semilogx(df["t_clear"], df["timeouts_per_pkt"], "bs-", label="timeouts per packet")
    ax[2].axhline(0.016, color="r", ls="--")
    ax[2].set(xlabel="t_clear (s)", title="Fig 6.10")
    for a in ax:
        a.legend(fontsize=8)
    save_figure(fig, out, FIGURES["t_clear_sweep"])

    d = df.set_index("t_clear")
    cv_short, cv_long = d.loc[0.05, "queue_cv"], d.loc[d.index >= 0.2, "queue_cv"].max()
    long = d.loc[d.index >= 2.0, "loss"]
    spread = float(long.max() / long.min() - 1) if len(long) > 1 else float("nan")
    claims = [
        Claim("6.8", "Fig 6.8", "with t_clear = 0.05 s the queue oscillates; the oscillation disappears above about 0.2 s",
              "oscillation at 0.05 s only", f"queue CV {cv_short:.2f} at 0.05 s; at most {cv_long:.2f} for t_clear ≥ 0.2 s",
              bool(cv_short > 1.5 * cv_long), "criterion: CV at 0.05 s > 1.5 × the largest CV at ≥ 0.2 s"),
        Claim("6.9", "Fig 6.9", "counted flows fall well short of 300 when t_clear is far below the RTT / min RTO",
              "≪ 300 at small t_clear", f"{d.loc[0.05, 'flow_estimate']:.0f} at 0.05 s; {d.loc[4.0, 'flow_estimate']:.0f} at 4 s",
              bool(d.loc[0.05, "flow_estimate"] < 0.6 * 300), "criterion: < 180 at 0.05 s"),
        Claim("6.10", "Fig 6.10", "beyond a few seconds t_clear has little effect on the drop rate",
              "little effect", f"drop rate varies by {spread:.0%} over t_clear ≥ 2 s" if not math.isnan(spread) else "one point only",
              None if math.isnan(spread) else bool(spread < 0.2), "criterion: < 20 % spread over t_clear ≥ 2 s"),
    ]
    return df, claims


# ---- Sec. 7.1: packets per flow at 500 flows (Figs. 7.1–7.2) ----

THESIS_PPF = {1: (0.073, 270, 3.5, 4.6, 3.5), 3: (0.024, 890, 3.7, 4.6, 1.9), 5: (0.009, 1120, 4.2, 4.6, 1.3),
              7: (0.004, 1210, 4.5, 4.6, 0.9)}


def ppf_sweep(p: Plan, out: Path) -> tuple[pd.DataFrame, list[Claim]]:
    twenty = {"size": f"{20 * S.MSS}B", "size_dist": "fixed", "repeat": True}
    # The thesis does not say how the loss target follows PPF; we use Fig. 6.2's formula with PPF
    # in place of 5, uncapped (spec §3.5, first resolution).
    jobs = [Job(p.scenario(500, S.fpq(ppf=k, loss_cap=1.0), seed, transfers=twenty), {"ppf": k, "seed": seed})
            for k in THESIS_PPF for seed in p.seeds]
    raw = _run(p, jobs, "Figs 7.1-7.2")
    rows = []
    for k, g in raw.groupby("ppf"):
        tr = np.concatenate(list(g["transfers"]))
        delay = tr[:, 1]
        rows.append({"ppf": k, "loss": g["loss"].mean(), "queue": g["queue"].mean(), "median_s": float(np.median(delay)),
                     "mean_s": float(delay.mean()), "sd_s": float(delay.std()), "no_timeout": float((tr[:, 2] == 0).mean()),
                     "transfers": len(tr)})
        if k == 3:
            cdf_delay = np.sort(delay)
    df = pd.DataFrame(rows)

    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    ax[0].plot(cdf_delay, np.arange(1, len(cdf_delay) + 1) / len(cdf_delay), "k-")
    ax[0].axvline(4.608, color="r", ls="--", label="fair 4.6 s")
    ax[0].set(xlabel="transfer time (s)", ylabel="CDF", title="Fig 7.1 (PPF 3, 500 flows, 20 packets)")
    ax[0].legend()
    ax[1].errorbar(df["ppf"], df["mean_s"], yerr=df["sd_s"], fmt="ko-", capsize=3, label="aqmlab mean ± SD")
    ax[1].plot(df["ppf"], df["median_s"], "bs-", label="aqmlab median")
    ax[1].plot(list(THESIS_PPF), [v[2] for v in THESIS_PPF.values()], "b^:", label="thesis median")
    ax[1].errorbar(list(THESIS_PPF), [v[3] for v in THESIS_PPF.values()], yerr=[v[4] for v in THESIS_PPF.values()],
                   fmt="r^:", capsize=3, label="thesis mean ± SD")
    ax[1].set(xlabel="packets per flow (PPF)", ylabel="transfer time (s)", title="Fig 7.2")
    ax[1].legend(fontsize=8)
    save_figure(fig, out, FIGURES["ppf_sweep"])

    d = df.set_index("ppf")
    sd_falls = bool(np.all(np.diff(d["sd_s"].to_numpy()) < 0))
    loss_falls = bool(np.all(np.diff(d["loss"].to_numpy()) < 0))
    mean_spread = float(d["mean_s"].max() / d["mean_s"].min() - 1)
    claims = [
        Claim("7.2a", "Fig 7.2", "the mean transfer time does not change with PPF (it depends only on link rate and size)",
              "4.6 s for PPF 1–7", ", ".join(f"{x:.2f}" for x in d["mean_s"]) + " s", mean_spread < 0.1,
              "criterion: spread < 10 %"),
        Claim("7.2b", "Fig 7.2", "a higher PPF lowers the SD of transfer times", "3.5, 1.9, 1.3, 0.9 s",
              ", ".join(f"{x:.1f}" for x in d["sd_s"]) + " s", sd_falls, "criterion: strictly decreasing"),
        Claim("7.2c", "Fig 7.2", "loss falls as PPF rises", "7.3 %, 2.4 %, 0.9 %, 0.4 %",
              ", ".join(f"{x:.1%}" for x in d["loss"]), loss_falls, "criterion: strictly decreasing (our loss target differs, see text)"),
        Claim("7.2d", "Fig 7.2", "average queue at PPF 1, 3, 5, 7", "270, 890, 1120, 1210 packets",
              ", ".join(f"{x:.0f}" for x in d["queue"]), None, "shown: the thesis's FPQ loss target for PPF ≠ 5 is unknown"),
        Claim("7.1", "Fig 7.1", "with PPF 3 about 65 % of transfers complete without a timeout", "≈ 65 %",
              f"{d.loc[3, 'no_timeout']:.0%}", bool(0.5 <= d.loc[3, "no_timeout"] <= 0.8), "criterion: 50 %–80 %",
              note=_timeout_note(d.loc[3, "loss"], d.loc[3, "no_timeout"])),
    ]
    return df, claims


def _timeout_note(loss: float, no_timeout: float) -> str:
    clean = (1 - loss) ** 20
    rescued = (no_timeout - clean) / (1 - clean)
    return (f"Our loss rate at PPF 3 is {loss:.1%}, as in the thesis (2.4 %). A 20-packet transfer then sees no loss with "
            f"probability (1 − l)^20 = {clean:.0%}, close to the thesis's 65 %: in ns-1.4 almost every transfer that lost a "
            f"packet timed out. In ours {rescued:.0%} of the transfers that lost packets finished without a timeout, "
            "i.e. fast retransmit recovered them. With windows of 1–6 segments, whether three duplicate ACKs arrive depends "
            "on details ns-1.4 does not document here (its Tahoe's dupack handling and the delayed-ACK sink's response to "
            "out-of-order data); we have not pinned down which. Loss, queue and delay statistics of the same runs agree "
            "with Fig. 7.2.")


# ---- Ch. 7: FPQ against RED217 with exponential transfers (Figs. 7.4–7.12) ----

def delay_analysis(p: Plan, out: Path) -> tuple[pd.DataFrame, list[Claim]]:
    ns = [100, 200, 300, 400, 500, 600, 661, 800, 1000]
    exp20 = {"size": f"{20 * S.MSS}B", "size_dist": "exponential", "repeat": True}
    queues = {"FPQ": S.fpq(), "RED217": S.red(217, 0.02)}
    jobs = [Job(p.scenario(n, q, seed, transfers=exp20), {"queue_kind": k, "n": n, "seed": seed})
            for k, q in queues.items() for n in ns for seed in p.seeds]
    raw = _run(p, jobs, "Figs 7.4-7.12")
    rows, dists, by_size = [], {}, {}
    for (k, n), g in raw.groupby(["queue_kind", "n"]):
        tr = np.concatenate(list(g["transfers"]))
        seg, delay = tr[:, 0], tr[:, 1]
        row = {"queue_kind": k, "n": n, "loss": g["loss"].mean(), "queue": g["queue"].mean(),
               "goodput_bps": g["goodput_bps"].mean(), "mean_delay": float(delay.mean()),
               "short_delay": float(delay[seg < 20].mean()), "long_delay": float(delay[seg >= 20].mean())}
        for size in (10, 20, 40):
            d = delay[seg == size]
            row[f"p5_{size}"], row[f"p95_{size}"] = (np.percentile(d, 5), np.percentile(d, 95)) if len(d) >= 20 else (np.nan, np.nan)
            row[f"ratio_{size}"] = row[f"p95_{size}"] / row[f"p5_{size}"]
            if n == 661:
                dists[(k, size)] = np.sort(d)
        if n == 661:
            by_size[k] = pd.Series(delay).groupby(seg).agg(["mean", "count"])
        rows.append(row)
    df = pd.DataFrame(rows)

    fig, ax = plt.subplots(2, 4, figsize=(21, 9))
    for k, mk in (("FPQ", "o"), ("RED217", "s")):
        d = df[df["queue_kind"] == k]
        ax[0][0].plot(d["n"], d["goodput_bps"] / 1e6, mk + "-", label=k)
        ax[0][1].plot(d["n"], d["mean_delay"], mk + "-", label=k)
        ax[0][2].plot(d["n"], d["short_delay"], mk + "-", label=f"{k} < 20 packets")
        ax[0][2].plot(d["n"], d["long_delay"], mk + "--", label=f"{k} ≥ 20 packets")
        ax[1][1].plot(d["n"], d["p5_20"], mk + "-", label=f"{k} 5th pct")
        ax[1][1].plot(d["n"], d["p95_20"], mk + "--", label=f"{k} 95th pct")
        for size, ls in ((10, ":"), (20, "-"), (40, "--")):
            ax[1][2].plot(d["n"], d[f"ratio_{size}"], mk + ls, label=f"{k} {size} pkts")
    for (k, size), d in dists.items():
        if size == 20:
            ax[1][0].plot(d, np.arange(1, len(d) + 1) / len(d), label=k)
    fair20 = 20 * S.PACKET_BITS / (S.LINK_BPS / 661)
    ax[1][0].axvline(fair20, color="r", ls="--", label=f"fair {fair20:.1f} s")
    ax[0][0].set(xlabel="flows", ylabel="useful throughput (Mb/s)", title="Fig 7.4")
    ax[0][1].set(xlabel="flows", ylabel="average transfer time (s)", title="Fig 7.5")
    ax[0][2].set(xlabel="flows", ylabel="average transfer time (s)", title="Fig 7.7")
    ax[1][0].set(xlabel="transfer time (s)", ylabel="CDF", title="Fig 7.9 (661 flows, 20 packets)")
    ax[1][1].set(xlabel="flows", ylabel="transfer time (s)", title="Fig 7.10 (20 packets)")
    ax[1][2].set(xlabel="flows", ylabel="95th / 5th percentile", title="Figs 7.11, 7.12")
    for k, t in by_size.items():
        t = t[(t["count"] >= 20) & (t.index <= 80)]
        ax[0][3].plot(t.index, t["mean"], "o-" if k == "FPQ" else "s-", ms=3, label=k)
    ax[0][3].plot(np.arange(1, 81), np.arange(1, 81) * S.PACKET_BITS / (S.LINK_BPS / 661), "r--", label="fair share")
    ax[0][3].set(xlabel="transfer size (packets)", ylabel="average transfer time (s)", title="Fig 7.8 (661 flows)")
    ax[1][3].axis("off")
    for row in ax:
        for a in row:
            if a.get_legend_handles_labels()[0]:
                a.legend(fontsize=7)
    save_figure(fig, out, FIGURES["delay_analysis"])

    f = df[df["queue_kind"] == "FPQ"].set_index("n")
    r = df[df["queue_kind"] == "RED217"].set_index("n")
    loaded = [n for n in f.index if n >= 300]
    thr_gap = float((f.loc[loaded, "goodput_bps"] / r.loc[loaded, "goodput_bps"] - 1).abs().max())
    delay_gap = float((f.loc[loaded, "mean_delay"] / r.loc[loaded, "mean_delay"] - 1).abs().max())
    ratio_higher = (r["ratio_20"] > f["ratio_20"]).mean()
    gap = (r["ratio_20"] - f["ratio_20"]).dropna()
    widens = bool(gap.iloc[-1] > gap.iloc[0]) if len(gap) > 1 else None
    d20 = dists.get(("FPQ", 20), np.array([]))
    tight = float(np.mean(np.abs(d20 / np.median(d20) - 1) < 0.2)) if len(d20) else float("nan")
    bias = None
    if "FPQ" in by_size and "RED217" in by_size:
        rel = (by_size["FPQ"]["mean"] / by_size["RED217"]["mean"]).dropna()
        short_rel, long_rel = float(rel[rel.index <= 10].mean()), float(rel[(rel.index >= 40) & (rel.index <= 80)].mean())
        bias = (short_rel, long_rel)
    short_worse = bool((f.loc[loaded, "short_delay"] > r.loc[loaded, "short_delay"]).mean() > 0.5)
    long_worse = bool((r.loc[loaded, "long_delay"] > f.loc[loaded, "long_delay"]).mean() > 0.5)
    claims = [
        Claim("7.4", "Fig 7.4", "useful throughput is the same for FPQ and RED217", "same",
              f"largest difference {thr_gap:.1%} (n ≥ 300)", thr_gap < 0.05, "criterion: within 5 %"),
        Claim("7.5", "Fig 7.5", "average transfer time is the same for FPQ and RED217", "same",
              f"largest difference {delay_gap:.1%} (n ≥ 300)", delay_gap < 0.15, "criterion: within 15 %"),
    ]
    if 661 in f.index:
        claims += [
            Claim("7.9a", "Fig 7.9, Sec. 7.3", "at 661 flows FPQ's loss is about 1 % and RED217's about 9 %", "≈ 1 % vs ≈ 9 %",
                  f"{f.loc[661, 'loss']:.1%} vs {r.loc[661, 'loss']:.1%}",
                  bool(0.005 <= f.loc[661, "loss"] <= 0.02 and 0.05 <= r.loc[661, "loss"] <= 0.13),
                  "criterion: FPQ 0.5 %–2 %, RED217 5 %–13 %",
                  note=f"RED217 loses {r.loc[661, 'loss']:.1%} here against the thesis's ≈ 9 % (its estimate: just under 2 losses "
                  "per 20-packet transfer at 600 flows). FPQ matches. We have not found the cause of RED217's higher loss; "
                  "candidates are ns-1.4's exact RED averaging (per-arrival EWMA with its idle decay) and Tahoe's behaviour "
                  "at windows of about 2, where every detail of dupack and timeout handling changes how many packets a "
                  "loss episode costs."),
            Claim("7.9b", "Fig 7.9", "about 80 % of FPQ's 20-packet transfers take almost exactly the fair time (a tight mode)",
                  "≈ 80 % clustered", f"{tight:.0%} within ±20 % of the median ({np.median(d20):.1f} s; fair {fair20:.1f} s)",
                  bool(tight >= 0.6), "criterion: ≥ 60 % within ±20 % of the median"),
        ]
    claims += [
        Claim("7.11", "Fig 7.11", "the 95th/5th percentile ratio of 20-packet transfers is higher for RED217 at most loads, and the gap widens",
              "RED217 higher; gap widens", f"higher at {ratio_higher:.0%} of loads; gap {gap.iloc[0]:.1f} → {gap.iloc[-1]:.1f}"
              if len(gap) else "no data", bool(ratio_higher > 0.5 and widens) if widens is not None else None,
              "criterion: higher at most loads and a larger gap at the largest load than at the smallest"),
        Claim("7.12", "Fig 7.12", "FPQ's ratio is substantially lower for 10- and 40-packet transfers too", "FPQ lower",
              "10 pkts: " + ", ".join(f"{a:.1f}/{b:.1f}" for a, b in zip(f["ratio_10"], r["ratio_10"]))
              + "; 40 pkts: " + ", ".join(f"{a:.1f}/{b:.1f}" for a, b in zip(f["ratio_40"], r["ratio_40"])) + " (FPQ/RED217)",
              bool((f["ratio_10"] < r["ratio_10"]).mean() > 0.5 and (f["ratio_40"] < r["ratio_40"]).mean() > 0.5),
              "criterion: FPQ lower at most loads for both sizes"),
        Claim("7.8", "Fig 7.8", "at 661 flows FPQ is biased in favour of long transfers compared with RED217",
              "FPQ relatively better for long transfers",
              f"FPQ/RED217 delay: {bias[0]:.2f} for ≤ 10 packets, {bias[1]:.2f} for 40–80 packets" if bias else "no data",
              (bias[1] < bias[0]) if bias else None, "criterion: the FPQ/RED217 delay ratio is lower for long transfers"),
        Claim("7.7", "Fig 7.7", "FPQ hurts short transfers (< 20 packets) more, RED217 long ones (≥ 20 packets)",
              "as stated", f"short slower under FPQ: {short_worse}; long slower under RED217: {long_worse} (n ≥ 300)",
              short_worse and long_worse, "criterion: both at most loads n ≥ 300"),
    ]
    return df, claims


EXPERIMENTS = [
    ("Single TCP under random loss (Sec. 5.1, Figs. 5.1–5.4)", single_flow),
    ("Drop-tail and random drop, 500 buffers, 10 ms (Sec. 5.2, Figs. 5.5–5.9)", tail_drop),
    ("RED parameter sweeps, 10 ms (Sec. 5.3.2, Figs. 5.11–5.16)", red_sweeps),
    ("FPQ validation up to 1,400 flows (Sec. 6.4, Figs. 6.5–6.7)", fpq_validation),
    ("t_clear sensitivity, 300 flows (Sec. 6.4, Figs. 6.8–6.10)", t_clear_sweep),
    ("Packets per flow at 500 flows (Sec. 7.1, Figs. 7.1–7.2)", ppf_sweep),
    ("FPQ against RED217, exponential transfers (Ch. 7, Figs. 7.4–7.12)", delay_analysis),
]


def reproduce(out: Path, *, quick: bool = False, workers: int | None = None, quiet: bool = False,
              only: list[str] | None = None) -> list[Claim]:
    """Runs the experiments, writes the figures, the tables (CSV) and `report.md` into `out`."""
    p = plan(quick, workers, quiet)
    out = ensure_dir(Path(out))
    timer = Timer()
    sections, claims = [], []
    for title, fn in EXPERIMENTS:
        if only and fn.__name__ not in only:
            continue
        t0 = Timer()
        df, cl = fn(p, out)
        df.drop(columns=[c for c in df.columns if c == "transfers"]).to_csv(out / f"{fn.__name__}.csv", index=False)
        sections.append((title, fn.__name__, df, cl, t0.minutes()))
        claims += cl
    write_report(out, p, sections, claims, timer.minutes())
    return claims


def write_report(out: Path, p: Plan, sections, claims: list[Claim], minutes: float) -> None:
    held = sum(c.holds is True for c in claims)
    failed = sum(c.holds is False for c in claims)
    lines = [
        "# Morris 1999, *Scalable TCP Congestion Control* — reproduction",
        "",
        f"Generated by `aqmlab repro fpq{' --quick' if p.quick else ''}`: {len(p.seeds)} seed(s) per point, "
        f"{p.duration_s:g} simulated s per run, statistics after a {p.warmup_s:g} s warm-up; wall time {wall_time(minutes)}.",
        "Set-up (spec seed004-fpq.md §3.6, §4): ns-1.4-like Tahoe, 576-byte packets, 64 KB windows, 0.5 s timer ticks,",
        "1 s minimum and 3 s initial RTO, delayed ACKs (2 segments, 0.2 s); 10 Mb/s bottleneck; access links of 100/N Mb/s",
        "with uniform 0–10 ms delay (0–1 ms for the 10 ms-RTT runs). Models: `aqmlab.models.fpq`.",
        "",
        f"**{held} of {len(claims)} claims hold, {failed} do not, {len(claims) - held - failed} shown without a verdict.**",
        "Each criterion was set from the thesis's wording before comparing; a claim that does not hold is reported as such.",
        "",
        "## Claims",
        "",
        claims_table(claims),
        "",
        "## Notes on the claims",
        "",
        claim_notes(claims),
        "",
    ]
    for title, name, df, cl, mins in sections:
        lines += [f"## {title}", "", f"Data: `{name}.csv`; {mins:.1f} min wall.", ""]
        lines += [f"![{FIGURES[name]}]({FIGURES[name]})", ""]
    (out / "report.md").write_text("\n".join(lines) + "\n")

