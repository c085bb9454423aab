"""Two lines under the header while an A/B runs (key a): what is compared,
the blocks done and the slot running, a progress bar, and the running B/A
with its interval and verdict. The last result stays until the next A/B or
escape."""

from __future__ import annotations

from rich.text import Text

from ...analysis.stats import IMPROVEMENT, REGRESSION, fmt_diff
from ...live.ab_live import ORDER, AbProgress
from .bands import HeaderBand

BAR = 12  # cells of the progress bar: line 1 fits 120 columns


def progress_bar(fraction: float, cells: int = BAR) -> str:
    full = round(max(0.0, min(fraction, 1.0)) * cells)
    return "█" * full + "░" * (cells - full)


class AbPanel(HeaderBand):
    DEFAULT_CSS = """
    AbPanel { height: 2; display: none; }
    AbPanel.-shown { display: block; }
    """

    def update_from(self, a: str, b: str, p: AbProgress | None) -> None:
        self.set_class(p is not None, "-shown")
        if p is None:
            return
        text = Text()
        text.append("A/B ", "bold")
        text.append(f"A: {a} · B: {b} · ")
        if p.done:
            text.append(f"{p.why} after {p.blocks} block(s), {p.elapsed:.0f} s", "bold")
            text.append(" · A is back · esc hides this")
        else:
            slot = p.slots_done % len(ORDER) + 1
            text.append(f"block {p.blocks + 1}, slot {slot}/{len(ORDER)} ({p.slot}) ")
            text.append(progress_bar(p.fraction))
            text.append(f" {p.elapsed:.0f}/{p.planned:.0f} s · esc stops")
        text.append("\n")
        d = p.difference
        if d is None:
            rates = ""
            if p.a_rate is not None and p.b_rate is not None:
                rates = f" (A {p.a_rate:,.0f}, B {p.b_rate:,.0f} ops/s)"
            text.append(f"B/A: needs 2 blocks for an interval{rates}")
        else:
            text.append(f"B/A: {fmt_diff(d)} · ")
            style = {REGRESSION: "bold reverse red", IMPROVEMENT: "bold reverse green"}
            text.append(p.verdict, style.get(p.verdict, "bold"))
            text.append(f" · {d.test}, {p.blocks} blocks")
            if p.a_rate is not None and p.b_rate is not None:
                text.append(f" · A {p.a_rate:,.0f}, B {p.b_rate:,.0f} ops/s")
        if p.outside_pct is not None and (p.not_judged or p.done):
            text.append(f" · others used {p.outside_pct:.0f} % of a CPU")
        self.show(text)
