"""A record's scaling curve shown beside the live one (--baseline FILE, key b).

No Textual here: the scaling panel and the baseline bar read a Baseline.
Diff [%] is (live - baseline) / baseline at the same pair count, as in the
seeds' kernel-vs-kernel tables.
"""

from __future__ import annotations

import glob
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from ..analysis.point_diff import PointVerdict, judge_points, point_difference
from ..analysis.scaling import ScalingPoint, diff_pct
from ..analysis.stats import Difference
from ..errors import RecordError
from ..output.records.record import Record, record_points
from ..output.records.record_io import read_record
from ..output.records.spread_store import find_spread, read_spreads
from ..output.text.compare_records import SAME_KEYS
from .sources import RunInfo


@dataclass(frozen=True)
class Baseline:
    record: Record
    points: tuple[ScalingPoint, ...]
    path: str

    @property
    def kernel(self) -> str:
        return self.record.box.kernel

    @property
    def cpu_model(self) -> str:
        return self.record.box.cpu

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def label(self) -> str:
        """The chart legend without a run to compare with: the record's name."""
        return f"baseline {self.name}"

    def differences(self, info: RunInfo) -> list[str]:
        """What the record ran differently from this run, in its own values: "placement same".

        A baseline is named by these: one named after its kernel reads as one
        kernel against another even when the kernel is the same and the
        placement is what differs (the demo's same-core curve).
        """
        out = []
        for key in ("workload", "placement", "mode", "engine"):
            theirs = getattr(self.record.config, key, None)
            if theirs is not None and theirs != getattr(info.config, key):
                out.append(f"{key} {theirs}")
        if self.record.box.kernel_release and self.kernel != info.kernel:
            out.append(f"kernel {self.kernel}")
        return out

    def label_for(self, info: RunInfo | None) -> str:
        """The legend and the verdict's "vs ...": what differs, or that nothing does."""
        if info is None:
            return self.label
        differs = self.differences(info)
        if not differs:
            return f"baseline {self.name} (same settings)"
        return f"baseline {', '.join(differs)}"

    @cached_property
    def _spread(self) -> tuple[float | None, float]:
        """(s.d. %, its degrees of freedom): the session spread the record measured
        (check --sessions), else the one stored for its box and this one (as compare
        finds it), else none: the runs' spread stands in and the verdict says so."""
        s = self.record.sessions
        if s is not None:
            # The spread of a session's mean with its K - 1 df, never a truncated 0.
            return s.term()
        here = os.uname()
        cfg = self.record.config
        try:
            found = find_spread(
                read_spreads(),
                [(self.record.box.hostname, self.record.box.kernel_release),
                 (here.nodename, here.release)],
                cfg.workload, cfg.cpus, cfg.placement, cfg.mode,
            )  # fmt: skip
        except RecordError:
            return None, math.inf  # a broken store costs the session term, not the Diff
        if found.spread is None:
            return None, math.inf
        return found.spread.term()

    @property
    def session_sd_pct(self) -> float | None:
        """This box's session spread: the record's, else the one stored for this box."""
        return self._spread[0]

    @property
    def session_df(self) -> float:
        return self._spread[1]

    def difference(self, theirs: ScalingPoint, live: ScalingPoint) -> Difference:
        """live/theirs across sessions (analysis.point_diff), with the record's
        session spread when it has one."""
        return point_difference(theirs, live, self.session_sd_pct, self.session_df)

    def verdicts(self, live: Sequence[ScalingPoint]) -> dict[int, PointVerdict]:
        """The verdict of every settled live point the baseline also has, by pair
        count, Holm-adjusted over them all: the screen judges them together."""
        mine = {p.pairs: p for p in live if p.settled}
        pairs = [(p, mine[p.pairs]) for p in self.points if p.pairs in mine]
        return judge_points(pairs, self.session_sd_pct, self.session_df)

    def total_at(self, pairs: int) -> float | None:
        for p in self.points:
            if p.pairs == pairs:
                return p.total_ops_per_s
        return None

    def diff_at(self, pairs: int, live_total: float | None) -> float | None:
        """(live - baseline) / baseline x 100 at this pair count; None without both."""
        return diff_pct(self.total_at(pairs), live_total)

    def mismatches(self, info: RunInfo) -> list[str]:
        """What differs from the live run and makes the diff unfair: "workload sysv-sem"."""
        out = []
        for key in SAME_KEYS:
            theirs = getattr(self.record.config, key, None)
            if theirs != getattr(info.config, key):
                out.append(f"{key} {theirs}")
        return out


def load_baseline(path: str | os.PathLike[str]) -> Baseline:
    """Read a record as a baseline; RecordError (one line) when it cannot be used."""
    record = read_record(path)
    points = tuple(record_points(record))
    if not points:
        raise RecordError(f"{record.name} has no scaling points to compare against")
    return Baseline(record, points, os.fspath(path))


def newest_record(directory: str | os.PathLike[str]) -> str | None:
    """The most recently written ipctop-*.json in directory: the likely baseline."""
    found = glob.glob(os.path.join(os.fspath(directory), "ipctop-*.json"))
    return max(found, key=os.path.getmtime) if found else None
