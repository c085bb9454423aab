"""Presentation mode (key F, --present): the figures for the back of a room.

Total ops/s, pairs and scalability % in large digits, the curve against the
ideal, and against a baseline its Diff % with a verdict that says "no
difference shown" when the intervals cannot tell (Holm-adjusted over every
settled point judged, as the table's colours are). The app raises its
contrast floor to 7:1 (WCAG AAA) while this screen is up, in either theme.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Static

from ...analysis.scaling import ScalingPoint
from ...analysis.stats import fmt_diff, pct_digits
from ...live.baseline import Baseline
from ...live.session import Session
from ...live.sources import RunInfo
from ..widgets.bands import NarrationBand
from ..widgets.block_digits import BlockDigits, digits_width
from ..widgets.scaling_panel import ScalingPanel
from ..widgets.spark import si

AAA = 7.0


def split_si(value: float) -> tuple[str, str]:
    """'1.23M' -> ('1.23', 'M'): Digits draws numbers, the unit goes in the caption."""
    text = si(value)
    if text and text[-1].isalpha():
        return text[:-1], text[-1]
    return text, ""


def baseline_verdict(
    baseline: Baseline | None,
    points: list[ScalingPoint],
    pairs: int | None,
    info: RunInfo | None = None,
) -> tuple[str, Text]:
    """The Diff % digits and the line under them: against what, and what it means."""
    if baseline is None:
        return "", Text("no baseline (key b, or --baseline FILE)")
    if not baseline.points:
        return "", Text(f"baseline {baseline.name} has no scaling curve to compare with", "bold")
    label = baseline.label_for(info)
    live = next((p for p in points if p.pairs == pairs and p.settled), None)
    theirs = next((p for p in baseline.points if p.pairs == pairs), None)
    if live is None or theirs is None:
        why = (
            "no settled reading yet" if live is None else f"the baseline has no {pairs}-pair point"
        )
        return "", Text(f"vs {label}: {why}")
    diff = baseline.diff_at(live.pairs, live.total_ops_per_s)
    # The verdict of the table's colours: Holm over every settled point judged.
    judged = baseline.verdicts(points).get(live.pairs)
    if judged is None:
        # Old records keep no windows: the figure without a verdict it cannot support.
        return f"{diff:+.0f}", Text(f"vs {label}: no interval (the record has no windows)")
    d = judged.difference
    k = pct_digits(d.half_width_pct)
    basis = f"n={d.n_a}/{d.n_b} {d.unit}" + (f", {d.notes[0]}" if d.notes else "")
    if judged.family > 1:
        basis += f", Holm over {judged.family} points"
    return f"{d.diff_pct:+.{k}f}", Text.assemble(
        (f"{judged.verdict}", "bold"), f" against {label}: {fmt_diff(d)}, {basis}"
    )


#: title, figures (3 lines and a caption) with their margin, verdict, note, a chart of 5 lines
PRESENT_MIN_HEIGHT = 16


FIGURE_MARGIN = 2  # columns each side of a figure


class Figure(Vertical):
    """One large figure in solid digits (widgets/block_digits.py), its caption under it.

    As wide as its figure or its caption: a wide total and a one-digit pair
    count share the row by what they need, not a quarter each.
    """

    DEFAULT_CSS = """
    Figure { width: auto; height: auto; align-horizontal: center; }
    Figure > BlockDigits { text-style: bold; }
    Figure > .caption { width: auto; text-style: bold; color: $text-muted; }
    """

    def __init__(self, caption: str, *, id: str) -> None:
        super().__init__(id=id)
        self.caption = caption

    def compose(self) -> ComposeResult:
        yield BlockDigits("-")
        yield Static(self.caption, classes="caption")

    def needed(self) -> int:
        """Columns this figure needs to be drawn whole: a cut figure would read as another."""
        return max(digits_width(self.query_one(BlockDigits).value), len(self.caption))

    def show(self, value: str, caption: str | None = None) -> None:
        self.query_one(BlockDigits).update(value or "-")
        if caption is not None:
            self.caption = caption
            self.query_one(".caption", Static).update(caption)


class PresentScreen(Screen[None]):
    BINDINGS = [Binding("F,escape", "close", "leave presentation", key_display="F")]

    DEFAULT_CSS = """
    PresentScreen { layout: vertical; background: $background; }
    PresentScreen > #present-title { height: 1; text-style: bold; padding: 0 1; }
    PresentScreen > #present-figures { height: auto; margin: 1 0; align-horizontal: center; }
    PresentScreen > #present-verdict { height: auto; padding: 0 2; text-style: bold; }
    PresentScreen > #present-note { height: auto; padding: 0 2; }
    PresentScreen > ScalingPanel { height: 1fr; border: round $foreground; }
    PresentScreen > #present-too-small { display: none; height: 1fr; content-align: center middle;
                                         text-style: bold; }
    PresentScreen.-too-small > * { display: none; }
    PresentScreen.-too-small > #present-too-small { display: block; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="present-title")
        yield NarrationBand(id="present-narration")  # the demo's story, when one is told
        with Horizontal(id="present-figures"):
            yield Figure("ops/s total", id="fig-total")
            yield Figure("pairs", id="fig-pairs")
            yield Figure("scalability %", id="fig-scal")
            yield Figure("diff % vs baseline", id="fig-diff")
        yield Static(id="present-verdict")
        yield Static(id="present-note")
        yield ScalingPanel(id="present-scaling")
        yield Static(id="present-too-small")

    def on_resize(self) -> None:
        self._check_room()

    def _check_room(self) -> None:
        """Hide the figures when they would be cut, and say what size they need."""
        figures = list(self.query(Figure))
        band = self.query_one(NarrationBand)
        told = band.outer_size.height if band.has_class("-shown") else 0
        wide = sum(f.needed() + 2 * FIGURE_MARGIN for f in figures)
        need = (wide, PRESENT_MIN_HEIGHT + told)
        w, h = self.size
        small = w < need[0] or h < need[1]
        self.set_class(small, "-too-small")
        if not small:
            # What is left over is shared out, so the figures spread across the row.
            extra = (w - sum(f.needed() for f in figures)) // len(figures)
            for f in figures:
                if f.styles.width is None or f.styles.width.value != f.needed() + extra:
                    f.styles.width = f.needed() + extra
        if small:
            self.query_one("#present-too-small", Static).update(
                f"terminal {w}x{h}: presentation mode needs {need[0]}x{need[1]}"
                " for these figures (F leaves it; the pairs keep running)"
            )

    def on_mount(self) -> None:
        self.app.redraw_now()  # type: ignore[attr-defined]

    def update_from(self, info: RunInfo, session: Session, baseline: Baseline | None) -> None:
        if not self.is_mounted:
            return  # pushed, not composed yet: its on_mount asks for a redraw
        latest = session.latest
        pairs = latest.pairs if latest is not None else None
        self.query_one("#present-title", Static).update(
            f"ipctop · {info.config.workload} · {info.config.placement} · {info.config.mode} · engine {info.config.engine}"
            f" · {info.source}"
        )
        head = session.headline()
        if head.settled is not None:
            # The table's settled figure, as the header shows it: one value per figure.
            total, unit = split_si(head.settled.total_ops_per_s)
            caption = f"{unit} ops/s settled"
        elif head.now is not None:
            total, unit = split_si(head.now)
            caption = f"{unit} ops/s, {info.interval:g} s"
        else:
            total, caption = "-", "ops/s total"
        self.query_one("#fig-total", Figure).show(total, caption.strip())
        self.query_one("#fig-pairs", Figure).show("-" if pairs is None else str(pairs))
        scal = head.scal
        # Captions stay short: four figures and their captions fit 80 columns.
        scal_caption = "scalability %" if head.scal_settled or scal is None else "scal. %, settling"
        if head.above is not None:
            scal_caption = "scal. %, > linear"  # the note under the figures says by how much
        self.query_one("#fig-scal", Figure).show(
            "-" if scal is None else f"{scal:.0f}", scal_caption
        )
        points = session.points()
        diff, verdict = baseline_verdict(baseline, points, pairs, info)
        self.query_one("#fig-diff", Figure).show(diff)
        self.query_one("#present-verdict", Static).update(verdict)
        note = ""
        if not points:
            note = (
                "no scaling curve yet: " + session.settle_state
                if info.source.startswith("live")
                else f"no scaling curve in these samples ({info.source}): nothing settled"
            )
        elif scal is None and pairs is not None and pairs < 2:
            note = "no scalability % at 1 pair: it is total(N) / total(1), from 2 pairs on"
        elif scal is None:
            note = "no scalability %: the curve has no settled 1-pair reading to divide by"
        elif head.above is not None:
            note = head.above
        self.query_one("#present-note", Static).update(note)
        panel = self.query_one(ScalingPanel)
        has_one = any(p.pairs == 1 and p.settled for p in points)
        panel.border_title = (
            "total ops/s by pairs, against the ideal"
            if has_one
            else "total ops/s by pairs (no ideal line: no 1-pair reading)"
        )
        if panel.baseline is not baseline:
            panel.set_baseline(baseline)
        panel.update_from(session, pairs)
        self._check_room()  # a figure may have grown a digit

    def action_close(self) -> None:
        self.app.action_present()  # type: ignore[attr-defined]
