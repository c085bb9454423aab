"""Many rows' histories kept one array a sample, each row's built when it is drawn.

At 2,048 threads a deque per thread cost the UI thread a Python call per
thread per sample (12 ms a frame at 1,024 pairs) for histories of which the
threads table shows some thirty. Here a sample is one array of values in the
sample's own key order, stored whole (a C-speed copy); while the keys do not
change they are one tuple, shared, and the samples since form one segment. A
row's history is a view that reads its column out of the segments when a
sparkline asks, and the shared ceiling is one max() over the sample's array.

A key's history is the run of samples that held it up to now, as a deque of
its own was: a key that leaves loses its past, one that comes back starts
afresh. When the keys change the new segment costs O(n) once; when some left,
the per-sample peaks of the older samples are taken again over the keys that
stayed, so a removed key's past no longer holds the ceiling up.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Hashable, Iterator, Mapping, Sequence
from itertools import chain, islice
from operator import itemgetter
from typing import Generic, TypeVar, overload

K = TypeVar("K", bound=Hashable)

Part = tuple["deque[array[float]]", int]  # a segment's rows and the key's column in them


class _Segment(Generic[K]):
    """Samples that share one key tuple: rows of values in that order."""

    __slots__ = ("keys", "index", "rows")

    def __init__(self, keys: tuple[K, ...], maxlen: int) -> None:
        self.keys = keys
        self.index = {k: i for i, k in enumerate(keys)}
        self.rows: deque[array[float]] = deque(maxlen=maxlen)


class Columns(Generic[K]):
    """Per key, the last `maxlen` values of the samples that held it, stored by sample."""

    def __init__(self, maxlen: int) -> None:
        self.maxlen = maxlen
        #: the latest sample's keys; the same object while they do not change
        self.keys: tuple[K, ...] = ()
        self._segments: deque[_Segment[K]] = deque([_Segment((), maxlen)])
        # Per sample of the current segment, its highest value (every key in it is alive).
        self._peaks: deque[float] = deque(maxlen=maxlen)
        # Per sample before it, the highest value of a key alive now whose run covers it.
        self._old_peaks: deque[float] = deque()
        # Bumped when a segment comes or goes: a history view's parts stand until then.
        self.version = 0

    def append(self, keys: tuple[K, ...], values: array[float]) -> None:
        """One sample: values[i] is keys[i]'s (no key twice)."""
        if keys is not self.keys and keys != self.keys:
            self._new_keys(keys)
        self._segments[-1].rows.append(values)
        self._peaks.append(max(values, default=0.0))
        if len(self._segments) > 1 and len(self._old_peaks) + len(self._peaks) > self.maxlen:
            first = self._segments[0]
            first.rows.popleft()
            self._old_peaks.popleft()
            if not first.rows:
                self._segments.popleft()
                self.version += 1

    def _new_keys(self, keys: tuple[K, ...]) -> None:
        new = _Segment(keys, self.maxlen)
        if not self._segments[-1].rows:
            self._segments.pop()  # nothing was stored under the old keys (the first sample)
        elif any(k not in new.index for k in self.keys):
            self._old_peaks = self._peaks_over(new.index)
        else:
            # Only keys added: every key of the older samples is alive, their peaks stand.
            self._old_peaks.extend(self._peaks)
        self._segments.append(new)
        self.version += 1
        self._peaks = deque(maxlen=self.maxlen)
        self.keys = keys

    def _peaks_over(self, alive: Mapping[K, int]) -> deque[float]:
        """Per stored sample, the highest value of a key of `alive` whose run reaches it
        (a run is unbroken: the keys that reach a segment reach every later one)."""
        covering = set(alive)
        out: list[list[float]] = []
        for seg in reversed(self._segments):
            covering &= seg.index.keys()
            idx = [seg.index[k] for k in covering]
            if not idx:
                out.append([0.0] * len(seg.rows))
            elif len(idx) == 1:
                out.append([row[idx[0]] for row in seg.rows])
            else:
                get = itemgetter(*idx)  # the columns picked at C speed
                out.append([max(get(row)) for row in seg.rows])
        return deque(chain.from_iterable(reversed(out)))

    def ceiling(self, width: int) -> float:
        """The highest value any key alive holds in the last `width` samples (all: <= 0)."""
        peaks, old = self._peaks, self._old_peaks
        top = max(peaks if width <= 0 else islice(reversed(peaks), width), default=0.0)
        more = len(old) if width <= 0 else width - len(peaks)
        if more > 0 and old:
            top = max(top, max(islice(reversed(old), more)))
        return max(top, 0.0)

    def parts(self, key: K) -> list[Part]:
        """Where key's history lies, oldest first (empty when it is not alive)."""
        out: list[Part] = []
        for seg in reversed(self._segments):
            i = seg.index.get(key)
            if i is None:
                break
            out.append((seg.rows, i))
        out.reverse()
        return out

    def history(self, key: K) -> History:
        return History(self, key)


class History(Sequence[float]):
    """One key's history, read out of the columns on each use: it grows with them,
    as the live deque it stands for did; once the key has left, the part taken
    when the view was made (the thread's last rows stay drawn until the next step)."""

    __slots__ = ("_columns", "_key", "_taken", "_version", "_now")

    def __init__(self, columns: Columns[K], key: K) -> None:
        self._columns: Columns[K] = columns
        self._key = key
        self._taken = self._now = columns.parts(key)
        self._version = columns.version

    def _parts(self) -> list[Part]:
        # A sparkline asks for the length and then the tail: the parts are looked up
        # again only after the columns' segments changed.
        if self._version != self._columns.version:
            self._version = self._columns.version
            self._now = self._columns.parts(self._key) or self._taken
        return self._now

    def __len__(self) -> int:
        return sum(len(rows) for rows, _ in self._parts())

    # Iterators over the rows' column at C speed (map, itemgetter): a sparkline
    # reads some 40 values of each of some 30 rows a redraw.
    def __iter__(self) -> Iterator[float]:
        return chain.from_iterable(map(itemgetter(i), rows) for rows, i in self._parts())

    def __reversed__(self) -> Iterator[float]:
        parts = self._parts()
        if len(parts) == 1:
            rows, i = parts[0]
            return map(itemgetter(i), reversed(rows))
        return chain.from_iterable(map(itemgetter(i), reversed(rows)) for rows, i in parts[::-1])

    @overload
    def __getitem__(self, index: int) -> float: ...
    @overload
    def __getitem__(self, index: slice) -> list[float]: ...
    def __getitem__(self, index: int | slice) -> float | list[float]:
        if isinstance(index, slice):
            return list(self)[index]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(index)
        for rows, i in self._parts():
            if index < len(rows):
                return rows[index][i]
            index -= len(rows)
        raise IndexError(index)  # pragma: no cover (n counted the same parts)

    def __repr__(self) -> str:
        return f"History({list(self)!r})"


class HistoryMap(Mapping[K, History]):
    """The alive keys' histories as a mapping, in the latest sample's key order."""

    __slots__ = ("_columns",)

    def __init__(self, columns: Columns[K]) -> None:
        self._columns = columns

    def __getitem__(self, key: K) -> History:
        if key not in self._columns._segments[-1].index:
            raise KeyError(key)
        return History(self._columns, key)

    def __contains__(self, key: object) -> bool:
        return key in self._columns._segments[-1].index

    def __iter__(self) -> Iterator[K]:
        return iter(self._columns.keys)

    def __len__(self) -> int:
        return len(self._columns.keys)
