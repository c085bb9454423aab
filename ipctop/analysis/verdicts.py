"""Verdicts for `ipctop check`: pure judgements over measured readings.

Nothing here touches the kernel; the check command measures, builds
RunReadings, and hands them over, so every threshold below is unit-tested on
planted numbers. Each verdict is one line, "<reason>: <status>".

Statuses: ok (as expected), warn (worth a look, the numbers still mean
something), fail (the numbers are wrong or the box is broken for this). The
check exits 1 when any line fails; warnings alone exit 0.

Thresholds, and why:

- Scaling, same-core pairs, 1 -> N CPUs. Efficiency = total(N) / (N x total(1)).
  ok at 80 % or more; warn from 50 % up; fail below 50 %. A collapse fails
  whatever the efficiency: any point more than 10 % below the best total at a
  smaller CPU count, as psem's collapse on 2.6.24 (SEEDS.md).
  The 10 % margin keeps run-to-run noise from reading as a collapse.
  Above 125 % of linear warns: more than linear means the 1-CPU reading was
  disturbed, so the ratio says little.
- Balance, every run of 2 or more pairs. Each pair's rounds against the median
  of the other pairs: 1.25x apart or more warns, 1.5x fails. 1.5x is the ratio
  the result matrix flags (tables.IMBALANCE_RATIO); in the seeds one pair doing
  twice the rounds of its peers meant threads sharing a core or an SMT sibling.
- Stability, every run: the windows of one run more than 25 % apart (max - min
  over median) warn; the box is busy or its clock moves.
- Cross-core against same-core round trip, 1 pair. Up to 5x slower is ok;
  slower than that warns (cross-CPU wake-ups cost an IPI, dear on VMs and deep
  C-states). Never a failure: it is a property of the box, not a fault.
- Integrity, every run: a wrong message on the shared queue, a thread seen on
  a CPU other than its binding, a failed pair, or a run that did no rounds
  fails. Oversubscription (more pairs than CPUs) warns: per-pair numbers then
  measure time sharing.
- Box: a cpufreq governor other than performance warns (the clock moves under
  the numbers); SMT siblings among the CPUs used warn (N "CPUs" are fewer
  cores); no SysV IPC or a single CPU limits what can be checked.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ipctop.analysis.readings import CheckReadings, RunReading
from ipctop.analysis.scaling import (
    ScalingPoint,
    efficiency_pct,
    scalability_interval,
    scalability_pct,
    spread_pct,
)
from ipctop.box import BoxFacts

OK, WARN, FAIL = "ok", "warn", "fail"
STATUSES = (OK, WARN, FAIL)

SCALE_OK_PCT = 80.0
SCALE_SUSPECT_PCT = 125.0
SCALE_WARN_PCT = 50.0
COLLAPSE_DROP_PCT = 10.0
IMBALANCE_WARN = 1.25
IMBALANCE_FAIL = 1.5
CROSS_WARN_RATIO = 5.0
NOISE_WARN_PCT = 25.0
GOOD_GOVERNORS = ("performance",)


@dataclass(frozen=True)
class Verdict:
    status: str  # ok, warn or fail
    subject: str  # what was judged: "sysv-sem scaling", "box", ...
    reason: str

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, not {self.status!r}")

    @property
    def line(self) -> str:
        return f"{self.reason}: {self.status}"


def fmt_rate(v: float) -> str:
    """4_010_000 -> "4.01M", 26_071 -> "26.1k": short enough for a verdict line."""
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return f"{v / div:.3g}{unit}"
    return f"{v:.0f}"


# --- scaling ----------------------------------------------------------------


def judge_scaling(workload: str, points: Iterable[ScalingPoint]) -> Verdict | None:
    """Does throughput grow with CPUs? None when there is no 1-pair and larger point."""
    pts = sorted(points, key=lambda p: p.pairs)
    subject = f"{workload} scaling"
    if len(pts) < 2 or pts[0].pairs != 1 or pts[0].total_ops_per_s <= 0:
        return None
    best = pts[0]
    for p in pts[1:]:
        drop = 100.0 * (best.total_ops_per_s - p.total_ops_per_s) / best.total_ops_per_s
        if drop > COLLAPSE_DROP_PCT:
            scal = scalability_pct(pts, p.pairs) or 0.0
            return Verdict(
                FAIL,
                subject,
                f"{workload} collapses: {fmt_rate(p.total_ops_per_s)} ops/s on {p.pairs} CPUs, "
                f"{drop:.0f} % below {fmt_rate(best.total_ops_per_s)} on {best.pairs}"
                f" ({scal / 100:.2f}x of 1 CPU)",
            )
        if p.total_ops_per_s > best.total_ops_per_s:
            best = p
    top = pts[-1]
    scal = scalability_pct(pts, top.pairs) or 0.0
    eff = efficiency_pct(pts, top.pairs) or 0.0
    # Both figures named: "117 %" alone reads as the README's scalability, which is 235 %.
    figures = f"scalability {scal:.0f} %, efficiency {eff:.0f} %"
    head = f"{workload} scales {scal / 100:.2f}x on {top.pairs} CPUs"
    ok_band = f"ok {SCALE_OK_PCT:.0f} to {SCALE_SUSPECT_PCT:.0f} %"
    if eff > 100.0:
        span = scalability_interval(pts, top.pairs)
        linear = 100.0 * top.pairs
        if span is None:
            inside = "no interval to tell"
        elif span[0] <= linear:
            inside = f"[{span[0]:.0f}, {span[1]:.0f}] % holds linear: noise"
        else:
            inside = f"[{span[0]:.0f}, {span[1]:.0f}] % beyond linear"
        text = f"{head} ({figures}; {ok_band}), above linear {linear:.0f} % ({inside})"
        if eff > SCALE_SUSPECT_PCT:
            return Verdict(
                WARN,
                subject,
                f"{text}, faster than linear: the 1-CPU reading is low (other load on its "
                "CPU?) or a cache/clock effect",
            )
        return Verdict(OK, subject, f"{text}: a low 1-CPU reading or a cache/clock effect")
    if eff >= SCALE_OK_PCT:
        return Verdict(OK, subject, f"{head} ({figures}; {ok_band})")
    bands = f"ok from {SCALE_OK_PCT:.0f} %, fail below {SCALE_WARN_PCT:.0f} %"
    if eff >= SCALE_WARN_PCT:
        return Verdict(
            WARN, subject, f"{head} ({figures}; {bands}), below {SCALE_OK_PCT:.0f} % of linear"
        )
    head = head.replace(" scales ", " scales only ", 1)
    return Verdict(
        FAIL, subject, f"{head} ({figures}; {bands}), below {SCALE_WARN_PCT:.0f} % of linear"
    )


# --- one run ----------------------------------------------------------------


def _pair_rounds(run: RunReading) -> dict[int, float]:
    by: dict[int, list[int]] = {}
    for t in run.threads:
        by.setdefault(t.pair, []).append(t.rounds)
    # Both ends of a pair count the same round trips; their mean is the pair's.
    return {p: sum(r) / len(r) for p, r in by.items()}


def judge_balance(run: RunReading) -> Verdict | None:
    """The pair furthest from its peers, or None for fewer than two pairs."""
    rounds = _pair_rounds(run)
    if len(rounds) < 2:
        return None
    candidates = []
    for p, mine in sorted(rounds.items()):
        peers = statistics.median(r for q, r in rounds.items() if q != p)
        lo, hi = sorted((mine, peers))
        ratio = hi / lo if lo > 0 else (float("inf") if hi > 0 else 1.0)
        # On a tie (always so with two pairs) name the pair that did fewer rounds.
        candidates.append((ratio, mine < peers, -p, mine, peers))
    ratio, fewer, neg_pair, mine, peers = max(candidates)
    subject = f"{run.label} balance"
    if ratio < IMBALANCE_WARN:
        spread = 100.0 * (ratio - 1.0)
        return Verdict(
            OK,
            subject,
            f"{run.label}: pairs within {spread:.0f} % of each other "
            f"(warn from {IMBALANCE_WARN:g}x, fail from {IMBALANCE_FAIL:g}x)",
        )
    if fewer:
        what = f"{100.0 * (1 - mine / peers):.0f} % fewer"
    else:
        what = f"{100.0 * (mine / peers - 1):.0f} % more" if peers > 0 else "all the"
    limit = f"{IMBALANCE_WARN:g}x warns, {IMBALANCE_FAIL:g}x fails"
    text = (
        f"{run.label}: pair {-neg_pair} did {what} rounds than its peers ({ratio:.2f}x; {limit}):"
        " its CPU may be an SMT sibling of another pair's, busy with other work, or losing"
        " time to the hypervisor (steal); the integrity lines say whether it left its CPU"
    )
    return Verdict(FAIL if ratio >= IMBALANCE_FAIL else WARN, subject, text)


def judge_integrity(run: RunReading) -> list[Verdict]:
    """Failures that make a run's numbers meaningless, and oversubscription."""
    subject = run.label
    if run.error:
        return [Verdict(FAIL, subject, f"{run.label} could not run: {run.error}")]
    out: list[Verdict] = []
    wrong = sum(t.errors for t in run.threads)
    if wrong:
        pairs = sorted({t.pair for t in run.threads if t.errors})
        out.append(
            Verdict(
                FAIL,
                subject,
                f"{run.label}: {wrong} wrong message(s) received by pair(s) "
                f"{', '.join(map(str, pairs))}: the queue mixed up pairs",
            )
        )
    for t in run.threads:
        off = [c for c in t.seen_cpus if t.bound_cpu is not None and c != t.bound_cpu]
        if off:
            out.append(
                Verdict(
                    FAIL,
                    subject,
                    f"{run.label}: pair {t.pair} {t.role} ran on CPU "
                    f"{', '.join(map(str, sorted(set(off))))} but is bound to CPU {t.bound_cpu}",
                )
            )
    for t in run.threads:
        if t.state not in ("running", "done"):
            out.append(Verdict(FAIL, subject, f"{run.label}: pair {t.pair} {t.role} {t.state}"))
    for e in run.events:
        if "failed" in e or "killed" in e:
            out.append(Verdict(FAIL, subject, f"{run.label}: {e}"))
    if run.total_ops_per_s <= 0 and not out:
        out.append(Verdict(FAIL, subject, f"{run.label} did no rounds"))
    if run.oversubscribed:
        out.append(
            Verdict(
                WARN,
                subject,
                f"{run.label} on {run.ncpus} CPUs is oversubscribed: "
                "per-pair numbers measure time sharing",
            )
        )
    return out


