"""Per-round latency: the histogram block the native ends write, and what it says.

Each end owns one area of a MAP_SHARED block (indexed like its counter slot):
the stamp of its last timed post, the round trip it saw (its post to its next
wake-up) and the one-way wake-up latency (its peer's stamp to its own wake-up),
as log-linear histograms (see native.h). The sampler takes differences of the
live counts without stopping the loops; percentiles are bucket midpoints, within
0.8 % of the true value.
"""

from __future__ import annotations

import mmap
import operator
import threading
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, NamedTuple

from ..plain import to_plain

if TYPE_CHECKING:  # the engine's pairs, for the annotations only
    from .end_launch import End, Pair

# The layout of native.h; the module checks its constants against these.
AREA = 32768
BUCKETS = 1984
SUB, HALF, TOP_BIT = 128, 64, 36
RTT_OFFSET = 128
HIST_BYTES = 8 * (1 + BUCKETS)  # the sum, then the counts: what a reading hands out
USED_WORDS = BUCKETS // 64  # after the counts, a bit per bucket that ever counted
ONEWAY_OFFSET = RTT_OFFSET + HIST_BYTES + 8 * USED_WORDS
PAUSED_OFFSET = 64
SNAP_BYTES = 2 * HIST_BYTES  # a tracker's copy of one end: round trip, then one-way
QUANTILES = (0.5, 0.99, 0.999)


def bucket_of(ns: int) -> int:
    """The bucket an end counts `ns` in (lat_bucket in native.h)."""
    if ns < SUB:
        return max(0, ns)
    e = ns.bit_length() - 1
    if e >= TOP_BIT:
        return BUCKETS - 1
    return SUB + (e - 7) * HALF + ((ns >> (e - 6)) - HALF)


def bucket_range(i: int) -> tuple[int, int]:
    """Lowest value and width of bucket i."""
    if i < SUB:
        return i, 1
    e = 7 + (i - SUB) // HALF
    width = 1 << (e - 6)
    return (HALF + (i - SUB) % HALF) * width, width


def bucket_mid(i: int) -> float:
    low, width = bucket_range(i)
    return low + width / 2 if width > 1 else float(low)


class LatencyBlock:
    """One area per counter slot, zeroed when the slot is handed out."""

    def __init__(self, capacity: int) -> None:
        # Anonymous and shared: forked ends write the pages the monitor reads;
        # untouched areas cost no memory.
        self.buf = mmap.mmap(-1, capacity * AREA)

    def clear(self, slot: int) -> None:
        off = slot * AREA
        self.buf[off : off + AREA] = bytes(AREA)

    def pause(self, slot: int, paused: bool) -> None:
        """Stop (or resume) timing one end without stopping its loop: the cost bench."""
        off = slot * AREA + PAUSED_OFFSET
        self.buf[off : off + 4] = int(paused).to_bytes(4, "little")

    def close(self) -> None:
        self.buf.close()


def empty() -> bytearray:
    return bytearray(HIST_BYTES)


_OBJECTS: list[Any] = []  # engine.objects, imported once, not by an import statement a call


def _lib() -> Any:
    """The extension, or None: read from engine.objects on every call (tests set it to None)."""
    if not _OBJECTS:
        from . import objects  # here, not at the top: objects imports this module

        _OBJECTS.append(objects)
    return _OBJECTS[0]._native


@dataclass(frozen=True, slots=True)
class LatencySummary:
    """One histogram over one interval, in nanoseconds (None when nothing was timed)."""

    n: int
    mean: float | None
    p50: float | None
    p99: float | None
    p999: float | None
    max: float | None

    def to_dict(self) -> dict[str, Any]:
        # Kept for its rounding: three significant digits, the buckets resolve 0.8 %, not more.
        return to_plain(self.rounded())

    def rounded(self) -> LatencySummary:
        """As a record keeps it: three significant digits."""
        return LatencySummary(
            self.n, *(_sig3(getattr(self, k)) for k in ("mean", "p50", "p99", "p999", "max"))
        )


# What an older matrix record's cell without a direction read as.
NOTHING_TIMED = LatencySummary(0, None, None, None, None, None)


