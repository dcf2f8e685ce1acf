"""The numbers of Lee 2002 (WHITE) that `aqmlab repro white` compares with (spec `seed001-white.md` §5):
drop rates, total goodputs, JFIs and min/max goodputs as the thesis prints them (or as the spec reads
them), and the per-flow spreads of RED the calibration fits."""

from __future__ import annotations

# The thesis's numbers (spec §5): drop % and total goodput (Figs. 5.8, 6.7).
THESIS_DROP = {"red": dict(exp1=1.85, exp2=2.85, exp3=1.45, exp4=3.61, exp5=2.90, exp6=2.60),
               "chardonnay": dict(exp1=1.80, exp2=2.70, exp3=1.46, exp4=3.59, exp5=2.56, exp6=2.49),
               "chablis": dict(exp1=0.0, exp2=0.0, exp3=0.0, exp4=0.007, exp5=0.002, exp6=0.003)}
THESIS_GOODPUT = {"red": dict(exp1=9.65, exp2=9.94, exp3=9.65, exp4=9.97, exp5=9.73, exp6=9.64),
                  "chardonnay": dict(exp1=9.59, exp2=9.91, exp3=9.67, exp4=9.96, exp5=9.76, exp6=9.69),
                  "chablis": dict(exp1=9.65, exp2=9.98, exp3=9.78, exp4=9.96, exp5=9.85, exp6=9.82)}
# Fig. 5.9 / 6.8 JFI, static (Exp 2 RED is impossible as printed: spec §5.6 item 2).
THESIS_JFI = {"red": dict(exp1=0.785, exp2=float("nan"), exp3=0.930, exp4=0.982),
              "fred": dict(exp1=0.828, exp2=0.867, exp3=0.788, exp4=0.992),
              "csfq": dict(exp1=0.781, exp2=0.796, exp3=0.860, exp4=0.977),
              "drr": dict(exp1=0.927, exp2=0.975, exp3=0.984, exp4=0.991),
              "chardonnay": dict(exp1=0.982, exp2=0.993, exp3=0.985, exp4=0.991),
              "chablis": dict(exp1=0.994, exp2=0.994, exp3=0.993, exp4=0.997)}
# Dynamic JFI with the Exp 5/6 column groups swapped (spec §5.6 item 1; Chablis as printed).
THESIS_JFI_DYN = {
    "red": dict(exp5=(0.844, 0.885, 0.812, 0.931), exp6=(0.680, 0.769, 0.654, 0.867)),
    "fred": dict(exp5=(0.883, 0.900, 0.801, 0.930), exp6=(0.738, 0.823, 0.642, 0.867)),
    "csfq": dict(exp5=(0.915, 0.734, 0.965, 0.986), exp6=(0.740, 0.647, 0.641, 0.610)),
    "drr": dict(exp5=(0.962, 0.972, 0.985, 0.977), exp6=(0.880, 0.933, 0.960, 0.970)),
    "chardonnay": dict(exp5=(0.971, 0.976, 0.970, 0.948), exp6=(0.888, 0.959, 0.903, 0.915)),
    "chablis": dict(exp5=(0.904, 0.987, 0.965, 0.993), exp6=(0.990, 0.988, 0.986, 0.992)),
}

# Min/max cluster goodputs of RED in Exps 5–6 (Fig. 5.10; the labels of these tables are right, spec §5.4).
THESIS_MINMAX_DYN = {"red": {"exp5": {"A": (1.76, 4.78), "B": (3.26, 6.48), "C": (2.61, 7.01), "D": (3.81, 5.86)},
                             "exp6": {"A": (0.68, 5.87), "B": (2.25, 7.60), "C": (1.45, 8.26), "D": (3.13, 6.57)}}}

# RED's per-flow spreads as the thesis reports them (spec §5.5 prose and the Exp 2 table), Mb/s: Exp 1's
# most robust and most fragile flow, Exp 2's robust and fragile cluster aggregates, Exp 3's lone robust
# flow, Exp 4's lone fragile flow. Calibration targets beside the drop rates and JFIs.
THESIS_RED_SPREAD = {("exp1", "max"): 0.79, ("exp1", "min"): 0.15, ("exp2", "robust"): 6.0,
                     ("exp2", "fragile"): 1.5, ("exp3", "robust"): 0.85, ("exp4", "fragile"): 0.16}