def judge_stability(run: RunReading) -> Verdict | None:
    """Did the windows of one run agree? None when there was only one."""
    totals = run.window_totals
    if run.error or len(totals) < 2:
        return None
    spread = spread_pct(totals)
    if spread <= NOISE_WARN_PCT:
        return None
    return Verdict(
        WARN,
        f"{run.label} stability",
        f"{run.label}: windows differed by {spread:.0f} % of their median "
        f"({fmt_rate(min(totals))}..{fmt_rate(max(totals))} ops/s; warn above "
        f"{NOISE_WARN_PCT:.0f} %): other load on these CPUs? run it again on a quiet box",
    )


def judge_cross(same: RunReading, cross: RunReading) -> Verdict | None:
    """How much dearer a round trip is when the two ends sit on different CPUs."""
    if same.error or cross.error or same.total_ops_per_s <= 0 or cross.total_ops_per_s <= 0:
        return None
    ratio = same.total_ops_per_s / cross.total_ops_per_s
    subject = f"{cross.workload} cross-core"
    if ratio >= 1:
        text = f"{cross.workload} cross-core round trip {ratio:.1f}x slower than same-core"
    else:
        text = f"{cross.workload} cross-core round trip {1 / ratio:.1f}x faster than same-core"
    text += (
        f" ({fmt_rate(cross.total_ops_per_s)} vs {fmt_rate(same.total_ops_per_s)} ops/s;"
        f" ok up to {CROSS_WARN_RATIO:g}x, never a failure)"
    )
    if ratio > CROSS_WARN_RATIO:
        return Verdict(
            WARN,
            subject,
            f"{text}: each wake-up on another CPU costs an IPI, dear under a hypervisor and"
            " from deep C-states; keep ping-pong ends on one CPU (--placement same), and"
            " `ipctop matrix` shows which CPU pairs are cheap",
        )
    return Verdict(OK, subject, text)


