#!/usr/bin/env python3
"""bench/observer.py's figures with the run as the replicate: one value per run.

Each run of observer.py (its --json file) gives one estimate per figure: the
window pairs' tui/headless ratio (stats.paired_difference's estimate) and the
geometric mean of the idle app's and the drawing windows' CPU. Windows of one
run share its session (the host's state, the objects' placement), so what
holds across sessions is judged on the runs: here n is the number of runs,
and the interval is the t interval on their logs (stats.summarize, unit
"runs"). Issue 29's goals are judged on it as observer.py judges its windows.

    python bench/observer_runs.py RUN.json RUN.json ... [--threads 2048]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from observer import cap_pct, verdict, window_blocks  # noqa: E402

from ipctop.analysis.stats import RUNS, Summary, geomean, paired_difference, summarize  # noqa: E402


def run_figures(path: Path, threads: int) -> dict[str, float] | None:
    """One run's estimates at `threads`, or None when the file has no such run."""
    data = json.loads(path.read_text())
    for run in data["runs"]:
        if run["threads"] != threads:
            continue
        windows = run["windows"]
        idle = [w["monitor_cpu_pct"] for w in windows if not w["drawing"]]
        drawing = [w["monitor_cpu_pct"] for w in windows if w["drawing"]]
        return {
            "ratio": paired_difference(window_blocks(windows)).ratio,
            "idle": geomean(idle),
            "drawing": geomean(drawing),
            "pairs": len(window_blocks(windows)),
        }
    return None


def run_verdict(s: Summary, goal: float, above: bool) -> str:
    if s.low is None or s.high is None:
        return "not shown (one run)"
    return verdict(s.low, s.high, goal, above)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path, help="observer.py --json files, one per run")
    ap.add_argument("--threads", type=int, default=2048)
    args = ap.parse_args()
    rows = []
    for path in args.runs:
        figures = run_figures(path, args.threads)
        if figures is None:
            print(f"observer_runs: {path} has no run at {args.threads} threads", file=sys.stderr)
            return 2
        rows.append(figures)
        print(
            f"{path.name}: tui/headless {figures['ratio']:.3f}, idle app {figures['idle']:.2f} %,"
            f" drawing {figures['drawing']:.2f} % ({figures['pairs']:.0f} window pairs)"
        )
    cap = cap_pct(args.threads)
    print(f"# unit: a run, n={len(rows)}; geometric mean [95 % t interval on the runs' logs]")
    for name, unit, goal, above in (
        ("ratio", "", 0.98, True),
        ("idle", " %", None, False),
        ("drawing", " %", cap, False),
    ):
        s = summarize([r[name] for r in rows], unit=RUNS)
        ci = f" [{s.low:.3f}, {s.high:.3f}]" if s.low is not None and s.high is not None else ""
        judged = (
            f"  goal {'>=' if above else '<='} {goal:g}: {run_verdict(s, goal, above)}"
            if goal
            else ""
        )
        print(f"{name:8} {s.figure:.3f}{unit}{ci} n={s.n}{judged}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
