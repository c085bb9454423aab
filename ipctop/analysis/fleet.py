"""Many boxes' records side by side: groups, each box against its group's median, outliers.

A group is the boxes that should perform alike: one CPU model, one kernel.
Each box's figure is set against the median of that figure over its group.
The replicate is the box (one session each): a box's own windows say how well
its one run is known, not how much another box of the model would differ.
So its interval is a prediction interval from the other boxes of the group
(t on their log figures, n - 1 df, s.d. x sqrt(1 + 1/n)), around its ratio
to the median; a box is called slower only when that whole interval lies
below the median by more than the margin, not when one noisy reading does. The relative reasons need a group of at least MIN_GROUP boxes: with two
there is no median for one of them to stand out from.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .stats import summarize

#: a box slower (faster) than this fraction off its group's median is flagged
SLOWER = 0.10
#: a box whose scaling efficiency is this fraction below the group's is flagged
SCALES_WORSE = 0.15
#: the slowest pair of a box this far below its fastest
IMBALANCED = 0.20
#: a box whose interval is this many times wider than its group's typical one...
NOISY_TIMES = 2.0
#: ...and wider than this (± % of its figure)
NOISY_MIN_PCT = 10.0
MIN_GROUP = 3

SLOW, FAST, SCALES, IMBALANCE, NOISE = (
    "slower",
    "faster",
    "scales worse",
    "imbalanced",
    "noisy",
)


@dataclass(frozen=True)
class Figure:
    """One measured rate of one box: the median of its windows and their 95 % interval."""

    value: float
    low: float | None = None
    high: float | None = None
    n: int = 1
    per_pair: tuple[float, ...] = ()  # each pair's share, where the record has it

    @classmethod
    def from_windows(
        cls, value: float, windows: Sequence[float], per_pair: Sequence[float] = ()
    ) -> Figure:
        ws = [float(w) for w in windows if w is not None]
        if len(ws) >= 2:
            s = summarize(ws)
            # The figure is the centre of its interval, not a median beside it.
            return cls(s.figure, s.low, s.high, s.n, tuple(per_pair))
        return cls(value, None, None, max(1, len(ws)), tuple(per_pair))

    @property
    def half_width_pct(self) -> float | None:
        if self.low is None or self.high is None or self.value <= 0:
            return None
        return 50.0 * (self.high - self.low) / self.value


@dataclass(frozen=True)
class BoxRun:
    """What one record says about its box, in the terms the report compares."""

    host: str
    source: str
    kind: str
    cpu_model: str
    kernel: str
    ncpus: int
    engine: str
    #: "sysv-msg same 1 pair" -> figure; "... all CPUs" for every CPU used
    figures: dict[str, Figure] = field(default_factory=dict)
    #: "sysv-msg same" -> ((pairs, total), ...) for the HTML curves
    curves: dict[str, tuple[tuple[int, float], ...]] = field(default_factory=dict)

    def efficiency(self, curve: str) -> float | None:
        """total(all CPUs) / (N x total(1)): 1.0 is linear."""
        one = self.figures.get(f"{curve} 1 pair")
        every = self.figures.get(f"{curve} all CPUs")
        if one is None or every is None or one.value <= 0 or self.ncpus < 2:
            return None
        return every.value / (self.ncpus * one.value)


@dataclass(frozen=True)
class Standing:
    """One figure of one box against its group: ratios to the group's median."""

    figure: Figure
    median: float
    ratio: float
    low: float | None
    high: float | None


@dataclass(frozen=True)
class Flag:
    reason: str
    detail: str


@dataclass
class BoxReport:
    run: BoxRun
    standings: dict[str, Standing] = field(default_factory=dict)
    efficiency: dict[str, tuple[float, float | None]] = field(default_factory=dict)
    flags: list[Flag] = field(default_factory=list)


@dataclass
class Group:
    cpu_model: str
    kernel: str
    boxes: list[BoxReport]
    keys: list[str]  # the figures at least two boxes share, in a stable order
    medians: dict[str, float]
    curves: list[str]

    @property
    def title(self) -> str:
        return f"{self.cpu_model} · kernel {self.kernel}"


def group_runs(runs: Iterable[BoxRun]) -> list[Group]:
    by: dict[tuple[str, str], list[BoxRun]] = {}
    for r in runs:
        by.setdefault((r.cpu_model, r.kernel), []).append(r)
    return [_group(model, kernel, rs) for (model, kernel), rs in sorted(by.items())]


def _order(key: str) -> tuple[str, bool, bool, str]:
    # by mechanism; 1 pair before all CPUs, same-core before cross-core, as `check` prints them
    return (key.split()[0], " cross" in key, key.endswith("CPUs"), key)


