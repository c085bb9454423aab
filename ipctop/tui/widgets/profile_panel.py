"""The profile panel (key f: where the functions are): the top symbols of the last perf window.

Each row: self share of the pairs' samples in the last window, total share
(anywhere in the chain), a sparkline of the self share over the recent
windows on one scale for every row (so a function that grows as pairs are
added stands out), the symbol, k(ernel) or u(ser). `n` selects the next row,
`g` shows the call chains that ended in the selected symbol. When perf
cannot run the panel says "n/a (why)".
"""

from __future__ import annotations

from rich.text import Text

from ...cpus import format_cpu_list
from ...engine.profile import Profile, ProfileWindow, SymbolShare
from ...live.profile_feed import HISTORY, ProfileFeed
from .spark import spark
from .text_block import TextBlock

ROWS = 8
SPARK = 20


class ProfilePanel(TextBlock):
    DEFAULT_CSS = """
    ProfilePanel { height: auto; max-height: 18; display: none; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.symbols: list[SymbolShare] = []  # the rows shown, for the selection

    def update_from(
        self, feed: ProfileFeed, pairs: int | None, selected: int, callers: bool
    ) -> None:
        why = feed.na()
        if why is not None:
            self.symbols = []
            self.show(Text(f"profile n/a ({why})", "italic"))
            return
        if feed.live:
            last = feed.history[-1]
            history = list(feed.history)
            top = last.top(ROWS)
            head = _live_head(feed, last)
            series = {(s.name, s.dso): [w.self_pct((s.name, s.dso)) for w in history] for s in top}
            chains = last.callers
        else:
            profile = feed.recorded(pairs)
            assert profile is not None
            top = profile.top(ROWS)
            head = _recorded_head(profile)
            series = {(s.name, s.dso): list(s.windows_self_pct) for s in top}
            chains = profile.callers
        self.symbols = top
        text = Text(head + "\n")
        text.append(
            f"  {'self %':>6} {'total %':>7}  {'self share, recent windows':<{SPARK}}  symbol\n"
        )
        ceiling = max((v for vals in series.values() for v in vals), default=0.0)
        for i, s in enumerate(top):
            mark = "▸" if i == selected % max(1, len(top)) else " "
            line = spark(series[(s.name, s.dso)], SPARK, ceiling)
            text.append(f"{mark} {s.self_pct:6.1f} {s.total_pct:7.1f}  ")
            text.append(line, "bold")
            text.append(f"  {s.name} ", "bold" if mark != " " else "")
            text.append("k" if s.kernel else "u", "dim")
            text.append("\n")
        if callers and top:
            sel = top[selected % len(top)]
            got = chains(sel.name)
            total = sum(c for _, c in got) or 1
            text.append(f"callers of {sel.name} (g hides):\n", "bold")
            for chain, count in got[:4]:
                text.append(f"  {100 * count / total:5.1f} %  <- {' <- '.join(chain[:6]) or '-'}\n")
            if not got:
                text.append("  no call chains recorded (records keep shares, not chains)\n")
        text.rstrip()  # in place
        self.show(text)


def _live_head(feed: ProfileFeed, w: ProfileWindow) -> str:
    cpu = f"{100 * w.samples / w.cpu_samples:.0f} %" if w.cpu_samples else "-"
    cost = "measuring" if feed.cost_pct is None else f"{feed.cost_pct:.1f} % CPU"
    return (
        f"{feed.event} · perf {feed.perf_version} · last {w.t1 - w.t0:.1f} s: "
        f"{w.samples:,} samples of the pairs ({cpu} of the CPUs') · perf {cost} · "
        f"{len(feed.history)}/{HISTORY} windows"
    )


def _recorded_head(p: Profile) -> str:
    return (
        f"recorded: {p.event} · perf {p.perf_version} · CPUs {format_cpu_list(list(p.cpus))} · "
        f"{p.samples:,} samples of the pairs"
    )
