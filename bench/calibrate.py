"""Does a "95 %" interval cover 95 % of the time, and does an A/A call a change 5 % of the time?

Modes:
  simulate  planted AR(1) log rates through ipctop's own functions: coverage of
            window intervals (session r from a longer series, as the TUI has it),
            of run intervals, Stein-stopped ab blocks, Holm over many points.
  compare   real A/A: pairs of separate `ipctop sweep` sessions at default
            settings, then `ipctop compare --json` as a user runs it (no
            --session-sd); false verdicts counted. Before the trials, `ipctop
            sweep --sessions K` runs once and
            stores the box's spread in a state folder of this run's own, so
            every compare finds it itself: the automatic path is what is
            counted, and a compare that did not use it stops the run
            (--spread sweep, the default since 12-06: `sweep --sessions K` at
            the same CPUs; compare uses a spread only for its own CPUs). With
            --spread none nothing is stored and compare must decline every
            verdict (counted as not judged). A leave-one-trial-out
            --session-sd pass follows as before (3+ trials).
  ab        real A/A: `ipctop ab` with identical sides at default settings.
  check     real A/A: `ipctop check --record F` at default settings; its noise
            floor splits the 1-pair sysv-msg run's windows into A B B A halves,
            and a call is that paired interval excluding 0.
  rejudge   the session pass and the TUI's baseline Diff again, on the A/A
            records an earlier `compare --keep DIR` kept (no new runs).
  stored    the kept A/A records (--keep DIR, several folders joined by commas)
            compared again as a user does, each trial with a spread stored from
            --sessions K other sessions of the same records (their 1-pair runs,
            as `sweep --sessions K` measures): the stored path on real sessions.

Every rate is printed with its count and a Clopper-Pearson 95 % interval.
Run the real modes on a quiet box (nothing else running) and give the load average.
"""

from __future__ import annotations

import argparse
import atexit
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from scipy.stats import beta

from ipctop.analysis.autocorr import SeriesMemory
from ipctop.analysis.check_curve import aa_blocks
from ipctop.analysis.point_diff import point_difference
from ipctop.analysis.scaling import ScalingPoint
from ipctop.analysis.sessions import session_spread
from ipctop.analysis.stats import (
    NO_DIFFERENCE,
    RUNS,
    difference,
    holm,
    paired_difference,
    summarize,
)
from ipctop.analysis.stopping import SteinStop
from ipctop.live.baseline import load_baseline


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    lo = 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k))
    return lo, hi


def rate_line(what: str, k: int, n: int, seconds: float | None = None) -> str:
    lo, hi = clopper_pearson(k, n)
    took = f", {seconds:.0f} s" if seconds is not None else ""
    return f"{what}: {k}/{n} = {100 * k / n:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]{took}"


def ar1(n: int, r: float, sd: float, rng: random.Random) -> list[float]:
    """n log values of a stationary AR(1) with lag-1 r and marginal s.d. sd."""
    x = rng.gauss(0.0, sd)
    out = [x]
    innov = sd * math.sqrt(1.0 - r * r)
    for _ in range(n - 1):
        x = r * x + rng.gauss(0.0, innov)
        out.append(x)
    return out


def rates(logs: list[float], level: float = 1e6) -> list[float]:
    return [level * math.exp(v) for v in logs]


def window_coverage(r: float, n: int, trials: int, rng: random.Random) -> float:
    """Coverage of the TUI's interval: r from the session's longer series, n windows."""
    hits = 0
    for _ in range(trials):
        memory = SeriesMemory()
        for v in ar1(200, r, 0.05, rng):  # earlier pair counts of the same session
            memory.add(v)
        memory.new_segment()
        s = summarize(rates(ar1(n, r, 0.05, rng)), r=memory.r_or_prior())
        hits += s.low <= 1e6 <= s.high
    return hits / trials


def run_coverage(runs: int, run_sd: float, trials: int, rng: random.Random) -> float:
    hits = 0
    for _ in range(trials):
        totals = []
        for _ in range(runs):
            offset = rng.gauss(0.0, run_sd)
            totals.append(sum(rates([offset + v for v in ar1(10, 0.77, 0.03, rng)])) / 10)
        s = summarize(totals, unit=RUNS)
        # The truth: the mean over runs of the run-level mean rate.
        truth = 1e6 * math.exp(run_sd**2 / 2 + 0.03**2 / 2)
        hits += s.low <= truth <= s.high
    return hits / trials