def _sig3(v: float | None) -> float | None:
    if v is None:
        return None
    return float(f"{v:.3g}")


def summarize(acc: bytes | bytearray) -> LatencySummary:
    """Percentiles of a histogram (the layout of struct lat_hist)."""
    _native = _lib()
    if _native is not None:
        return _summary(_native.lat_summary(acc, QUANTILES))
    return _summary(_summary_py(acc, QUANTILES))


Raw = tuple[int, int, tuple[float | None, ...], float | None]  # count, sum, quantiles, max


def _summary(got: Raw) -> LatencySummary:
    n, total, vals, mx = got
    p50, p99, p999 = vals  # QUANTILES
    return LatencySummary(n, total / n if n else None, p50, p99, p999, mx)


def _summary_py(
    acc: bytes | bytearray, qs: tuple[float, ...]
) -> tuple[int, int, tuple[float | None, ...], float | None]:
    """The same walk as lat_summary in latency.c, for a box without the extension."""
    words = memoryview(acc).cast("Q")
    counts = words[1 : 1 + BUCKETS]
    total = sum(counts)
    used = [i for i in range(BUCKETS) if counts[i]]
    if not total:
        return 0, words[0], tuple(None for _ in qs), None
    out, run, i = [], 0, 0
    for q in qs:
        want = max(1.0, q * total)
        while i < BUCKETS and run + counts[i] < want:
            run += counts[i]
            i += 1
        out.append(bucket_mid(min(i, used[-1])))
    return total, words[0], tuple(out), bucket_mid(used[-1])


def take(src: Any, offset: int, prev: bytearray, acc: bytearray) -> None:
    """acc += histogram at src[offset:] - prev; prev = that histogram."""
    _native = _lib()
    if _native is not None:
        _native.lat_take(src, offset, prev, acc)
        return
    cur = memoryview(src)[offset : offset + HIST_BYTES].cast("Q")
    p, a = memoryview(prev).cast("Q"), memoryview(acc).cast("Q")
    for i in range(1 + BUCKETS):
        if cur[i] > p[i]:
            a[i] += cur[i] - p[i]
        p[i] = cur[i]


def histogram(acc: bytes | bytearray) -> list[tuple[float, int]]:
    """(bucket midpoint in ns, count) of the buckets used: what a plot draws."""
    counts = memoryview(acc).cast("Q")[1 : 1 + BUCKETS]
    return [(bucket_mid(i), c) for i, c in enumerate(counts) if c]


def format_ns(ns: float | None) -> str:
    """3 significant digits with a unit: 812ns, 12.3µs, 4.56ms (µs as everywhere on screen)."""
    if ns is None:
        return "-"
    if ns < 0:
        return "-" + format_ns(-ns)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g}{unit}"
    return f"{ns:.3g}ns"


@dataclass(frozen=True, slots=True)
class PairLatency:
    """One pair over one interval: the round trip as A sees it, and the one-way
    wake-up latency of both directions (A to B and B to A)."""

    pair: int
    rtt: LatencySummary
    oneway: LatencySummary

    def to_dict(self) -> dict[str, Any]:
        # Kept for its rounding (LatencySummary.rounded).
        return to_plain(self.rounded())

    def rounded(self) -> PairLatency:
        return PairLatency(self.pair, self.rtt.rounded(), self.oneway.rounded())