def judge_shared(shared: RunReading, private: RunReading | None) -> Verdict | None:
    """The shared queue's throughput, beside one queue per pair when both ran."""
    if shared.error or shared.total_ops_per_s <= 0:
        return None
    text = f"{shared.label}: {fmt_rate(shared.total_ops_per_s)} ops/s"
    if private is not None and not private.error and private.total_ops_per_s > 0:
        pct = 100.0 * shared.total_ops_per_s / private.total_ops_per_s
        text += f", {pct:.0f} % of one queue per pair"
    if not any(t.errors for t in shared.threads):
        text += ", every message reached its pair"
    return Verdict(OK, f"{shared.workload} throughput", text)


# --- the box ----------------------------------------------------------------


def judge_box(box: BoxFacts, cpus: Sequence[int]) -> list[Verdict]:
    """What about the box itself colours every number the check prints."""
    out: list[Verdict] = []
    if not box.sysv_ipc:
        out.append(Verdict(FAIL, "box", "no /proc/sysvipc: kernel without CONFIG_SYSVIPC?"))
    if len(cpus) < 2:
        out.append(
            Verdict(
                WARN,
                "box",
                f"only {len(cpus)} CPU to run on: scaling and cross-core are not measured",
            )
        )
    governor = box.governor
    if governor and governor not in GOOD_GOVERNORS:
        out.append(
            Verdict(
                WARN,
                "box",
                f"cpufreq governor is {governor}: the clock moves under the numbers "
                "(performance holds it)",
            )
        )
    used = set(cpus)
    shared = [g for g in box.smt_siblings if len(used.intersection(g)) > 1]
    if shared:
        groups = "; ".join(",".join(str(c) for c in g if c in used) for g in shared)
        out.append(
            Verdict(
                WARN,
                "box",
                f"CPUs {groups} are SMT siblings: pairs on them share a core",
            )
        )
    return out


