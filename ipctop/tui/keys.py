"""Every key of the monitor, declared once.

BINDINGS (and so the footer, and the help screen, which reads each
binding's tooltip: screens/key_list.py) and the command palette all follow
from one tuple of KeySpec. A subclass (the demo) declares its own
keys the same way; `keys_of` merges them, the subclass's first.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType


@dataclass(frozen=True)
class KeySpec:
    key: str  # Textual's key name
    action: str
    label: str  # the footer's word
    what: str  # the help screen's and the command palette's line
    footer: bool = True
    display: str | None = None  # how the key is shown, when its name is not the key
    priority: bool = False

    @property
    def shown_as(self) -> str:
        return self.display or self.key

    def binding(self) -> Binding:
        return Binding(
            self.key,
            self.action,
            self.label,
            show=self.footer,
            key_display=self.display,
            priority=self.priority,
            tooltip=self.what,  # the help screen's text (screens/key_list.py reads it)
        )


def bindings(keys: tuple[KeySpec, ...]) -> list[BindingType]:
    return [k.binding() for k in keys]


def keys_of(cls: type) -> list[KeySpec]:
    """The keys of an app class and its bases, a subclass's spec winning for its key."""
    seen: dict[str, KeySpec] = {}
    for klass in cls.__mro__:
        for spec in vars(klass).get("KEYS", ()):
            seen.setdefault(spec.key, spec)
    return list(seen.values())


def key_commands(app: App[Any]) -> Iterator[SystemCommand]:
    """The command palette's entry for each key: its line, and the key to learn."""
    for k in keys_of(type(app)):
        yield SystemCommand(
            f"{k.what} ({k.shown_as})", f"key {k.shown_as}", getattr(app, f"action_{k.action}")
        )


# Most used first: the footer cuts the tail on narrow terminals.
MONITOR_KEYS: tuple[KeySpec, ...] = (
    KeySpec("q", "quit", "quit", "quit: stop the pairs and remove every object"),
    KeySpec("question_mark", "help", "help", "this help", display="?"),
    KeySpec("plus", "add_pair", "add", "add a pair on the next CPU", display="+"),
    KeySpec("minus", "remove_pair", "remove", "remove the last pair", display="-"),
    KeySpec("s", "sweep", "sweep", "auto-sweep: one more pair every K s until every CPU is used"),
    KeySpec("w", "choose_workload", "workload", "choose the workload (restarts the pairs)"),
    KeySpec(
        "W",
        "compare_next",
        "compare",
        "compare: the next mechanism from 1 pair back up to this count, one curve each",
        display="W",
    ),
    KeySpec(
        "d", "toggle_detail", "detail", "where the time goes: per-round costs (extra /proc reads)"
    ),
    KeySpec("p", "choose_placement", "placement", "choose the placement (restarts the pairs)"),
    KeySpec("m", "toggle_mode", "mode", "switch threads / processes (restarts the pairs)"),
    KeySpec("space", "pause", "pause", "pause / resume the display"),
    KeySpec("r", "reset_curve", "reset", "reset the scaling curves"),
    KeySpec("c", "all_cpus", "cpus", "show all CPUs / only this run's"),
    KeySpec("S", "screenshot", "svg", "save an SVG screenshot", display="S"),
    KeySpec("t", "toggle_theme", "theme", "switch light / dark theme"),
    KeySpec(
        "R",
        "toggle_record",
        "record",
        "record the session to a JSON file / stop and save it",
        display="R",
    ),
    KeySpec("b", "baseline", "baseline", "overlay a record's scaling curve and Diff % / hide it"),
    KeySpec(
        "f",
        "toggle_profile",
        "profile",
        "profile: top kernel and user symbols of the pairs' CPUs (perf)",
    ),
    KeySpec("n", "next_symbol", "next symbol", "profile: select the next symbol", footer=False),
    KeySpec(
        "g",
        "callers",
        "callers",
        "profile: call chains of the selected symbol / hide them",
        footer=False,
    ),
    KeySpec(
        "a",
        "ab",
        "A/B",
        "A/B: this setting against one changed option, interleaved",
        footer=False,  # the footer is full; ? and the palette list it
    ),
    KeySpec(
        "escape",
        "stop_ab",
        "stop A/B",
        "stop the A/B and put A back / hide its result",
        footer=False,
        display="esc",
    ),
    KeySpec(
        "F",
        "present",
        "present",
        "presentation: large figures and the curve, high contrast",
        display="F",
    ),
    KeySpec(
        "l",
        "toggle_latency",
        "latency",
        "latency panel: round-trip and one-way percentiles per pair",
        footer=False,
    ),
    KeySpec(
        "h",
        "latency_histogram",
        "histogram",
        "latency histogram of the pair selected in the latency panel",
        footer=False,
    ),
    KeySpec(
        "P",
        "toggle_curve_metric",
        "p99 curve",
        "scaling chart: total ops/s / round-trip p99 by pairs",
        footer=False,
        display="P",
    ),
    KeySpec(
        "x",
        "show_matrix",
        "matrix",
        "open a latency matrix record (ipctop matrix --json)",
        footer=False,
    ),
    KeySpec(
        "ctrl+c",
        "interrupt",
        "quit",
        "quit like q; a record being made is marked interrupted",
        footer=False,
        priority=True,
    ),
)
