"""The profile every consumer reads: per window, and over a whole step.

A share is of the pairs' own samples (their threads' ticks on the profiled
CPUs), so other work on a shared box does not dilute it; `owners` says how
the CPUs' samples split between the pairs, ipctop, perf, idle and others.
"Self" counts the leaf frame (perf report --no-children), "total" counts a
symbol anywhere in the chain once per sample (--children).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from ...plain import from_plain
from .parse import Tally, is_kernel

TOP = 20  # symbols kept per record step: the head of the table, not the tail
# A window this thin (perf's start, the tail after the pairs stop) would weigh
# as much as a full one in a per-window interval; its samples still count.
MIN_WINDOW_SAMPLES = 50


@dataclass(frozen=True)
class SymbolShare:
    name: str
    dso: str
    self_samples: int
    total_samples: int
    self_pct: float
    total_pct: float
    windows_self_pct: tuple[float, ...] = ()  # one share per window, for intervals
    windows_total_pct: tuple[float, ...] = ()

    @property
    def kernel(self) -> bool:
        return is_kernel(self.dso)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "dso": self.dso,
            "kernel": self.kernel,
            "self": self.self_samples,
            "total": self.total_samples,
            "self_pct": round(self.self_pct, 2),
            "total_pct": round(self.total_pct, 2),
            "windows_self_pct": [round(x, 2) for x in self.windows_self_pct],
            "windows_total_pct": [round(x, 2) for x in self.windows_total_pct],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SymbolShare:
        # Kept for the written names (self, total) and the zeros an older record left out.
        read = {_SHARE_FIELDS.get(k, k): v for k, v in d.items()}
        return from_plain(cls, {**_SHARE_ZEROS, **read})


_SHARE_FIELDS = {"self": "self_samples", "total": "total_samples"}  # a record's key: the field
_SHARE_ZEROS = {"dso": "", "self_samples": 0, "total_samples": 0, "self_pct": 0.0, "total_pct": 0.0}


@dataclass(frozen=True)
class ProfileWindow:
    """One window of perf samples, read-only."""

    t0: float
    t1: float
    samples: int
    cpu_samples: int
    owners: dict[str, int]
    self_counts: dict[tuple[str, str], int]
    total_counts: dict[tuple[str, str], int]
    chains: dict[tuple[str, str], tuple[tuple[tuple[str, ...], int], ...]]
    cost_pct: float | None = None  # perf's CPU over the window, % of one CPU

    @classmethod
    def from_tally(cls, t: Tally, cost_pct: float | None = None) -> ProfileWindow:
        return cls(
            t0=t.t0 or 0.0,
            t1=t.t1 or 0.0,
            samples=t.samples,
            cpu_samples=t.cpu_samples,
            owners=dict(t.owners),
            self_counts=dict(t.self_counts),
            total_counts=dict(t.total_counts),
            chains={k: tuple(c.most_common(10)) for k, c in t.chains.items()},
            cost_pct=cost_pct,
        )

    def self_pct(self, key: tuple[str, str]) -> float:
        return 100.0 * self.self_counts.get(key, 0) / self.samples if self.samples else 0.0

    def total_pct(self, key: tuple[str, str]) -> float:
        return 100.0 * self.total_counts.get(key, 0) / self.samples if self.samples else 0.0

    def top(self, n: int = 10, kernel: bool | None = None, by: str = "self") -> list[SymbolShare]:
        return _top([self], n, kernel, by)

    def callers(self, name: str) -> list[tuple[tuple[str, ...], int]]:
        """The call chains that ended in `name`, most frequent first."""
        merged: Counter[tuple[str, ...]] = Counter()
        for (sym, _), chains in self.chains.items():
            if sym == name:
                for chain, count in chains:
                    merged[chain] += count
        return merged.most_common(10)


def _top(
    windows: list[ProfileWindow], n: int, kernel: bool | None, by: str = "self"
) -> list[SymbolShare]:
    selfs: Counter[tuple[str, str]] = Counter()
    totals: Counter[tuple[str, str]] = Counter()
    for w in windows:
        selfs.update(w.self_counts)
        totals.update(w.total_counts)
    samples = sum(w.samples for w in windows)
    if not samples:
        return []
    full = [w for w in windows if w.samples >= MIN_WINDOW_SAMPLES]
    rank = selfs if by == "self" else totals
    keys = [k for k in rank if kernel is None or is_kernel(k[1]) == kernel]
    keys.sort(key=lambda k: (-rank[k], k))
    return [
        SymbolShare(
            name=k[0],
            dso=k[1],
            self_samples=selfs[k],
            total_samples=totals[k],
            self_pct=100.0 * selfs[k] / samples,
            total_pct=100.0 * totals[k] / samples,
            windows_self_pct=tuple(w.self_pct(k) for w in full),
            windows_total_pct=tuple(w.total_pct(k) for w in full),
        )
        for k in keys[:n]
    ]


@dataclass(frozen=True)
class Profile:
    """The windows of one span (a step, a run), with how they were taken."""

    event: str
    perf_version: str | None
    frequency: int
    cpus: tuple[int, ...]
    windows: tuple[ProfileWindow, ...] = ()
    notes: tuple[str, ...] = ()
    na: str | None = None  # why there is no profile ("perf missing", ...)
    symbols: tuple[SymbolShare, ...] = field(default=())  # set when read from a record

    @property
    def samples(self) -> int:
        return sum(w.samples for w in self.windows)

    @property
    def cost_pct(self) -> float | None:
        costs = [w.cost_pct for w in self.windows if w.cost_pct is not None]
        return sum(costs) / len(costs) if costs else None

    def top(self, n: int = 10, kernel: bool | None = None, by: str = "self") -> list[SymbolShare]:
        """The n symbols with the largest self (or total) share of the pairs' samples."""
        if self.windows:
            return _top(list(self.windows), n, kernel, by)
        picked = [s for s in self.symbols if kernel is None or s.kernel == kernel]
        picked.sort(key=lambda s: -(s.self_samples if by == "self" else s.total_samples))
        return picked[:n]

    def callers(self, name: str) -> list[tuple[tuple[str, ...], int]]:
        merged: Counter[tuple[str, ...]] = Counter()
        for w in self.windows:
            merged.update(dict(w.callers(name)))
        return merged.most_common(10)

    def head(self, top: int = TOP) -> set[tuple[str, str]]:
        """The symbols a record keeps: the head by self share and by total share."""
        return {(s.name, s.dso) for s in _union(self.top(top), self.top(top, by="total"))}

    def to_dict(self, top: int = TOP, keep: Collection[tuple[str, str]] = ()) -> dict[str, Any]:
        """keep: symbols kept beyond the head (the other side's head, in an ab record),
        so a delta read back sees the share each side really had."""
        cost = self.cost_pct
        return {
            "event": self.event,
            "perf_version": self.perf_version,
            "frequency": self.frequency,
            "cpus": list(self.cpus),
            "na": self.na,
            "notes": list(self.notes),
            "samples": self.samples,
            "cpu_samples": self._cpu_samples(),
            "owners": self._owners(),
            "windows": [
                {"t0": round(t0, 3), "t1": round(t1, 3), "samples": n}
                for t0, t1, n in self._spans()
            ],
            "cost_pct": None if cost is None else round(cost, 2),
            "symbols": [s.to_dict() for s in self._kept(top, keep)],
        }

    # What a live profile and one read back keep differently (_RecordedProfile).
    def _cpu_samples(self) -> int:
        return sum(w.cpu_samples for w in self.windows)

    def _owners(self) -> dict[str, int]:
        owners: Counter[str] = Counter()
        for w in self.windows:
            owners.update(w.owners)
        return dict(owners)

    def _spans(self) -> list[tuple[float, float, int]]:
        return [(w.t0, w.t1, w.samples) for w in self.windows]

    def _kept(self, top: int, keep: Collection[tuple[str, str]]) -> list[SymbolShare]:
        # The head by self share and by total share: the delta ranks by the latter.
        extra = [x for x in self.top(10**9, by="total") if (x.name, x.dso) in keep]
        return _union(self.top(top), self.top(top, by="total"), extra)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Profile:
        return _RecordedProfile.from_dict(d)