# ab's 120 s fit 41 ABBA blocks of 0.5 s slots on this box: the time limit.
AB_MAX_BLOCKS = 41


def ab_false_rate(
    block_sd: float, precision_pct: float, trials: int, rng: random.Random, wild: float = 0.0
) -> float:
    """ab's stop rule (Stein's pilot, then the interval it reports) on A/A blocks;
    with `wild`, that share of blocks has ten times the s.d. (a regime change
    inside a block, as real runs of this VM showed), which the pilot may miss."""
    calls = 0
    for _ in range(trials):
        stop = SteinStop(precision_pct)
        blocks: list[tuple[list[float], list[float]]] = []
        while not stop.done(blocks) and len(blocks) < AB_MAX_BLOCKS:
            sd = block_sd * (10.0 if rng.random() < wild else 1.0)
            blocks.append(([1e6], [1e6 * math.exp(rng.gauss(0.0, sd))]))
        calls += stop.difference(blocks).verdict != "no difference shown"
    return calls / trials


def holm_family_rate(points: int, trials: int, rng: random.Random) -> tuple[float, float]:
    """A/A over `points` points of 3 runs a side: any point called, without and with Holm."""
    raw = adj = 0
    for _ in range(trials):
        ps = []
        for _ in range(points):
            a = [1e6 * math.exp(rng.gauss(0, 0.03)) for _ in range(3)]
            b = [1e6 * math.exp(rng.gauss(0, 0.03)) for _ in range(3)]
            ps.append(difference(a, b, unit=RUNS).p_value)
        raw += any(p < 0.05 for p in ps)
        adj += any(p < 0.05 for p in holm(ps))
    return raw / trials, adj / trials


# Issue 23's cells: from the 6 windows (3 s) that settle a TUI point, to 40.
WINDOW_NS = (6, 8, 10, 12, 16, 20, 30, 40)


def simulate(trials: int, seed: int, windows_only: bool = False) -> None:
    rng = random.Random(seed)
    print(f"simulation, {trials} trials a cell, seed {seed}")
    print("window intervals (session r from 200 earlier windows): coverage of nominal 95 %")
    for r in (0.0, 0.5, 0.77, 0.9):
        # Cell by cell as each ends: a run cut short still leaves its figures.
        print(f"  r={r}: ", end="", flush=True)
        for i, n in enumerate(WINDOW_NS):
            cell = f"n={n}: {100 * window_coverage(r, n, trials, rng):.1f} %"
            print(cell if i == 0 else ", " + cell, end="", flush=True)
        print()
    if windows_only:
        return
    print("run intervals (run offsets s.d. 3 %, 10 windows a run at r 0.77):")
    for runs in (3, 5, 10):
        print(f"  {runs} runs: {100 * run_coverage(runs, 0.03, trials, rng):.1f} %")
    print(f"ab's stop rule (6 pilot blocks, at most {AB_MAX_BLOCKS}), A/A false-verdict rate:")
    for wild in (0.0, 0.1):
        for sd in (0.01, 0.02, 0.05):
            for prec in (1.0, 2.0):
                k = round(ab_false_rate(sd, prec, trials, rng, wild) * trials)
                what = f"block s.d. {100 * sd:.0f} %{', 1 in 10 blocks x10' if wild else ''}"
                print("  " + rate_line(f"{what}, ±{prec:.0f} %", k, trials))
    raw, adj = holm_family_rate(6, trials, rng)
    print(
        f"6 points of 3 runs a side, A/A, any point called: {100 * raw:.1f} % raw, "
        f"{100 * adj:.1f} % with Holm"
    )


# The state folder every ipctop this script starts uses (XDG_STATE_HOME): the
# spread it stores is the one its compares find, and the user's own is never
# read or overwritten.
STATE_ENV: dict[str, str] = {}


def _ipctop(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ipctop", *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **STATE_ENV},
    )


