"""Where the time goes (key d): per-round costs of each thread and CPU, and flags.

The figures come from the sampler's cost tracker (`Sampler.detail`), carried
in each sample as Sample.costs. A figure whose source is missing reads
"n/a (why)", or "n/a" in a table cell with the why on a line of its own: a
missing source never looks like a real zero. Nothing is cut: prose wraps at
the panel's width, and a table narrower than its columns shows the columns
that fit whole and says which are hidden.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from ...analysis.noise import STEAL_MARK_PCT, WindowNoise, window_noise
from ...engine.costs import Costs, CpuCost, ThreadCost, na
from ...live.session import Session
from .rows_view import Pieces, Row, RowsView

# Table cells: one width each, so the header lines up with the rows.
THREAD_COLS = (
    ("pair", 5),
    ("cpu µs", 8),
    ("user", 7),
    ("sys", 7),
    ("delay", 7),
    ("migr", 5),
    ("vcsw", 6),
    ("ivcsw", 6),
    ("rtt µs", 8),
)
CPU_COLS = (
    ("cpu", 5),
    ("resched", 8),
    ("callfn", 8),
    ("sched/s", 9),
    ("wakes/s", 9),
    ("remote/s", 9),
)
#: the tracker's `missing` names, and which columns they leave empty
MISSING_COLUMNS = {
    "run delay": "delay",
    "migrations": "migr",
    "wake-ups": "sched/s, wakes/s, remote/s",
    "cpu pressure": "pressure",
}


def _cell(value: float | int | None, width: int, fmt: str = "{:.2f}") -> str:
    text = "n/a" if value is None else fmt.format(value)
    return f"{text:>{width}}"


def _header_cells(cols: tuple[tuple[str, int], ...]) -> tuple[str, ...]:
    return tuple(f"{name:>{w}}" for name, w in cols)


def thread_cells(t: ThreadCost, rtt: float | None) -> tuple[str, ...]:
    w = [width for _, width in THREAD_COLS]
    cells = [
        f"{t.pair:>{w[0] - 1}}{t.role}",
        _cell(t.cpu_us_per_round, w[1]),
        _cell(t.user_us_per_round, w[2]),
        _cell(t.sys_us_per_round, w[3]),
        _cell(t.run_delay_us_per_round, w[4]),
        _cell(t.migrations, w[5], "{:d}"),
        _cell(t.vcsw_per_round, w[6]),
        _cell(t.ivcsw_per_round, w[7]),
        # One round trip per pair: shown on its A row.
        _cell(rtt, w[8]) if t.role == "A" else " " * w[8],
    ]
    return tuple(cells)


def cpu_cells(c: CpuCost) -> tuple[str, ...]:
    w = [width for _, width in CPU_COLS]
    return tuple(
        [
            f"{c.cpu:>{w[0]}}",
            # IPIs per round are often tiny: significant digits, not a rounded 0.000.
            _cell(c.resched_per_round, w[1], "{:.2g}"),
            _cell(c.callfunc_per_round, w[2], "{:.2g}"),
            _cell(c.sched_per_s, w[3], "{:,.0f}"),
            _cell(c.wakeups_per_s, w[4], "{:,.0f}"),
            _cell(c.remote_wakeups_per_s, w[5], "{:,.0f}"),
        ]
    )


def summary(costs: Costs, unit: str | None = None) -> str:
    """The first line: what one round (a load workload: one message) costs the whole
    box, and how loaded it is."""
    m = costs.missing
    return (
        f"CPU per {'message' if unit else 'round'} {na(costs.cpu_us_per_round, m.get('cpu time'))} µs · "
        f"system {na(costs.system_share_pct, m.get('system share'), '{:.1f}')} % · "
        f"CPU pressure avg10 {na(costs.cpu_pressure_avg10, m.get('cpu pressure'), '{:.2f}')}"
    )


@dataclass(frozen=True)
class DetailLine:
    text: str
    style: str | None = None  # a RowsView component name: heading, flag, dim
    cells: tuple[str, ...] = ()  # a table row: shown a whole cell at a time


def _table_line(cells: tuple[str, ...], style: str | None = None) -> DetailLine:
    return DetailLine(" ".join(cells), style, cells)


def fit_lines(lines: list[DetailLine], width: int) -> list[DetailLine]:
    """The lines at this width: prose wrapped, table rows cut between cells, never in one.

    A table that lost columns gets a line naming them, so a hidden column never
    reads as a missing one.
    """
    if width <= 0:
        return lines
    out: list[DetailLine] = []
    hidden: list[str] = []
    for line in lines:
        if line.cells:
            shown, used = [], -1
            for cell in line.cells:
                if used + 1 + len(cell) > width:
                    break
                shown.append(cell)
                used += 1 + len(cell)
            if line.style == "heading" and len(shown) < len(line.cells):
                hidden = [c.strip() for c in line.cells[len(shown) :]]
            out.append(DetailLine(" ".join(shown), line.style, line.cells))
            continue
        if hidden:
            note = f"hidden at this width: {', '.join(hidden)} (a wider terminal shows them)"
            out += [DetailLine(t, "dim") for t in _wrap(note, width)]
            hidden = []
        out += [DetailLine(t, line.style) for t in _wrap(line.text, width)]
    if hidden:
        note = f"hidden at this width: {', '.join(hidden)} (a wider terminal shows them)"
        out += [DetailLine(t, "dim") for t in _wrap(note, width)]
    return out


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width, subsequent_indent="  ", break_on_hyphens=False) or [""]


def noise_line(n: WindowNoise) -> DetailLine | None:
    """This window's steal, PSI and clock over the pairs' CPUs, flagged when the
    hypervisor stole more than STEAL_MARK_PCT; None when the box says none of them."""
    if n.steal_pct is None and n.pressure_pct is None and n.mhz is None:
        return None
    steal = "n/a" if n.steal_pct is None else f"max {n.steal_pct:.1f} % (cpu{n.steal_cpu})"
    text = (
        f"this window: steal {steal} · CPU pressure (PSI some) "
        f"{na(n.pressure_pct, 'no PSI', '{:.0f} %')} · clock "
        f"{na(n.mhz, 'no cpufreq', '{:.0f} MHz')}"
    )
    if n.stolen:
        return DetailLine(f"! {text}: over {STEAL_MARK_PCT:g} % stolen, figures widen", "flag")
    return DetailLine(text)


def detail_lines(costs: Costs | None, note: str = "", unit: str | None = None) -> list[DetailLine]:
    """Everything below the heading, as lines: threads, CPUs, flags, missing sources.

    For a load workload every end's costs are per message its group or room
    delivered (engine/costs.py: its senders count none of their own)."""
    if costs is None:
        return [DetailLine(note or "waiting for the first detailed sample", "dim")]
    lines: list[DetailLine] = [DetailLine(summary(costs, unit))]
    rtt = dict(costs.rtt_us)
    each = f"per message of its {unit}" if unit else "per round"
    lines.append(DetailLine(f"per thread, {each}", "heading"))
    lines.append(_table_line(_header_cells(THREAD_COLS), "heading"))
    if not costs.threads:
        lines.append(DetailLine("  measuring: the first detailed sample is the baseline", "dim"))
    for t in sorted(costs.threads, key=lambda t: (t.pair, t.role)):
        lines.append(_table_line(thread_cells(t, rtt.get(t.pair))))
    lines.append(
        DetailLine(
            f"per CPU: IPIs per {'message' if unit else 'round'}; schedule() and wake-ups per "
            "second",
            "heading",
        )
    )
    lines.append(_table_line(_header_cells(CPU_COLS), "heading"))
    for c in costs.cpus:
        lines.append(_table_line(cpu_cells(c)))
    if not costs.cpus:
        lines.append(DetailLine("  n/a (no /proc/interrupts and no /proc/schedstat)", "dim"))
    for flag in costs.flags:
        lines.append(DetailLine(f"! {flag}", "flag"))
    for name, why in costs.missing.items():
        cols = MISSING_COLUMNS.get(name)
        where = f" [{cols}]" if cols and cols != "pressure" else ""
        lines.append(DetailLine(f"{name}{where}: {na(None, why)}", "dim"))
    return lines


class DetailPanel(RowsView):
    """Shown and hidden by the app (key d); reads the session's latest sample."""

    DEFAULT_CSS = """
    DetailPanel { height: 1fr; display: none; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._detail: list[DetailLine] = []
        self._fitted: tuple[int, list[DetailLine]] = (-1, [])

    def update_from(self, session: Session, note: str = "") -> None:
        s = session.latest
        costs = s.costs if s is not None else None
        unit = session.unit
        self._detail = detail_lines(costs, note, unit)
        noise = noise_line(window_noise(s, session.pair_cpus())) if s is not None else None
        if noise is not None:
            self._detail.insert(0, noise)
        self._fitted = (-1, [])
        flags = len(costs.flags) if costs is not None else 0
        subtitle = f"{flags} flag(s)" if flags else ""
        if subtitle != self.border_subtitle:
            self.border_subtitle = subtitle
        self.changed()

    def _fit(self, width: int) -> list[DetailLine]:
        if self._fitted[0] != width:
            self._fitted = (width, fit_lines(self._detail, width))
        return self._fitted[1]

    def row_count(self) -> int:
        return len(self._fit(self.text_width))

    def heading(self, width: int) -> str:
        return "costs per round (µs unless named)"

    def row(self, index: int, width: int) -> Row:
        line = self._fit(width)[index]
        pieces: Pieces = [(line.text, None)]
        return pieces, line.style