# --- the whole check ----------------------------------------------------------


def judge_check(box: BoxFacts, cpus: Sequence[int], r: CheckReadings) -> list[Verdict]:
    """Every verdict line of a check, in the order they are printed."""
    out = judge_box(box, cpus)
    for run in r.runs():
        out.extend(judge_integrity(run))
    for run in r.runs():
        v = judge_stability(run)
        if v is not None:
            out.append(v)
    for workload, one in r.one.items():
        top = r.all.get(workload)
        if one.error or top is None or top.error:
            continue
        v = judge_scaling(workload, r.curve(workload))
        if v is not None and r.engine == "python":
            # The Python engine's ends take turns on the GIL: its curve is the
            # interpreter's, and a "collapse" in it says nothing about the kernel.
            v = Verdict(
                WARN,
                v.subject,
                f"{workload} scaling not judged: the Python engine's ends share one GIL, "
                "so its curve measures the interpreter, not the kernel (build the native engine)",
            )
        if v is not None:
            out.append(v)
    for run in [*r.all.values(), *([r.shared] if r.shared else [])]:
        if not run.error:
            v = judge_balance(run)
            if v is not None:
                out.append(v)
    for workload, cross in r.cross.items():
        same = r.one.get(workload)
        if same is not None:
            v = judge_cross(same, cross)
            if v is not None:
                out.append(v)
    if r.shared is not None:
        private = [run for run in (r.one.get("sysv-msg"), r.all.get("sysv-msg")) if run is not None]
        alike = [run for run in private if run.pairs == r.shared.pairs]
        v = judge_shared(r.shared, alike[0] if alike else None)
        if v is not None:
            out.append(v)
    return out


def overall(verdicts: Iterable[Verdict]) -> str:
    """The worst status among the verdicts; ok when there are none."""
    seen = {v.status for v in verdicts}
    return FAIL if FAIL in seen else WARN if WARN in seen else OK


def exit_code(verdicts: Iterable[Verdict]) -> int:
    """1 when any verdict failed, else 0: warnings pass."""
    return 1 if overall(verdicts) == FAIL else 0