def _group(model: str, kernel: str, runs: list[BoxRun]) -> Group:
    runs = sorted(runs, key=lambda r: (r.host, r.source))
    counts: dict[str, int] = {}
    for r in runs:
        for k in r.figures:
            counts[k] = counts.get(k, 0) + 1
    shared = 2 if len(runs) >= 2 else 1
    keys = sorted((k for k, c in counts.items() if c >= shared), key=_order)
    medians = {
        k: statistics.median(r.figures[k].value for r in runs if k in r.figures) for k in keys
    }
    curves = sorted(
        c
        for c in {k.rsplit(" ", 2)[0] for k in keys if k.endswith(" 1 pair")}
        if any(r.efficiency(c) is not None for r in runs)
    )
    boxes = [_standing(r, keys, medians, runs) for r in runs]
    eff_medians = {}
    for c in curves:
        effs = [e for r in runs if (e := r.efficiency(c)) is not None]
        if effs:
            eff_medians[c] = statistics.median(effs)
    for b in boxes:
        for c, med in eff_medians.items():
            e = b.run.efficiency(c)
            if e is not None:
                b.efficiency[c] = (e, e / med if med > 0 else None)
    typical = {}
    for k in keys:
        widths = [hw for r in runs if k in r.figures and (hw := r.figures[k].half_width_pct)]
        if widths:
            typical[k] = statistics.median(widths)
    for b in boxes:
        b.flags = _flags(b, len(runs), typical)
    return Group(model, kernel, boxes, keys, medians, curves)


def _prediction_half(others: list[float]) -> float | None:
    """Half-width on the log of where one more box falls, from the others' log figures."""
    n = len(others)
    if n < 2:
        return None
    from scipy.stats import t

    return float(t.ppf(0.975, n - 1)) * statistics.stdev(others) * math.sqrt(1.0 + 1.0 / n)


def _standing(
    r: BoxRun, keys: list[str], medians: dict[str, float], runs: list[BoxRun]
) -> BoxReport:
    out = BoxReport(r)
    for k in keys:
        f = r.figures.get(k)
        med = medians[k]
        if f is None or med <= 0 or f.value <= 0:
            continue
        others = [
            math.log(o.figures[k].value)
            for o in runs
            if o is not r and k in o.figures and o.figures[k].value > 0
        ]
        half = _prediction_half(others)
        ratio = f.value / med
        lo = ratio * math.exp(-half) if half is not None else None
        hi = ratio * math.exp(half) if half is not None else None
        out.standings[k] = Standing(f, med, ratio, lo, hi)
    return out


def _flags(b: BoxReport, size: int, typical: dict[str, float]) -> list[Flag]:
    flags: list[Flag] = []
    if size >= MIN_GROUP:
        flags += _speed_flags(b)
        for c, (eff, ratio) in b.efficiency.items():
            if ratio is not None and ratio < 1.0 - SCALES_WORSE:
                flags.append(
                    Flag(SCALES, f"{c}: {eff * 100:.0f} % of linear, {_pct(ratio)} vs the group")
                )
        flags += _noise_flags(b, typical)
    for k, s in b.standings.items():
        pairs = s.figure.per_pair
        if len(pairs) >= 2 and max(pairs) > 0:
            slow, fast = pairs.index(min(pairs)), pairs.index(max(pairs))
            share = pairs[slow] / pairs[fast]
            if share < 1.0 - IMBALANCED:
                flags.append(Flag(IMBALANCE, f"{k}: pair {slow} at {share * 100:.0f} % of pair {fast}"))  # fmt: skip
    return flags


def _speed_flags(b: BoxReport) -> list[Flag]:
    out = []
    for k, s in b.standings.items():
        hi = s.high if s.high is not None else s.ratio
        lo = s.low if s.low is not None else s.ratio
        if hi < 1.0 - SLOWER:
            out.append(Flag(SLOW, f"{k}: {_pct(s.ratio)} vs the group's median{_interval(s)}"))
        elif lo > 1.0 + SLOWER:
            out.append(Flag(FAST, f"{k}: {_pct(s.ratio)} vs the group's median{_interval(s)}"))
    return out


def _noise_flags(b: BoxReport, typical: dict[str, float]) -> list[Flag]:
    """Wider than the group's typical interval: this box's readings moved more."""
    out = []
    for k, s in b.standings.items():
        hw, usual = s.figure.half_width_pct, typical.get(k)
        if hw is not None and usual is not None and hw > max(NOISY_TIMES * usual, NOISY_MIN_PCT):
            out.append(Flag(NOISE, f"{k}: ±{hw:.0f} % over {s.figure.n} windows (group ±{usual:.0f} %)"))  # fmt: skip
    return out


def _pct(ratio: float) -> str:
    return f"{(ratio - 1.0) * 100:+.0f} %"


def _interval(s: Standing) -> str:
    if s.low is None or s.high is None:
        return ""
    return f" [{(s.low - 1) * 100:+.0f}, {(s.high - 1) * 100:+.0f}]"


def outliers(groups: Iterable[Group]) -> list[BoxReport]:
    return [b for g in groups for b in g.boxes if b.flags]