def store_spread(cpus: str, sessions: int, quick: bool, how: str, workload: str) -> None:
    """`ipctop sweep --sessions K` (or `check --sessions K`) once: the box's spread,
    stored where compare looks. compare uses a stored spread only for the CPUs it was
    measured on, and check measures one CPU: the sweep's is the one a 0-1 compare finds."""
    t0 = time.monotonic()
    if how == "sweep":
        short = ["--seconds", "0.5", "--warmup", "0.2", "--repeat", "2", "--max-pairs", "1"]
        with tempfile.TemporaryDirectory() as tmp:
            p = _ipctop(
                "sweep", "-w", workload, "--cpus", cpus, "--sessions", str(sessions),
                "--json", os.path.join(tmp, "sessions.json"), *(short if quick else []),
            )  # fmt: skip
    else:
        p = _ipctop("check", "--sessions", str(sessions), "--cpus", cpus, *(["--quick"] * quick))
    if p.returncode not in (0, 1):  # 1: a check line failed; the sessions still ran
        raise SystemExit(f"{how} --sessions failed: {p.stderr.strip()}")
    line = next((ln.strip() for ln in p.stdout.splitlines() if "session spread:" in ln), "")
    took = time.monotonic() - t0
    print(f"{how} --sessions {sessions} ({took:.0f} s): {line or p.stdout[-300:]}", flush=True)


def real_aa(
    label: str,
    trials: int,
    one: Callable[[str, int], tuple[int, int, int]],
    out: str | None,
    keep: str | None = None,
    after: Callable[[str, int], None] | None = None,
    start: int = 0,
) -> None:
    t0 = time.monotonic()
    called = judged = 0
    failed = 0
    with tempfile.TemporaryDirectory() as scratch:
        tmp = keep or scratch
        os.makedirs(tmp, exist_ok=True)
        for i in range(start, start + trials):
            c, j, gate = one(tmp, i)
            called += c
            judged += j
            failed += gate
            print(
                f"  trial {i + 1}: {c} of {j} judged called, gate {'failed' if gate else 'held'}",
                flush=True,
            )
        took = time.monotonic() - t0
        print(rate_line(f"{label}: points called", called, max(judged, 1)))
        print(
            rate_line(
                f"{label}: comparisons with any verdict or a failed gate", failed, trials, took
            )
        )
        if after is not None:
            after(tmp, start + trials)  # the kept trials before --start count too
    print(f"load average at the end: {os.getloadavg()}")
    if out:
        with open(out, "a") as f:
            f.write(
                json.dumps(
                    {
                        "mode": label,
                        "called": called,
                        "judged": judged,
                        "failed": failed,
                        "trials": trials,
                        "seconds": took,
                    }
                )
                + "\n"
            )


def compare_trial(
    workload: str, cpus: str, fail_below: float, stored: bool, sweep_args: list[str]
) -> Callable[[str, int], tuple]:
    """One A/A: two separate sweeps, then compare as a user runs it. With a stored
    spread, a compare that did not use it (or judged nothing) stops the run: the
    count must be of the automatic path. Without one, every point must be unjudged
    and the gate must exit 5; such a comparison counts as no verdict."""

    def one(tmp: str, i: int) -> tuple[int, int, int]:
        paths = []
        for side in ("a", "b"):
            path = os.path.join(tmp, f"{i}{side}.json")
            for _attempt in range(3):  # a pair that could not start on a loaded box: again
                p = _ipctop("sweep", "-w", workload, "--cpus", cpus, *sweep_args, "--json", path)
                if p.returncode == 0:
                    break
                print(f"  sweep failed, again: {p.stderr.strip().splitlines()[-1]}", flush=True)
            else:
                raise SystemExit(f"sweep failed 3 times: {p.stderr.strip()}")
            paths.append(path)
        p = _ipctop("compare", *paths, "--json", "-", "--fail-below", str(fail_below))
        doc = json.loads(p.stdout[p.stdout.index("{") :])
        source = doc.get("session_sd_source") or ""
        if stored and (not doc["judged"] or "--sessions on" not in source):
            raise SystemExit(f"trial {i + 1}: compare did not use the stored spread: {doc}")
        if not stored and (doc["judged"] or p.returncode not in (0, 5)):
            raise SystemExit(f"trial {i + 1}: compare judged without a spread: {doc}")
        print(f"    {source or doc['not_judged']} (exit {p.returncode})", flush=True)
        verdicts = doc["points"]  # one entry per (pair count, side after the first)
        called = sum(c["verdict"] in ("regression", "improvement") for c in verdicts)
        judged = sum(bool(c["judged"]) for c in verdicts)
        return called, judged, int(called > 0 or p.returncode == 1)

    return one


