"""Does `ipctop ab` tell a real 5 % change from noise on this box?

    python bench/stat_power.py [--runs 20] [--cost 5] [-- AB-OPTIONS...]

First the think time that costs --cost % is worked out from the measured CPU
cost of a round (sysv-msg, 1 pair, same CPU). Pass `-- --metric cpu` to judge
rounds per CPU-second (what a shared box's stolen time does not move) rather
than ops/s. Then --runs A/A
comparisons (both sides the same setting) and --runs A/B comparisons (B adds
the think time), interleaved AA, AB, AB, AA, ... so the box's load falls on
both kinds alike, each a separate `ipctop ab` with its default settings. It
prints every run (verdict, B/A and interval, blocks, seconds) and the counts:
false regressions among the A/A runs (goal: at most 1 of 20, a 5 % false-alarm
rate) and detected regressions among the A/B runs (goal: at least 18 of 20).

Everything after `--` goes to every `ipctop ab` as it is, --max-seconds
included: each run stops at its precision or at --max-seconds (ab's default
120 s), so 2 x --runs x --max-seconds bounds the whole, 80 min for the default
20 runs (runs that reach ab's ±1 % end early: 52 min on the quiet box);
`-- --metric cpu --max-seconds 30` quarters it, at the price of wider
intervals. The bound is printed at the start.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ipctop.commands.ab import cpu_windows  # noqa: E402
from ipctop.engine.engine import Engine, RunConfig  # noqa: E402
from ipctop.live.measure import measure_engine  # noqa: E402


def cpu_rate(seconds: float = 3.0) -> float:
    """Rounds per CPU-second (sysv-msg, 1 pair, same CPU), as `ab --metric cpu` measures."""
    cpu = min(os.sched_getaffinity(0))
    with Engine(RunConfig(cpus=(cpu,))) as engine:
        engine.start(1)
        r = measure_engine(engine, seconds, 0.5, 0.5, detail=True)
    return statistics.median(cpu_windows(r))


def ab(a: str, b: str, extra: list[str], keep: Path | None = None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = keep if keep is not None else Path(tmp) / "ab.json"
        t0 = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "ipctop", "ab", "-q", "--a", a, "--b", b,
             "--json", str(out), *extra],
            cwd=ROOT, capture_output=True, text=True,
        )  # fmt: skip
        took = time.monotonic() - t0
        if done.returncode == 2 and "an interval needs at least 2" in done.stderr:
            # A box so loaded that --max-seconds held one block: no verdict, counted.
            nan = float("nan")
            return {"ratio": nan, "low": nan, "high": nan, "verdict": "too few blocks",
                    "blocks": 1, "seconds": took}  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"ipctop ab failed ({done.returncode}): {done.stderr.strip()}")
        rec = json.loads(out.read_text())
    res = rec["ab"]["result"]
    return {**res, "blocks": len(rec["ab"]["blocks"]), "seconds": took}


def max_seconds(extra: list[str]) -> float:
    """The --max-seconds passed through to ab (its default when none is)."""
    value = "120"
    for i, arg in enumerate(extra):
        if arg == "--max-seconds" and i + 1 < len(extra):
            value = extra[i + 1]
        elif arg.startswith("--max-seconds="):
            value = arg.split("=", 1)[1]
    try:
        return float(value)
    except ValueError:
        raise SystemExit(
            f"stat_power: --max-seconds {value!r} is not a number of seconds"
        ) from None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--cost", type=float, default=5.0, help="the planted slowdown, in %%")
    ap.add_argument(
        "--keep", metavar="DIR", type=Path,
        help="keep every ab record here (aa-N.json, ab-N.json), blocks and all",
    )  # fmt: skip
    ap.add_argument(
        "extra", nargs="*", help="after --: options passed to every ipctop ab (--max-seconds S)"
    )
    args = ap.parse_args()
    cap = max_seconds(args.extra)  # before anything runs: a typo costs no minutes
    rate = cpu_rate()
    # A round's CPU cost is 1 / rate; the think time adds to it: about 1.3 x T
    # per round at sysv-msg for T near 250 ns (a spin this short costs ~70 ns
    # beyond itself; measured from the ends' run time once --think-ns corrected
    # its spin count while running), so T = cost x (1 / rate) / 1.3.
    think = round(args.cost / 100 / rate / 1.3 * 1e9)
    print(f"# box: {os.cpu_count()} CPUs, allowed {len(os.sched_getaffinity(0))}, "
          f"load average {os.getloadavg()[0]:.1f} at start")  # fmt: skip
    print(f"# {rate:,.0f} rounds per CPU-second -> --think-ns {think} for about {args.cost:g} %")
    print(f"# each run stops at its precision or --max-seconds {cap:g}: at most "
          f"{2 * args.runs * cap / 60:.0f} min for {2 * args.runs} runs")  # fmt: skip
    print(
        f"# every run: ipctop ab -q --a '--think-ns 0' --b '--think-ns 0 or {think}' "
        f"{' '.join(args.extra)}"
    )
    plan = []
    for i in range(args.runs):
        plan += [("A/A", "--think-ns 0"), ("A/B", f"--think-ns {think}")][:: 1 if i % 2 else -1]
    rows: dict[str, list[dict]] = {"A/A": [], "A/B": []}
    print(f"{'kind':4}  {'#':>2}  {'B/A [%]':>8}  {'95% interval':>16}  {'blocks':>6}  "
          f"{'s':>5}  verdict")  # fmt: skip
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    for kind, b in plan:
        name = f"{kind.replace('/', '').lower()}-{len(rows[kind]) + 1}.json"
        r = ab("--think-ns 0", b, args.extra, args.keep / name if args.keep else None)
        rows[kind].append(r)
        lo, hi = 100 * (r["low"] - 1), 100 * (r["high"] - 1)
        print(f"{kind:4}  {len(rows[kind]):>2}  {100 * (r['ratio'] - 1):>+8.1f}  "
              f"{f'[{lo:+.1f}, {hi:+.1f}]':>16}  {r['blocks']:>6}  {r['seconds']:>5.1f}  "
              f"{r['verdict']}", flush=True)  # fmt: skip
    aa, abr = rows["A/A"], rows["A/B"]
    false = sum(r["verdict"] == "regression" for r in aa)
    other = sum(r["verdict"] == "improvement" for r in aa)
    hits = sum(r["verdict"] == "regression" for r in abr)
    judged = [r for r in abr if r["verdict"] != "too few blocks"]
    mean_cost = statistics.median(100 * (1 - r["ratio"]) for r in judged) if judged else 0.0
    short = sum(r["verdict"] == "too few blocks" for r in aa + abr)
    if short:
        print(f"# {short} run(s) had too few blocks for an interval (counted, not detected)")
    print(f"# load average {os.getloadavg()[0]:.1f} at the end")
    print(f"A/A: {false} of {len(aa)} called a regression ({other} an improvement); "
          f"median {statistics.median(r['seconds'] for r in aa):.0f} s each")  # fmt: skip
    print(
        f"A/B (--think-ns {think}, measured cost {mean_cost:.1f} %): {hits} of {len(abr)} "
        f"detected; median {statistics.median(r['seconds'] for r in abr):.0f} s each"
    )


if __name__ == "__main__":
    main()
