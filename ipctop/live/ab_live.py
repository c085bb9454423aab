"""The monitor's A/B (key a): the current setting against one changed option,
interleaved on the live engine in ABBA order, as `ipctop ab` does.

It runs on a worker thread and knows nothing of the UI: it restarts the live
source's pairs with A's or B's setting before each slot, measures the slot's
windows from the engine's counters, and reports an AbProgress after every
slot. However it ends (precision reached, time up, cancelled, an error), the
A setting is put back.
"""

from __future__ import annotations

import math
import shlex
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..analysis.stats import WINDOW_S, Difference
from ..analysis.stopping import SteinStop
from ..cpus import choose_cpus, read_topology
from ..engine.config import TIMING, RunConfig
from ..engine.engine import Engine
from ..engine.outside_cpu import OutsideCpu
from ..engine.workloads import OPTIONS
from ..errors import IpctopError, UsageError
from .ab_busy import BUSY_VERDICT, busy_note
from .sources import LiveSource

ORDER = "ABBA"  # a block of four cancels a linear drift of the box

# Option names as the command line spells them, onto RunConfig's fields.
_FLAGS = {"-w": "workload"}
_SWITCHES = {"--no-latency": ("latency", False), "--latency": ("latency", True)}


def parse_change(
    text: str, config: RunConfig, allowed: Iterable[int] | None = None
) -> dict[str, Any]:
    """B's options (e.g. '--placement cross') as changed RunConfig fields;
    a UsageError (one line) for an unknown option, a bad value or no change.

    ``allowed`` is the set B's --cpus is checked against: the live source's, read
    before it pinned the monitor; the calling thread's own affinity (the default)
    is a pinned monitor thread's single CPU, not the box's.
    """
    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"B {text!r}: {exc}") from None
    fields = set(RunConfig.model_fields) - set(TIMING)  # a side's timing is the A/B's
    change: dict[str, Any] = {}
    while tokens:
        flag = tokens.pop(0)
        value: str | None = None
        if "=" in flag and flag.startswith("--"):
            flag, value = flag.split("=", 1)
        if flag in _SWITCHES:
            name, on = _SWITCHES[flag]
            change[name] = on
            continue
        name = _FLAGS.get(flag, flag[2:].replace("-", "_") if flag.startswith("--") else "")
        if flag == "--pairs":
            raise UsageError("B: --pairs is not an A/B option here; + and - change the pairs")
        if name not in fields or name == "latency":
            raise UsageError(f"B: unknown option {flag!r} (e.g. --placement cross)")
        if value is None:
            if not tokens:
                raise UsageError(f"B: {flag} needs a value")
            value = tokens.pop(0)
        change[name] = _value(flag, name, value, allowed)
    new = config.changed(**change)
    if new == config:
        raise UsageError(f"B {text!r} is the current setting: nothing to compare")
    Engine(new).counters.close()  # validates workload x placement x engine now
    return {k: v for k, v in change.items() if getattr(config, k) != v}


def _value(flag: str, name: str, text: str, allowed: Iterable[int] | None) -> Any:
    if name == "cpus":
        return tuple(choose_cpus(text, read_topology(allowed=allowed)))
    if name in ("workload", "placement", "mode", "engine"):
        return text  # the Engine check names the choices
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"B: {flag} {text!r} is not a whole number") from None
    low = OPTIONS[name].low if name in OPTIONS else 0 if name == "think_ns" else 1
    if value < low:
        raise UsageError(f"B: {flag} must be {low} or more, not {value}")
    return value


@dataclass(frozen=True)
class AbProgress:
    """Where a live A/B stands; the last one has done=True and why it ended."""

    blocks: int  # whole ABBA blocks measured
    slot: str  # the side measured now ("A" or "B"), "" when done
    slots_done: int
    elapsed: float
    planned: float  # the time allowed (--max-seconds)
    difference: Difference | None  # B/A from the blocks so far (from 2 blocks)
    a_rate: float | None  # mean ops/s of A's and B's windows so far
    b_rate: float | None
    done: bool = False
    why: str = ""  # "precision reached", "time up", "stopped", or the error
    # Other processes' CPU since the A/B began, and why ops/s is not judged (live/ab_busy.py).
    outside_pct: float | None = None
    not_judged: str = ""

    @property
    def verdict(self) -> str:
        """The difference's verdict, unless a busy box leaves ops/s unjudged."""
        if self.not_judged:
            return BUSY_VERDICT
        return self.difference.verdict if self.difference is not None else ""

    @property
    def fraction(self) -> float:
        """Of the time allowed: what a progress bar shows (a run may end early)."""
        if self.done:
            return 1.0
        return min(self.elapsed / self.planned, 1.0) if self.planned > 0 else 0.0