def _repeats(path: str) -> dict[int, list[float]]:
    """Per pair count, the run totals one sweep record (one session) kept."""
    with open(path) as f:
        doc = json.load(f)
    return {int(st["pairs"]): [float(x) for x in st["repeats"]] for st in doc["steps"]}


def session_pass(fail_below: float) -> Callable[[str, int], None]:
    """The same A/A records compared again with --session-sd, each trial's spread
    estimated from the other trials' sessions only (leave one trial out), so no
    comparison is judged with a spread its own two sessions helped to make."""

    def after(tmp: str, trials: int) -> None:
        sessions = {
            (i, side): _repeats(os.path.join(tmp, f"{i}{side}.json"))
            for i in range(trials)
            for side in "ab"
        }
        called = judged = failed = 0
        sds = []
        for i in range(trials):
            others = [v for (j, _), v in sessions.items() if j != i]
            per_point = [
                session_spread([o[pairs] for o in others if pairs in o]).session_sd_pct
                for pairs in sorted(sessions[(i, "a")])
            ]
            sd = max(per_point)  # compare, too, takes the widest spread it is given
            sds.append(sd)
            paths = [os.path.join(tmp, f"{i}{side}.json") for side in "ab"]
            p = _ipctop(
                "compare", *paths, "--json", "-", "--fail-below", str(fail_below),
                "--session-sd", f"{sd:.2f}",
            )  # fmt: skip
            doc = json.loads(p.stdout[p.stdout.index("{") :])
            c = sum(x["verdict"] in ("regression", "improvement") for x in doc["points"])
            called += c
            judged += len(doc["points"])
            failed += int(c > 0 or p.returncode == 1)
        # The TUI's baseline Diff and presentation verdict judge one live run
        # against a baseline's runs (analysis/point_diff.py): here the baseline
        # is side A's sweep and the live run is B's first run, a separate session;
        # as the TUI does with a baseline record that measured no session spread
        # (the runs' spread stands in), and with one that did (the trial's
        # leave-one-out spread, as the record of `check --sessions` would give).
        # And as the TUI runs it (live/baseline.py): the spread `check --sessions`
        # stored for this box, found in the same state folder compare read.
        os.environ.update(STATE_ENV)
        tui = stand_in = measured = stored = 0
        stored_sd: set[str] = set()
        for i in range(trials):
            a, b = sessions[(i, "a")], sessions[(i, "b")]
            baseline = load_baseline(os.path.join(tmp, f"{i}a.json"))
            if baseline.session_sd_pct is not None:
                stored_sd.add(f"{baseline.session_sd_pct:.2f} % (df {baseline.session_df:g})")
            for pairs in sorted(set(a) & set(b)):
                base = ScalingPoint.from_repeats(pairs, a[pairs])
                live = ScalingPoint.from_repeats(pairs, b[pairs][:1])
                tui += 1
                stand_in += point_difference(base, live).verdict != NO_DIFFERENCE
                d = point_difference(base, live, session_sd_pct=sds[i])
                measured += d.verdict != NO_DIFFERENCE
                stored += baseline.difference(base, live).verdict != NO_DIFFERENCE
        what = "TUI baseline Diff (one new run vs 3 baseline runs)"
        print(rate_line(f"{what}, session spread unmeasured: points called", stand_in, tui))
        print(rate_line(f"{what}, leave-one-out session spread: points called", measured, tui))
        if stored_sd:
            label = f"stored spread {', '.join(sorted(stored_sd))}"
            print(rate_line(f"{what}, as the TUI runs it ({label}): points called", stored, tui))
            # What compare, run as a user runs it, says it could have seen (issue 23's power).
            small = []
            for i in range(trials):
                paths = [os.path.join(tmp, f"{i}{side}.json") for side in "ab"]
                p = _ipctop("compare", *paths, "--json", "-")
                doc = json.loads(p.stdout[p.stdout.index("{") :])
                if doc.get("smallest_change_pct") is not None:
                    small.append(float(doc["smallest_change_pct"]))
            if small:
                small.sort()
                print(
                    f"compare's smallest change it can show (stored spread), {len(small)} "
                    f"comparisons: median ±{small[len(small) // 2]:.1f} %, "
                    f"{small[0]:.1f} .. {small[-1]:.1f} %"
                )
        label = (
            f"with --session-sd (leave-one-trial-out, {min(sds):.1f}-{max(sds):.1f} %, "
            f"from {2 * (trials - 1)} sessions each)"
        )
        print(rate_line(f"{label}: points called", called, max(judged, 1)))
        print(rate_line(f"{label}: comparisons with any verdict or a failed gate", failed, trials))

    return after


