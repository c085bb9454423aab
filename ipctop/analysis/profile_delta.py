"""The delta explained: which symbols and which counters moved between A and B.

Symbols are ranked by the change of their total share (perf report
--children: the symbol anywhere in the chain), in percentage points, because
a syscall path is a chain, not a leaf: sysv-sem's __do_semtimedop holds half
the samples in total but a few percent itself. The self share is shown
beside it, as perf diff shows it. Counters are ranked by %change per round,
as the 0-day robot prints them. An interval is given where both sides have
windows (two or more per-window shares each); otherwise only the change.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import mean, variance

from ..engine.costs import Costs
from ..engine.profile.window import Profile, SymbolShare

# Two-sided 95 % Student t quantiles by degrees of freedom; 1.96 beyond.
_T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26,
        10: 2.23, 12: 2.18, 15: 2.13, 20: 2.09, 30: 2.04}  # fmt: skip


def t95(df: float) -> float:
    for k in sorted(_T95):
        if df <= k:
            return _T95[k]
    return 1.96


def diff_interval(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Half-width of Welch's 95 % interval of mean(b) - mean(a); None below 2 each."""
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = variance(a) / len(a), variance(b) / len(b)
    se2 = va + vb
    if se2 == 0:
        return 0.0
    df = se2**2 / ((va**2 / (len(a) - 1) if va else 0) + (vb**2 / (len(b) - 1) if vb else 0) or 1)
    return t95(df) * math.sqrt(se2)


@dataclass(frozen=True)
class SymbolDelta:
    name: str
    dso: str
    a_total_pct: float
    b_total_pct: float
    a_self_pct: float
    b_self_pct: float
    half_width: float | None  # of the total-share change, pp, when both have windows

    @property
    def change_pp(self) -> float:
        return self.b_total_pct - self.a_total_pct

    @property
    def self_change_pp(self) -> float:
        return self.b_self_pct - self.a_self_pct


@dataclass(frozen=True)
class CounterDelta:
    name: str
    a: float | None
    b: float | None
    why: str | None = None  # n/a reason

    @property
    def change_pct(self) -> float | None:
        if self.a is None or self.b is None or self.a == 0:
            return None
        return 100.0 * (self.b - self.a) / abs(self.a)


def _by_key(symbols: list[SymbolShare]) -> dict[tuple[str, str], SymbolShare]:
    return {(s.name, s.dso): s for s in symbols}


def symbol_deltas(a: Profile, b: Profile) -> list[SymbolDelta]:
    """Every symbol in either side's head (what a record keeps), ranked by its
    total-share change, B minus A. Only the heads: a live table and the same run
    read back from its record show the same rows, since an ab record keeps each
    side's share of the other's head too."""
    sa = _by_key(a.top(10**9, by="total"))
    sb = _by_key(b.top(10**9, by="total"))
    out = []
    for key in a.head() | b.head():
        x, y = sa.get(key), sb.get(key)
        wa = x.windows_total_pct if x else (0.0,) * _windows(a)
        wb = y.windows_total_pct if y else (0.0,) * _windows(b)
        out.append(
            SymbolDelta(
                name=key[0],
                dso=key[1],
                a_total_pct=x.total_pct if x else 0.0,
                b_total_pct=y.total_pct if y else 0.0,
                a_self_pct=x.self_pct if x else 0.0,
                b_self_pct=y.self_pct if y else 0.0,
                half_width=diff_interval(wa, wb),
            )
        )
    out.sort(key=lambda d: (-_kept_change(d), d.name))
    return out


def _kept_change(d: SymbolDelta) -> float:
    """The change as a record keeps it (shares to 0.01 pp), so that a live
    table and the same run read back from its record rank symbols alike:
    near-ties unrounded would swap places once rounded."""
    return round(round(d.b_total_pct, 2) - round(d.a_total_pct, 2), 2)


def _windows(p: Profile) -> int:
    """How many windows a symbol absent from p had (a share of 0 in each)."""
    got = [len(s.windows_total_pct) for s in p.top(1)]
    return got[0] if got else 0


def _avg(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return mean(vals) if vals else None


def _sum(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) if vals else None


def counter_values(costs: Costs | None) -> dict[str, float | None]:
    """Per-round counters from a step's costs."""
    c = costs or Costs()
    t, cpus = c.threads, c.cpus
    return {
        "CPU µs/round": c.cpu_us_per_round,
        "system %": c.system_share_pct,
        "run delay µs/round": _avg(x.run_delay_us_per_round for x in t),
        "vol. switches/round": _avg(x.vcsw_per_round for x in t),
        "invol. switches/round": _avg(x.ivcsw_per_round for x in t),
        "migrations": _sum(x.migrations for x in t),
        "resched IPIs/round": _sum(x.resched_per_round for x in cpus),
        "call-function IPIs/round": _sum(x.callfunc_per_round for x in cpus),
        "remote wake-ups/s": _sum(x.remote_wakeups_per_s for x in cpus),
    }


def counter_deltas(a: Costs | None, b: Costs | None) -> list[CounterDelta]:
    """Ranked by |%change|; a counter missing on either side comes last, with why."""
    va, vb = counter_values(a), counter_values(b)
    missing = {**(a.missing if a else {}), **(b.missing if b else {})}
    out = []
    for name in va:
        why = None
        if va[name] is None or vb[name] is None:
            why = next((w for k, w in missing.items() if k in name.lower()), "not recorded")
        out.append(CounterDelta(name, va[name], vb[name], why))
    out.sort(key=lambda d: (d.change_pct is None, -abs(d.change_pct or 0.0), d.name))
    return out


def hardware_note(a: Profile, b: Profile) -> str | None:
    """Hardware counters need a PMU: say so instead of printing zeros."""
    if a.event == "cycles" and b.event == "cycles":
        return None
    return "hardware counters (cycles, instructions, IPC, cache misses): n/a (no hardware PMU; sampled cpu-clock)"
