"""StallWatch.update against the per-pair reading it replaced (a reference kept here).

The live watch now copies the progress dict and passes over the pairs only when
one is still; its events and stalled pairs must be the reference's, reading for
reading, through pairs that stop, resume, leave and come back.
"""

from __future__ import annotations

import random

from ipctop.engine.stalls import STALL, StallWatch


class Reference:
    """StallWatch.update as it was until 2026-12-07: a (count, when) tuple per pair."""

    def __init__(self, stall_s: float) -> None:
        self.stall_s = stall_s
        self._last: dict[int, tuple[int, float]] = {}
        self._since: dict[int, float] = {}

    def update(self, now: float, progress: dict[int, int]) -> tuple[tuple[int, ...], list[str]]:
        events = []
        for pair in [p for p in self._last if p not in progress]:
            del self._last[pair]
            self._since.pop(pair, None)
        for pair, count in progress.items():
            seen = self._last.get(pair)
            if seen is None or count != seen[0]:
                self._last[pair] = (count, now)
                since = self._since.pop(pair, None)
                if since is not None:
                    events.append(
                        f"{STALL} pair {pair} resumed after {now - since:.1f} s without a round"
                    )
                continue
            if pair not in self._since and now - seen[1] >= self.stall_s:
                self._since[pair] = seen[1]
                events.append(
                    f"{STALL} pair {pair} made no round for {now - seen[1]:.1f} s (an end "
                    f"stopped, or starved of CPU); its windows are left out of the rates"
                )
        return tuple(sorted(self._since)), events


def test_the_watch_says_what_the_reference_says_reading_by_reading() -> None:
    rng = random.Random(29)
    live, ref = StallWatch(0.5), Reference(2.0)
    counts = {p: 0 for p in range(12)}
    said = 0
    for k in range(600):
        now = 0.5 * k + rng.uniform(0, 0.1)
        for p in list(counts):
            if rng.random() < 0.01:
                del counts[p]  # removed
            elif rng.random() < 0.7 - 0.6 * (p % 3 == 0):  # every third pair stalls often
                counts[p] += rng.randint(1, 50)
        for p in range(12):
            if p not in counts and rng.random() < 0.05:
                counts[p] = rng.choice([0, 7])  # re-added: a count it may have had before
        progress = dict(counts)
        got, want = live.update(now, progress), ref.update(now, progress)
        assert got == want, k
        said += len(want[1])
    assert said > 20  # the sequence made both kinds of event, often


def test_a_pair_is_stalled_after_stall_s_and_resumes() -> None:
    watch = StallWatch(0.5)
    assert watch.update(0.0, {0: 5, 1: 5}) == ((), [])
    assert watch.update(1.0, {0: 6, 1: 5}) == ((), [])
    stalled, events = watch.update(2.5, {0: 7, 1: 5})
    assert stalled == (1,)
    assert events == [
        f"{STALL} pair 1 made no round for 2.5 s (an end stopped, or starved of CPU); "
        "its windows are left out of the rates"
    ]
    assert watch.update(3.0, {0: 8, 1: 9}) == (
        (),
        [f"{STALL} pair 1 resumed after 3.0 s without a round"],
    )