def ab_trial(metric: str | None) -> Callable[[str, int], tuple]:
    def one(tmp: str, i: int) -> tuple[int, int, int]:
        path = os.path.join(tmp, f"ab{i}.json")
        args = ["ab", "--json", path] + (["--metric", metric] if metric else [])
        p = _ipctop(*args)
        if p.returncode not in (0, 1):
            raise SystemExit(f"ab failed: {p.stderr.strip()}")
        with open(path) as f:
            verdict = json.load(f)["ab"]["result"]["verdict"]
        c = int(verdict in ("regression", "improvement"))
        return c, 1, c

    return one


def check_trial() -> Callable[[str, int], tuple]:
    def one(tmp: str, i: int) -> tuple[int, int, int]:
        path = os.path.join(tmp, f"check{i}.json")
        p = _ipctop("check", "--record", path)
        if p.returncode not in (0, 1):
            raise SystemExit(f"check failed: {p.stderr.strip()}")
        with open(path) as f:
            doc = json.load(f)
        one_pair = doc["steps"][0]  # the 1-pair sysv-msg run the noise floor splits
        d = paired_difference(aa_blocks(one_pair["windows"]))
        c = int(d.verdict != NO_DIFFERENCE)
        print(f"    B/A {d.diff_pct:+.2f} % ±{d.half_width_pct:.2f} ({d.verdict})", flush=True)
        return c, 1, c

    return one


