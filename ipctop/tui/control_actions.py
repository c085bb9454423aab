"""Keys that change the pairs: add, remove, workload, placement, mode, compare.

Every engine call can block (fork, join), so it runs in a thread worker and
reports back with call_from_thread; `_busy` counts the calls in flight (the
auto-sweep and the demo wait for it). Mixed into IpctopApp.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine.placement import MODES, PLACEMENTS
from ..engine.workloads import WORKLOADS
from ..errors import IpctopError
from ..live.mechanisms import next_mechanism
from .host import AppHost
from .screens.prompts import ChoiceScreen

PLACEMENT_HELP = {
    "same": "both ends on one CPU (the seeds' layout)",
    "cross": "A on one CPU, B on the next: every wake-up crosses CPUs",
    "free": "unpinned: the scheduler decides",
}


class ControlActions:
    """Uses the app's source, info, _say, run_worker, call_from_thread and push_screen."""

    _busy = 0  # control operations in flight

    def _control(
        self: AppHost, what: str, fn: Callable[..., str], *args: Any, **kwargs: Any
    ) -> None:
        if not self.source.controllable:
            self._say(f"{self.info.source} source: cannot {what}", "warning")
            return
        if getattr(self, "ab_running", False):  # it would change A or B under the A/B
            self._say(f"an A/B is running: cannot {what} (escape stops it)", "warning")
            return
        self._busy += 1

        def work() -> None:
            error = ""
            result = ""
            try:
                result = fn(*args, **kwargs)
            except (IpctopError, OSError, RuntimeError) as exc:
                error = f"could not {what}: {exc}"
            try:
                self.call_from_thread(self._control_done, result, error)
            except RuntimeError:
                return  # the app closed while the engine worked: nobody to tell

        self.run_worker(work, thread=True, group="control", name=what)

    def _control_done(self: AppHost, result: str, error: str) -> None:
        self._busy -= 1
        self.info = self.source.info
        if error:
            self._say(error, "error")
        elif result:
            self._say(result)

    def action_add_pair(self: AppHost) -> None:
        self._control("add a pair", self.source.add_pair)

    def action_remove_pair(self: AppHost) -> None:
        self._control("remove a pair", self.source.remove_pair)

    def action_choose_workload(self: AppHost) -> None:
        choices = [(name, cls.summary or cls.original) for name, cls in WORKLOADS.items()]
        self.push_screen(
            ChoiceScreen("workload", choices, self.info.config.workload),
            lambda name: self._restart(workload=name),
        )

    def action_choose_placement(self: AppHost) -> None:
        choices = [(p, PLACEMENT_HELP.get(p, "")) for p in PLACEMENTS]
        self.push_screen(
            ChoiceScreen("placement", choices, self.info.config.placement),
            lambda name: self._restart(placement=name),
        )

    def action_toggle_mode(self: AppHost) -> None:
        other = [m for m in MODES if m != self.info.config.mode][0]
        self._restart(mode=other)

    def _restart(self: AppHost, **change: str | None) -> None:
        ((key, value),) = change.items()
        if value is None or value == getattr(self.info.config, key):
            return
        self._control(f"switch {key} to {value}", self.source.reconfigure, **{key: value})

    def action_compare_next(self: AppHost) -> None:
        name, skipped = next_mechanism(self.info)
        if name is None:
            why = "; ".join(f"{n}: {w}" for n, w in skipped)
            self._say(f"no other mechanism runs here ({why})", "warning")
            return
        note = f" (skipped {', '.join(n for n, _ in skipped)})" if skipped else ""
        count = self.source.pair_count()
        if getattr(self, "sweeping", False):
            self._end_sweep("sweep stopped: W restarts the pairs")

        def switch() -> str:
            # From 1 pair: without a 1-pair reading the new curve has no
            # scalability and no ideal line. Then back up to the count it had.
            said = self.source.reconfigure(pairs=1, workload=name) + note
            if count <= 1:
                return said
            self.call_from_thread(self._start_sweep, count, 1, "")
            return (
                f"{said}; {name} takes its 1-pair reading first (the base of scalability), "
                f"then a pair per settled step up to {count}"
            )

        self._control(f"compare with {name}", switch)
