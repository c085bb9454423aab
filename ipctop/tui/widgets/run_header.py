"""Two lines on top: what runs where, and how well it scales right now."""

from __future__ import annotations

from rich.text import Text

from ...cpus import format_cpu_list
from ...live.session import Session
from ...live.sources import RunInfo
from .header_band import HeaderBand
from .spark import si


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
        line2 = Text()
        active = s.pairs if s is not None else (pairs or 0)
        ncpu = len(info.cpus)
        line2.append(f"pairs {active}/{ncpu} CPUs ({format_cpu_list(info.cpus)})", "bold")
        if s is not None and s.oversubscribed:
            line2.append(" oversubscribed", "bold reverse")
        total = s.total_ops_per_s if s is not None else None
        line2.append(f" · total {si(total)} ops/s")
        scal = session.scalability_now()
        if scal is None:
            line2.append(" · scalability - (needs a 1-pair reading)")
        else:
            line2.append(f" · scalability {scal:.0f} %", "bold")
            if active > 0:
                line2.append(f" (linear {100 * active} %)")
        if s is not None and s.pairs > 0:
            line2.append(f" · {session.settle_state}")
        for note in notes:
            line2.append(f" · {note}", "bold reverse")
        self.show(Text("\n").join([line1, line2]))
