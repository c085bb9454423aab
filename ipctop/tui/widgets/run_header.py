"""Two lines on top: what runs where, and how well it scales right now.

The second line is built of pieces with a priority; at a narrow width the
least needed go first (the last interval's total, the linear reference, the
CPU list), so the figures that remain are whole words, never cut mid-figure.
"""

from __future__ import annotations

from rich.text import Text

from ...cpus import format_cpu_list
from ...live.session import Session
from ...live.sources import RunInfo
from .header_band import HeaderBand
from .spark import si

# Priorities: KEEP is never dropped; higher numbers are dropped later.
KEEP, NOTE, STATE, LINEAR, CPUS, LAST = 9, 5, 4, 3, 2, 1


def fit(pieces: list[tuple[str, str, int]], width: int) -> Text:
    """Join (text, style, priority) pieces, dropping the lowest priorities until they fit."""
    kept = list(pieces)
    for level in (LAST, CPUS, LINEAR, STATE, NOTE):
        if sum(len(t) for t, _, _ in kept) <= width:
            break
        kept = [p for p in kept if p[2] != level]
    out = Text()
    for text, style, _ in kept:
        out.append(text, style)
    return out


class RunHeader(HeaderBand):
    DEFAULT_CSS = """
    RunHeader { height: 2; }
    """

    def update_from(
        self, info: RunInfo, session: Session, pairs: int | None, notes: list[str]
    ) -> None:
        s = session.latest
        line1 = Text()
        line1.append("ipctop ", "bold")
        line1.append(f"{info.workload} · {info.placement} · {info.mode} · engine {info.engine}")
        line1.append(f" · kernel {info.kernel} · {info.cpu_model}", "dim")
        if info.source != "live":
            line1.append(f" · {info.source}", "bold")
        active = s.pairs if s is not None else (pairs or 0)
        ncpu = len(info.cpus)
        pieces: list[tuple[str, str, int]] = [(f"pairs {active}/{ncpu} CPUs", "bold", KEEP)]
        pieces.append((f" ({format_cpu_list(info.cpus)})", "bold", CPUS))
        if s is not None and s.oversubscribed:
            pieces.append((" oversubscribed", "bold reverse", KEEP))
        head = session.headline()
        here = head.settled
        if here is not None:
            # The table's figure first; the last interval beside it, named as such.
            half = here.summary.half_width_pct
            pm = f" ±{half:.1f} %" if half is not None else ""
            pieces.append((f" · total {si(here.total_ops_per_s)} ops/s settled{pm}", "", KEEP))
            pieces.append((f" (last {info.interval:g} s {si(head.now)})", "dim", LAST))
        else:
            pieces.append((f" · total {si(head.now)} ops/s", "", KEEP))
            pieces.append((f" (last {info.interval:g} s)", "", LAST))
        if active >= 2:
            if head.scal is None:
                pieces.append((f" · scalability - ({head.scal_none})", "", KEEP))
            else:
                tag = "" if head.scal_settled else " settling"
                pieces.append((f" · scalability {head.scal:.0f} %{tag}", "bold", KEEP))
                if head.above is not None:
                    pieces.append((f" above linear {100 * active} %", "bold reverse", KEEP))
                else:
                    pieces.append((f" (linear {100 * active} %)", "", LINEAR))
        if s is not None and s.pairs > 0 and here is None:
            pieces.append((f" · {session.settle_state}", "", STATE))
        for note in notes:
            pieces.append((f" · {note}", "bold reverse", NOTE))
        width = max(0, self.size.width - 2) or 10_000  # the padding; unmounted: no limit
        self.show(Text("\n").join([line1, fit(pieces, width)]))
