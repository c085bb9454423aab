"""One line under the header while a baseline is shown: whose curve it is, and if it is fair."""

from __future__ import annotations

from rich.text import Text

from ...live.baseline import Baseline
from ...live.sources import RunInfo
from .header_band import HeaderBand


class BaselineBar(HeaderBand):
    DEFAULT_CSS = """
    BaselineBar { display: none; }
    BaselineBar.-shown { display: block; }
    """

    def update_from(self, baseline: Baseline | None, info: RunInfo) -> None:
        self.set_class(baseline is not None, "-shown")
        if baseline is None:
            return
        text = Text()
        text.append("baseline ", "bold magenta")
        text.append(f"{baseline.name}: kernel {baseline.kernel} · {baseline.cpu_model}")
        differs = baseline.mismatches(info)
        if differs:
            text.append(f" · differs: {', '.join(differs)}", "bold reverse yellow")
        self.show(text)