def sides_to_dicts(profiles: dict[str, Profile]) -> dict[str, dict[str, Any]]:
    """Profiles compared side by side, as a record keeps them: each side keeps
    its share of the others' heads too, so the delta read back is the one
    printed live (analysis.profile_delta ranks the heads' union)."""
    heads = {n: p.head() for n, p in profiles.items()}
    return {
        n: p.to_dict(keep=set().union(*(h for m, h in heads.items() if m != n)))
        for n, p in profiles.items()
    }


def _union(*lists: list[SymbolShare]) -> list[SymbolShare]:
    seen: dict[tuple[str, str], SymbolShare] = {}
    for items in lists:
        for s in items:
            seen.setdefault((s.name, s.dso), s)
    return list(seen.values())


@dataclass(frozen=True)
class _RecordedProfile(Profile):
    """A profile read back: symbols and totals, not the raw windows.

    It writes what it read (to_dict), so a record read and written again keeps
    its profiles as they were.
    """

    recorded_samples: int = 0
    recorded_cost_pct: float | None = None
    window_count: int = 0
    recorded_cpu_samples: int = 0
    recorded_owners: dict[str, int] = field(default_factory=dict)
    recorded_windows: tuple[tuple[float, float, int], ...] = ()  # (t0, t1, samples)

    @property
    def samples(self) -> int:
        return self.recorded_samples

    @property
    def cost_pct(self) -> float | None:
        return self.recorded_cost_pct

    def _cpu_samples(self) -> int:
        return self.recorded_cpu_samples

    def _owners(self) -> dict[str, int]:
        return dict(self.recorded_owners)

    def _spans(self) -> list[tuple[float, float, int]]:
        return list(self.recorded_windows)

    def _kept(self, top: int, keep: Collection[tuple[str, str]]) -> list[SymbolShare]:
        return list(self.symbols)  # as read: no re-ranking

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> _RecordedProfile:
        windows = [w for w in d.get("windows", ()) if isinstance(w, dict)]
        return cls(
            event=str(d.get("event", "?")),
            perf_version=d.get("perf_version"),
            frequency=int(d.get("frequency", 0)),
            cpus=tuple(int(c) for c in d.get("cpus", ())),
            notes=tuple(str(n) for n in d.get("notes", ())),
            na=d.get("na"),
            symbols=tuple(SymbolShare.from_dict(s) for s in d.get("symbols", ())),
            recorded_samples=int(d.get("samples", 0)),
            recorded_cost_pct=d.get("cost_pct"),
            window_count=len(d.get("windows", ())),
            recorded_cpu_samples=int(d.get("cpu_samples", 0)),
            recorded_owners={str(k): int(v) for k, v in dict(d.get("owners", {})).items()},
            recorded_windows=tuple(
                (float(w.get("t0", 0.0)), float(w.get("t1", 0.0)), int(w.get("samples", 0)))
                for w in windows
            ),
        )