class LiveAB:
    """One A/B on a live source; run() blocks (a worker thread), cancel() from any thread."""

    def __init__(
        self,
        source: LiveSource,
        change: dict[str, Any],
        *,
        window: float = 1.0,
        settle: float = 0.5,
        precision_pct: float = 2.0,
        max_seconds: float = 60.0,
        on_progress: Callable[[AbProgress], None] | None = None,
    ) -> None:
        if not math.isfinite(precision_pct) or precision_pct <= 0:
            raise UsageError(f"precision must be above 0 %, not {precision_pct!r}")
        self.source = source
        self.b = dict(change)
        self.a = {k: getattr(source.engine.config, k) for k in change}
        self.pairs = source.pair_count()
        self.window, self.settle = window, settle
        self.precision_pct, self.max_seconds = precision_pct, max_seconds
        self.on_progress = on_progress
        self.blocks: list[tuple[list[float], list[float]]] = []
        self.stop_rule = SteinStop(precision_pct)
        self._cancel = threading.Event()
        self._outside: OutsideCpu | None = None

    def cancel(self) -> None:
        self._cancel.set()

    def run(self) -> AbProgress:
        t0 = time.monotonic()
        self._outside = OutsideCpu()
        why = ""
        last: AbProgress | None = None
        try:
            why = self._interleave(t0)
        except (IpctopError, OSError, RuntimeError) as exc:
            why = f"error: {exc}"
        finally:
            try:
                self._restore()
            except (IpctopError, OSError, RuntimeError) as exc:
                why = f"{why}; A could not be restored: {exc}"
        last = self._progress(t0, "", done=True, why=why)
        self._tell(last)
        return last

    def _restore(self) -> None:
        """A back on every way out, with its pairs: a restart that failed part
        way (a pair that did not start) leaves fewer than it found."""
        self.source.reconfigure(**self.a)
        while self.source.pair_count() < self.pairs:
            self.source.add_pair()

    def _interleave(self, t0: float) -> str:
        slots = 0
        while True:
            got: dict[str, list[float]] = {"A": [], "B": []}
            for name in ORDER:
                self._tell(self._progress(t0, name, slots=slots))
                self.source.reconfigure(**(self.a if name == "A" else self.b))
                if self._cancel.wait(self.settle):
                    return "stopped"
                windows = self._measure()
                if windows is None:
                    return "stopped"
                got[name].extend(windows)
                slots += 1
            self.blocks.append((got["A"], got["B"]))
            if self.stop_rule.done(self.blocks):
                return "precision reached"
            per_block = (time.monotonic() - t0) / len(self.blocks)
            if time.monotonic() - t0 + per_block > self.max_seconds:
                return "time up"

    def _measure(self) -> list[float] | None:
        """Total ops/s of the pairs over each WINDOW_S of the slot; None if cancelled."""
        engine = self.source.engine
        step = min(WINDOW_S, self.window)
        out = []
        t, ops = time.monotonic(), _total_ops(engine)
        end = t + self.window
        while end - t > step / 2:
            if self._cancel.wait(min(step, end - t)):
                return None
            t1, ops1 = time.monotonic(), _total_ops(engine)
            out.append((ops1 - ops) / (t1 - t))
            t, ops = t1, ops1
        return out

    def _difference(self) -> Difference | None:
        return self.stop_rule.difference(self.blocks) if len(self.blocks) >= 2 else None

    def _progress(self, t0: float, slot: str, slots: int = -1, **kw: Any) -> AbProgress:
        a = [x for blk, _ in self.blocks for x in blk]
        b = [x for _, blk in self.blocks for x in blk]
        # The live A/B judges ops/s only, which moves with other processes' load.
        outside = self._outside.pct() if self._outside else None
        busy = busy_note(outside, "ops", "rerun on a quiet box, or `ipctop ab --metric cpu`")
        return AbProgress(
            blocks=len(self.blocks),
            slot=slot,
            slots_done=slots if slots >= 0 else len(self.blocks) * len(ORDER),
            elapsed=time.monotonic() - t0,
            planned=self.max_seconds,
            difference=self._difference(),
            a_rate=sum(a) / len(a) if a else None,
            b_rate=sum(b) / len(b) if b else None,
            outside_pct=busy.outside_pct,
            not_judged=busy.not_judged,
            **kw,
        )

    def _tell(self, p: AbProgress) -> None:
        if self.on_progress is not None:
            self.on_progress(p)


def _total_ops(engine: Engine) -> int:
    """A thread's ops are its rounds (the README's convention), summed over every end."""
    return sum(engine.counters.rounds(e.slot) for e in engine.ends())


def describe(change: dict[str, Any]) -> str:
    """'--placement cross' back from the fields, for the header and the verdict."""
    parts = []
    for k, v in change.items():
        flag = "--" + k.replace("_", "-")
        if isinstance(v, bool):
            parts.append(flag if v else f"--no-{k.replace('_', '-')}")
        elif isinstance(v, tuple):
            parts.append(f"{flag} {','.join(map(str, v))}")
        else:
            parts.append(f"{flag} {v}")
    return " ".join(parts)
