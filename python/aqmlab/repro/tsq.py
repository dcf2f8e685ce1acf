"""`aqmlab repro tsq`: A. Kumar, *Traffic Sensitive Quality of Service Controller* (WPI MS thesis,
2003), rerun: TSQ over PI against PI alone on E1–E5 of ch. 5 (spec ``seed002-tsq.md`` §4–5).

* E1 (Sec. 5.2): 99 FTP + 1 audio (128 Kb/s) at 15 Mb/s, audio hint 1–16, and PI alone;
* E2 (Sec. 5.3): 19 FTP + 1 video (500 Kb/s) at 4 Mb/s, video hint 1–16, and PI alone;
* E3 (Sec. 5.4): 1/25/50/75 audio flows (hint 6) of 100, TSQ on and off;
* E4 (Sec. 5.5.2): 99 FTP + 1 UDP flow at 600 Kb/s, UDP hint 1–16, and PI alone;
* E5 (Sec. 5.5.3): 1/25/50/75 UDP audio flows (hint 6) of 100, TSQ on and off;
* sensitivity of the E1/E2 optimum to the source model of the "TCP-friendly CBR" flows (TCP driven
  by a CBR application, the default, vs plain UDP CBR and vs a CBR application over application-limited
  TFRC), and two ablations: l = 300 ms on E1 (the true propagation RTT, spec §5.8) and q′ = target
  delay (A2) on E3; and the spec's "thesis-like" variant (§4.3): E1 and E3 again with no warm-up
  discarded (a report section, no claim).

Quality per flow and run (spec §3.6): Q = min(Q_d(mean one-way delay), Q_t(mean throughput)) with the
thesis's functions (``aqmlab.models.tsq_quality``); throughput counts 1000-B packets (wire bits of
the delivered data, after the 20-s warm-up). Normalised quality = class mean with TSQ ÷ class mean with
PI alone, same seed, then averaged over seeds. The thesis plots single runs; we average several seeds
and show the spread. The claims are the qualitative statements of §5 plus the numbers of Ch. 7;
every criterion is stated in the table, and every ordering a claim depends on is tested against the
seeds' noise (``common.clearly_greater``): within the noise the verdict is "within noise", not "holds".

Full run: 10 seeds by default (`--seeds`; the spec asks for at least 5). `--quick`: one seed, 40-s runs,
hints 1, 3, 6, 10, 16 (no sensitivity sweep, no ablations, no no-warm-up variant).

The pieces: ``tsq_scenarios`` (the scenarios of E1–E5), ``tsq_runs`` (plan and runs), ``tsq_metrics``
(what every run reports), ``tsq_summaries`` and ``tsq_cdfs`` (over seeds; the CDFs' data), ``tsq_claims``,
``tsq_figures`` and ``tsq_report``.
"""

from __future__ import annotations

from pathlib import Path

from .common import Claim, Timer, ensure_dir
from .tsq_cdfs import cdf_quantiles
from .tsq_claims import claims
from .tsq_figures import draw_figures
from .tsq_report import write_report
from .tsq_runs import plan, run_all


def reproduce(out: Path, *, quick: bool = False, seeds: int | None = None, duration_s: float | None = None,
              workers: int | None = None, quiet: bool = False) -> list[Claim]:
    out = ensure_dir(Path(out))
    p = plan(quick, seeds, duration_s, workers, quiet)
    timer = Timer()
    r = run_all(p)
    cl, info = claims(r, p)
    figs = draw_figures(r, info, out)
    scalar = lambda df: df.drop(  # noqa: E731
        columns=[c for c in df.columns if c.endswith(("_samples_ms", "_windows_kbps"))])
    for k, df in r.items():
        scalar(df).to_csv(out / f"{k}.csv", index=False)
    cdf_quantiles(r).to_csv(out / "cdf_quantiles.csv", index=False, float_format="%.6g")
    write_report(out, p, cl, info, figs, timer)
    return cl


__all__ = ["reproduce"]