def record(buf: Any, offset: int, ns: int) -> None:
    """Count one value in the histogram at buf[offset:] as an end does (lat_add in
    native.h): its bucket, the sum and the bucket's used bit. For tests and benches."""
    words = memoryview(buf)[offset : offset + HIST_BYTES + 8 * USED_WORDS].cast("Q")
    i = bucket_of(ns)
    words[1 + BUCKETS + i // 64] |= 1 << (i % 64)
    words[1 + i] += 1
    words[0] += ns
    del words


class _Layout(NamedTuple):
    """What a reading needs of a list of pairs: made again only when the list
    changes (by identity, as Pair.ends is set once) or an end's tid does."""

    pairs: list[Pair]  # the list it was made of
    chosen: list[tuple[int, int, int]]  # (pair, A slot, B slot) of each two-end pair
    ends: list[End]  # their A and B, in that order
    tids: list[int]  # each one's tid when the layout was made
    slots: array[int]  # int32, as `ends`
    tid_words: array[int]  # int64, as `ends`
    indexes: list[int]  # each chosen pair's index


def _layout(pairs: list[Pair]) -> _Layout:
    two = [pair for pair in pairs if len(pair.ends) == 2]
    chosen = [(pair.index, pair.ends[0].slot, pair.ends[1].slot) for pair in two]
    ends = [end for pair in two for end in pair.ends]
    tids = [end.tid for end in ends]
    slots = array("i", [slot for _, a, b in chosen for slot in (a, b)])
    return _Layout(
        list(pairs), chosen, ends, tids, slots, array("q", tids), [i for i, _, _ in chosen]
    )


def _same(pairs: list[Pair], known: list[Pair]) -> bool:
    return len(pairs) == len(known) and all(map(operator.is_, pairs, known))


class Tracker:
    """Each end's histograms since the previous reading of this tracker.

    Several trackers may read one block (the live sampler, a measured window):
    reading changes nothing the ends or other trackers see. A tracker keeps two
    copies of each end's histograms, as of its last two readings: a reading
    overwrites the older with what the ends hold now, and what it hands out
    (`last`) is their difference, made only when asked.
    """

    def __init__(self, block: LatencyBlock) -> None:
        self.block = block
        slots = len(block.buf) // AREA
        # Anonymous maps: only the slots of ends actually read are ever backed by memory.
        self._snap = mmap.mmap(-1, max(1, slots) * SNAP_BYTES)
        self._old = mmap.mmap(-1, max(1, slots) * SNAP_BYTES)
        self._claimed = array("q", [-1]) * max(1, slots)  # the tid each slot was read for
        self._lay: _Layout | None = None
        self._read: list[tuple[int, int, int]] = []  # the last reading's (pair, A slot, B slot)
        self._all = (empty(), empty())  # the last reading's pairs summed: rtt, one-way
        self._lock = threading.Lock()  # `last` is asked from the UI while the sampler reads

    def _claim(self, slot: int, tid: int) -> None:
        """A slot read for a new end starts from zero: everything since it started."""
        if self._claimed[slot] != tid:
            off = slot * SNAP_BYTES
            self._snap[off : off + SNAP_BYTES] = _ZERO_SNAP
            self._old[off : off + SNAP_BYTES] = _ZERO_SNAP
            self._claimed[slot] = tid

    def _layout_of(self, pairs: list[Pair]) -> _Layout:
        lay = self._lay
        if lay is None or not _same(pairs, lay.pairs):
            lay = self._lay = _layout(pairs)
            return lay
        tids = list(map(_TID, lay.ends))  # an end that was starting has its tid now
        if tids != lay.tids:
            lay = self._lay = lay._replace(tids=tids, tid_words=array("q", tids))
        return lay

    def read(self, pairs: list[Pair]) -> list[PairLatency]:
        """One PairLatency per two-end pair, summed into the all-pairs figure as read."""
        lay = self._layout_of(pairs)
        all_rtt, all_oneway = empty(), empty()
        with self._lock:
            # The copy two readings old is written over; the last one is what it differs from.
            self._snap, self._old = self._old, self._snap
            _native = _lib()
            if _native is not None and hasattr(_native, "lat_pairs"):
                got: list[PairLatency] = _native.lat_pairs(
                    self.block.buf, self._snap, self._old, self._claimed, lay.slots,
                    lay.tid_words, all_rtt, all_oneway, QUANTILES, lay.indexes, _MADE,
                )  # fmt: skip
            else:
                for slot, tid in zip(lay.slots, lay.tids):
                    self._claim(slot, tid)
                got = [
                    PairLatency(index, _summary(rtt), _summary(oneway))
                    for (index, _, _), (rtt, oneway) in zip(
                        lay.chosen, self._read_each(lay.chosen, all_rtt, all_oneway)
                    )
                ]
            self._read = lay.chosen
            self._all = (all_rtt, all_oneway)
        return got

    def _read_each(
        self, chosen: list[tuple[int, int, int]], all_rtt: bytearray, all_oneway: bytearray
    ) -> list[tuple[Raw, Raw]]:
        """lat_read's reading, a histogram at a time: for a box without the extension."""
        out = []
        for _, a, b in chosen:
            hists = []
            for slot, offset, part in (
                (a, RTT_OFFSET, 0),
                (a, ONEWAY_OFFSET, 1),
                (b, ONEWAY_OFFSET, 1),
            ):
                off = slot * SNAP_BYTES + part * HIST_BYTES
                prev, acc = bytearray(self._old[off : off + HIST_BYTES]), empty()
                take(self.block.buf, slot * AREA + offset, prev, acc)
                self._snap[off : off + HIST_BYTES] = prev
                hists.append(acc)
            rtt, oneway = hists[0], merged(hists[1], hists[2])
            add(all_rtt, rtt)
            add(all_oneway, oneway)
            out.append((_summary_py(rtt, QUANTILES), _summary_py(oneway, QUANTILES)))
        return out

    def _diff(self, slot: int, part: int) -> bytearray:
        """One end's histogram (0: round trip, 1: one-way) over the last reading's interval."""
        off = slot * SNAP_BYTES + part * HIST_BYTES
        acc = empty()
        take(self._snap, off, bytearray(self._old[off : off + HIST_BYTES]), acc)
        return acc

    @property
    def last(self) -> dict[int, tuple[bytearray, bytearray, bytearray]]:
        """pair -> (round trip of A, one-way A to B, one-way B to A) of the last reading."""
        with self._lock:
            return {index: self._trio(a, b) for index, a, b in self._read}

    def last_of(self, pair: int) -> tuple[bytearray, bytearray, bytearray] | None:
        """`last` of one pair (None: not in the last reading), without the others'."""
        with self._lock:
            return next((self._trio(a, b) for i, a, b in self._read if i == pair), None)

    def _trio(self, a: int, b: int) -> tuple[bytearray, bytearray, bytearray]:
        return self._diff(a, 0), self._diff(b, 1), self._diff(a, 1)

    def all_pairs(self) -> PairLatency:
        """Every pair of the last reading as one (pair -1)."""
        rtt, oneway = self._all
        return PairLatency(-1, summarize(rtt), summarize(oneway))

    def readings(self, pairs: list[Pair]) -> tuple[PairLatency, ...]:
        """What a sample carries: one per pair, and all pairs (-1) when several."""
        got = self.read(pairs)
        if len(got) > 1:
            got.append(self.all_pairs())
        return tuple(got)


_ZERO_SNAP = bytes(SNAP_BYTES)
_TID = operator.attrgetter("tid")
#: what lat_pairs makes each pair's figures into (QUANTILES are the summary's p fields)
_MADE = (
    PairLatency, tuple(f.name for f in fields(PairLatency)),
    LatencySummary, tuple(f.name for f in fields(LatencySummary)),
)  # fmt: skip


def overall(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The all-pairs entry of a sample's list: -1, or the only pair."""
    for d in entries:
        if d.get("pair") == -1:
            return d
    return entries[0] if len(entries) == 1 else None


def whole(readings: Sequence[PairLatency]) -> PairLatency | None:
    """The all-pairs reading of a sample: -1, or the only pair."""
    for p in readings:
        if p.pair == -1:
            return p
    return readings[0] if len(readings) == 1 else None


def add(acc: bytearray, *hists: bytes | bytearray) -> None:
    """acc += each histogram."""
    _native = _lib()
    if _native is not None:
        _native.lat_add(acc, *hists)
        return
    a = memoryview(acc).cast("Q")
    for h in hists:
        words = memoryview(h).cast("Q")
        for i in range(1 + BUCKETS):
            a[i] += words[i]


def merged(*hists: bytes | bytearray) -> bytearray:
    """The sum of histograms, as one."""
    out = empty()
    add(out, *hists)
    return out
