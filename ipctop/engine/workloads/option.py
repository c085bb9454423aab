"""One option a workload takes, declared once beside its class.

The CLI's flag and help, the `RunConfig` field and its default all come
from this declaration (commands/common.py, engine/config.py), so a workload's
option is written in one place.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Option:
    """A whole-number option: `--flag N` with low <= N <= high, or its default."""

    flag: str  # "--sems"
    low: int
    high: int
    default: int | None  # None: the workload works it out (`default_text` says how)
    help: str  # what it means, without the default
    default_text: str | None = None  # the default in words, when not a plain number
    metavar: str | None = None

    @property
    def field(self) -> str:
        """Its name in `RunConfig` and in the parsed arguments."""
        return self.flag[2:].replace("-", "_")

    def help_for(self, workloads: list[str]) -> str:
        """The CLI help: who takes it, what it means, its default."""
        default = self.default_text if self.default_text is not None else str(self.default)
        return f"{', '.join(workloads)}: {self.help} (default {default})"
