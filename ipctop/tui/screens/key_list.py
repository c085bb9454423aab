"""Every key the monitor answers, read from the bindings themselves.

The help screen is generated from here, so a key added to a BINDINGS list
shows in the help without a second list to keep in step. A binding's
tooltip, when it has one, is the long text; else the app's KEYS text for
its action; else its footer description.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from textual.app import App
from textual.binding import Binding, BindingsMap
from textual.dom import DOMNode

from .histogram import HistogramScreen
from .matrix_view import MatrixScreen
from .present import PresentScreen

#: the screens a key opens, with the keys they answer; (heading, class)
SCREENS: tuple[tuple[str, type[DOMNode]], ...] = (
    ("In presentation mode (F)", PresentScreen),
    ("In the latency histogram (h)", HistogramScreen),
    ("In the latency matrix (x)", MatrixScreen),
)


@dataclass(frozen=True)
class KeyRow:
    keys: str  # as the footer shows them, "esc / ? / q" for one action on several keys
    what: str


@dataclass(frozen=True)
class KeySection:
    heading: str
    rows: tuple[KeyRow, ...]


def _rows(app: App[Any], bindings: Iterable[Binding], texts: dict[str, str]) -> tuple[KeyRow, ...]:
    # One row per action: "escape,question_mark,q" arrives as three bindings.
    by_action: dict[str, list[Binding]] = {}
    for b in bindings:
        by_action.setdefault(b.action, []).append(b)
    rows = []
    for action, group in by_action.items():
        keys = " / ".join(dict.fromkeys(key_display(app, b) for b in group))
        # ctrl+q (Textual's) and q share quit: ipctop's own tooltip says what quit does here
        textuals = set(App._merge_bindings().key_to_bindings)
        ours_first = sorted(group, key=lambda b: b.key in textuals)
        tip = next((b.tooltip for b in ours_first if b.tooltip), "")
        what = tip or texts.get(action) or group[0].description or action
        rows.append(KeyRow(keys, what))
    return tuple(rows)


def key_display(app: App[Any], binding: Binding) -> str:
    """The key as the footer would show it, but each key of "F,escape" as itself.

    A binding of several keys carries one key_display for all of them (F for escape too).
    """
    return app.get_key_display(replace(binding, key_display=None))


def own_bindings(kind: type) -> list[Binding]:
    """The bindings ipctop's own classes in kind's MRO declare (not Textual's scroll keys)."""
    keys: dict[str, Binding] = {}
    for base in reversed(kind.__mro__):
        if base.__module__.startswith("ipctop.") and "BINDINGS" in base.__dict__:
            for key, b in BindingsMap(base.__dict__["BINDINGS"]):
                keys[key] = b
    return list(keys.values())


def key_sections(app: App[Any], texts: dict[str, str] | None = None) -> list[KeySection]:
    """The app's keys, then those of its own widgets on the current screen, then its screens'.

    texts: long descriptions by action (the app's KEYS), for bindings without a tooltip.
    """
    texts = texts or {}
    sections = [KeySection("Keys", _rows(app, (b for _, b in app._bindings), texts))]
    seen: set[type] = set()
    for node in app.screen.walk_children():
        kind = type(node)
        if kind in seen or not (bindings := own_bindings(kind)):
            continue
        seen.add(kind)
        name = kind.__name__.removesuffix("Panel") + " panel"
        sections.append(
            KeySection(f"In the {name} (when it has the focus)", _rows(app, bindings, texts))
        )
    for heading, screen in SCREENS:
        sections.append(KeySection(heading, _rows(app, own_bindings(screen), texts)))
    return sections
