"""Which rule for a short window series' interval covers 95 %? Candidates side by side.

The TUI's interval of n windows takes r from the session's longer series
(SeriesMemory) and a df for s^2 under AR(1). Every candidate here is judged on
the same planted series (AR(1) log rates, marginal s.d. 5 %, 200 earlier
windows for the session's r), so their differences are not seed noise:

  r:  true      the planted r (what no user has; the rule's own error)
      point     SeriesMemory's bias-corrected estimate (the TUI's since issue 23)
      upper     the same, one standard error high (the TUI's before)
      own       the windows' own estimate_r (one standard error high), the prior
                below 10 windows: what summarize does without a session's r
  df: max       max(n - f, Satterthwaite) up to 32 values, n - f above (before)
      satt      Satterthwaite's moment match of s^2 at every n (mean_se's since)
      exact     the df that make the interval exact for a Gaussian AR(1) of that r
                (bench/ar1_exact.py, Imhof's integral)

Usage: python bench/window_df_rules.py [--trials 2000] [--seed 1] [--history 200]
Pure arithmetic: the box's load does not matter, but it is CPU-heavy (about a
minute a seed at 2,000 trials a cell).
"""

from __future__ import annotations

import argparse
import functools
import math
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ar1_exact  # noqa: E402  (beside this script)
from calibrate import ar1  # noqa: E402  (beside this script)

from ipctop.analysis import autocorr  # noqa: E402
from ipctop.analysis.stats import t_quantile  # noqa: E402

RS = (0.0, 0.5, 0.77, 0.9)
NS = (6, 8, 10, 12, 16, 20, 30, 40)
R_RULES = ("true", "point", "upper", "own")
DF_RULES = ("max", "satt", "exact")
HISTORY = 200
exact_df = functools.lru_cache(maxsize=None)(ar1_exact.exact_df)


def session_r(history: list[float]) -> tuple[float, float]:
    """(point, upper): SeriesMemory's estimate of one segment, without and with the margin."""
    memory = autocorr.SeriesMemory()
    for v in history:
        memory.add(v)
    point = memory.point_r()
    if point is None:
        raise SystemExit("the session history is too short for an r")
    raw, n = point
    return min(max(raw, 0.0), autocorr.R_MAX), autocorr.upper_r(raw, n)


def covers(xs: list[float], r: float, df_rule: str) -> bool:
    n = len(xs)
    r = min(max(r, 0.0), autocorr.R_MAX)
    f = autocorr.ar1_factor(n, r)
    var_mean = statistics.variance(xs) * (n - 1) / max(n - f, 0.05) * f / n
    satt = autocorr.satterthwaite_df(n, round(r, 2))
    if df_rule == "max":
        df = max(n - f, satt if n <= 32 else 0.0, 0.5)
    elif df_rule == "satt":
        df = max(satt, 0.5)
    else:
        df = max(exact_df(n, round(r, 2)), 0.5)
    half = t_quantile(df, 0.95) * math.sqrt(var_mean)
    return abs(statistics.fmean(xs)) <= half  # the planted mean is 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--history", type=int, default=HISTORY, help="the session's earlier windows")
    ap.add_argument("--own", action="store_true", help="also the windows' own r (slow)")
    ap.add_argument("--rs", default=",".join(map(str, RS)), help="the lag-1 r of the cells")
    ap.add_argument("--ns", default=",".join(map(str, NS)), help="the window counts")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    r_rules = R_RULES if args.own else R_RULES[:-1]
    rules = [(a, b) for a in r_rules for b in DF_RULES]
    print(
        f"coverage of the nominal 95 %, {args.trials} trials a cell, seed {args.seed}, "
        f"session r from {args.history} earlier windows"
    )
    print("r     n   " + "  ".join(f"{a}/{b:>5}" for a, b in rules))
    for r in [float(x) for x in args.rs.split(",")]:
        for n in [int(x) for x in args.ns.split(",")]:
            hits = dict.fromkeys(rules, 0)
            for _ in range(args.trials):
                point, upper = session_r(ar1(args.history, r, 0.05, rng))
                xs = ar1(n, r, 0.05, rng)
                own = autocorr.estimate_r(xs)
                chosen = {"true": r, "point": point, "upper": upper}
                chosen["own"] = autocorr.R_PRIOR if own is None else own
                for rule in rules:
                    hits[rule] += covers(xs, chosen[rule[0]], rule[1])
            cells = "  ".join(
                f"{100 * hits[rule] / args.trials:{len(rule[0]) + 6}.1f}" for rule in rules
            )
            print(f"{r:<5} {n:<3} {cells}", flush=True)


if __name__ == "__main__":
    main()