def stored_pass(dirs: list[str], k: int, fail_below: float) -> None:
    """Each kept A/A compared with a spread stored from k sessions of other trials."""
    from ipctop.output.records.spread_store import StoredSpread, now_utc, remember

    trials = []
    for d in dirs:
        i = 0
        while os.path.exists(os.path.join(d, f"{i}b.json")):
            trials.append((os.path.join(d, f"{i}a.json"), os.path.join(d, f"{i}b.json")))
            i += 1
    if len(trials) <= k:
        raise SystemExit(f"stored needs more than --sessions {k} kept trials, got {len(trials)}")
    called = judged = failed = 0
    t0 = time.monotonic()
    sds = []
    for i, paths in enumerate(trials):
        with open(paths[0]) as f:
            rec = json.load(f)
        others = [trials[(i + 1 + j) % len(trials)][0] for j in range(k)]  # not trial i's
        spread = session_spread([_repeats(o)[1] for o in others])
        cfg, box = rec["config"], rec["box"]
        entry = StoredSpread(
            host=box["hostname"], kernel=box["kernel_release"], workload=cfg["workload"],
            placement=cfg["placement"], mode=cfg["mode"], cpus=tuple(cfg["cpus"]),
            sessions=spread.sessions, runs_per_session=spread.runs_per_session,
            session_sd_pct=spread.session_sd_pct, run_sd_pct=spread.run_sd_pct,
            session_df=spread.session_df, measured_by="calibrate stored", when=now_utc(),
        )  # fmt: skip
        with tempfile.TemporaryDirectory() as state:
            STATE_ENV["XDG_STATE_HOME"] = state
            os.environ["XDG_STATE_HOME"] = state
            remember(entry)
            p = _ipctop("compare", *paths, "--json", "-", "--fail-below", str(fail_below))
        doc = json.loads(p.stdout[p.stdout.index("{") :])
        if not doc["judged"]:
            raise SystemExit(f"trial {i + 1}: the stored spread was not used: {doc['not_judged']}")
        sds.append((spread.session_sd_pct, doc["session_sd_pct"], doc["smallest_change_pct"]))
        c = sum(x["verdict"] in ("regression", "improvement") for x in doc["points"])
        called += c
        judged += sum(bool(x["judged"]) for x in doc["points"])
        failed += int(c > 0 or p.returncode == 1)
    took = time.monotonic() - t0
    est = sorted(a for a, _, _ in sds)
    term = sorted(b for _, b, _ in sds)
    small = sorted(c for _, _, c in sds if c is not None)
    print(
        f"stored spreads from {k} other sessions each: session part {est[0]:.1f} .. "
        f"{est[-1]:.1f} % ({sum(e == 0 for e in est)} of {len(est)} estimated 0), "
        f"session term used {term[0]:.1f} .. {term[-1]:.1f} % (df {k - 1}); the smallest "
        f"change compare said it could show: median ±{small[len(small) // 2]:.1f} %, "
        f"{small[0]:.1f} .. {small[-1]:.1f}"
    )
    print(rate_line(f"compare with a {k}-session stored spread: points called", called, judged))
    print(
        rate_line(
            f"compare with a {k}-session stored spread: comparisons with any verdict or a "
            f"failed gate",
            failed,
            len(trials),
            took,
        )  # fmt: skip
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("simulate", "compare", "ab", "check", "rejudge", "stored"))
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workload", default="sysv-sem")
    ap.add_argument("--cpus", default="0-1")
    ap.add_argument("--fail-below", type=float, default=3.0)
    ap.add_argument(
        "--spread", choices=("sweep", "check", "none"), default="sweep",
        help="compare: run `sweep --sessions` (default) or `check --sessions` once first "
        "(the stored spread), or store none",
    )  # fmt: skip
    ap.add_argument("--sessions", type=int, default=5, help="check --sessions K (default 5)")
    ap.add_argument(
        "--short", action="store_true",
        help="a smoke run, not a calibration: sweeps of 0.5 s x 2 runs up to 1 pair, "
        "check --quick",
    )  # fmt: skip
    ap.add_argument(
        "--windows-only", action="store_true",
        help="simulate: the window intervals alone (runs, Stein and Holm skipped)",
    )  # fmt: skip
    ap.add_argument("--metric", default=None, help="ab's metric (default: ab's own default)")
    ap.add_argument("--out", help="append a JSON line of the result to this file")
    ap.add_argument("--keep", metavar="DIR", help="keep the A/A records in DIR")
    ap.add_argument(
        "--start", type=int, default=0,
        help="number the new trials from here, to add to the records a --keep DIR holds",
    )  # fmt: skip
    args = ap.parse_args()
    if args.mode == "rejudge":
        if not args.keep:
            raise SystemExit("rejudge reads the records of --keep DIR")
        kept = 0
        while os.path.exists(os.path.join(args.keep, f"{kept}b.json")):
            kept += 1
        if os.path.isdir(os.path.join(args.keep, "state")):  # compare's stored spread, kept
            STATE_ENV["XDG_STATE_HOME"] = os.path.abspath(os.path.join(args.keep, "state"))
        session_pass(args.fail_below)(args.keep, kept)
    elif args.mode == "stored":
        if not args.keep:
            raise SystemExit("stored reads the records of --keep DIR[,DIR...]")
        stored_pass(args.keep.split(","), args.sessions, args.fail_below)
    elif args.mode == "simulate":
        simulate(args.trials if args.trials != 20 else 2000, args.seed, args.windows_only)
    elif args.mode == "compare":
        # The state folder goes with the kept records, else with the run.
        state = args.keep or tempfile.mkdtemp(prefix="calibrate-state-")
        if not args.keep:
            atexit.register(shutil.rmtree, state, True)
        STATE_ENV["XDG_STATE_HOME"] = os.path.abspath(os.path.join(state, "state"))
        stored = args.spread != "none"
        if stored:
            if args.spread == "check" and args.workload != "sysv-sem":
                raise SystemExit("--spread check needs --workload sysv-sem")  # all it measures
            store_spread(args.cpus, args.sessions, args.short, args.spread, args.workload)
        short = ["--seconds", "0.5", "--warmup", "0.2", "--repeat", "2", "--max-pairs", "1"]
        real_aa(
            f"compare A/A {args.workload} --cpus {args.cpus}, spread {args.spread}",
            args.trials,
            compare_trial(
                args.workload, args.cpus, args.fail_below, stored, short if args.short else []
            ),
            args.out,
            keep=args.keep,
            after=session_pass(args.fail_below) if args.start + args.trials >= 3 else None,
            start=args.start,
        )
    elif args.mode == "check":
        real_aa(
            "check noise floor A/A", args.trials, check_trial(), args.out,
            keep=args.keep, start=args.start,
        )  # fmt: skip
    else:
        real_aa(
            f"ab A/A metric {args.metric or 'default'}",
            args.trials,
            ab_trial(args.metric),
            args.out,
            keep=args.keep,
            start=args.start,
        )


if __name__ == "__main__":
    main()
