"""Where the time goes (key d): per-round costs of each thread and CPU, and flags.

The figures come from the sampler's cost tracker (`Sampler.detail`), carried
in each sample as Sample.costs. A figure whose source is missing reads
"n/a (why)", or "n/a" in a table cell with the why on a line of its own: a
missing source never looks like a real zero.
"""

from __future__ import annotations

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


def _header(cols: tuple[tuple[str, int], ...]) -> str:
    return " ".join(f"{name:>{w}}" for name, w in cols)


def thread_line(t: ThreadCost, rtt: float | None) -> str:
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
    return " ".join(cells)


def cpu_line(c: CpuCost) -> str:
    w = [width for _, width in CPU_COLS]
    return " ".join(
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
    """The heading: what one round (a load workload: one message) costs the whole
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
    lines: list[DetailLine] = []
    rtt = dict(costs.rtt_us)
    each = f"per message of its {unit}" if unit else "per round"
    lines.append(DetailLine(f"per thread, {each} (µs unless named)", "heading"))
    lines.append(DetailLine(_header(THREAD_COLS), "heading"))
    if not costs.threads:
        lines.append(DetailLine("  measuring: the first detailed sample is the baseline", "dim"))
    for t in sorted(costs.threads, key=lambda t: (t.pair, t.role)):
        lines.append(DetailLine(thread_line(t, rtt.get(t.pair))))
    lines.append(
        DetailLine(
            f"per CPU: IPIs per {'message' if unit else 'round'}; schedule() and wake-ups per "
            "second",
            "heading",
        )
    )
    lines.append(DetailLine(_header(CPU_COLS), "heading"))
    for c in costs.cpus:
        lines.append(DetailLine(cpu_line(c)))
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
        self._head = ""
        self._detail: list[DetailLine] = []

    def update_from(self, session: Session, note: str = "") -> None:
        s = session.latest
        costs = s.costs if s is not None else None
        unit = session.unit
        self._head = summary(costs, unit) if costs is not None else "where the time goes"
        self._detail = detail_lines(costs, note, unit)
        noise = noise_line(window_noise(s, session.pair_cpus())) if s is not None else None
        if noise is not None:
            self._detail.insert(0, noise)
        flags = len(costs.flags) if costs is not None else 0
        subtitle = f"{flags} flag(s)" if flags else ""
        if subtitle != self.border_subtitle:
            self.border_subtitle = subtitle
        self.changed()

    def row_count(self) -> int:
        return len(self._detail)

    def heading(self, width: int) -> str:
        return self._head

    def row(self, index: int, width: int) -> Row:
        line = self._detail[index]
        pieces: Pieces = [(line.text, None)]
        return pieces, line.style
