"""The session level: how much separate starts of ipctop on one box differ.

Runs of one session share its start: the process, its objects, where the
scheduler first put the threads, the box's state at that moment. A second
session differs again. `ipctop check --sessions K` starts K separate sessions
of R runs each; the one-way random-effects ANOVA on their log rates splits
the variance into a run part and a session part (Kalibera and Jones, ISMM
2013, the levels of a benchmark). compare adds the session part to an
interval when each side is one session (`compare --session-sd`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from ipctop.analysis.stats import logs_of


@dataclass(frozen=True)
class SessionSpread:
    """Variance components of log rates, as s.d. in % of the rate."""

    sessions: int
    runs_per_session: int
    session_sd_pct: float  # between sessions, beyond what their runs explain
    run_sd_pct: float  # between runs of one session
    session_df: float  # Satterthwaite degrees of freedom of the session variance

    def line(self) -> str:
        rough = "; few sessions, a rough estimate (5+ do better)" if self.sessions < 5 else ""
        return (
            f"session spread: s.d. {self.session_sd_pct:.1f} % between sessions, "
            f"{self.run_sd_pct:.1f} % between runs (n={self.sessions} sessions x "
            f"{self.runs_per_session} runs{rough}); compare two records of this box with "
            f"--session-sd {self.session_sd_pct:.1f}"
        )


def _pct(var: float) -> float:
    return 100.0 * math.expm1(math.sqrt(max(var, 0.0)))


def session_spread(groups: Sequence[Sequence[float]]) -> SessionSpread:
    """From K >= 2 sessions of the same R >= 2 runs each (rates, one per run)."""
    k = len(groups)
    sizes = {len(g) for g in groups}
    if k < 2 or len(sizes) != 1 or min(sizes) < 2:
        raise ValueError("a session spread needs at least 2 sessions of the same 2+ runs each")
    r = sizes.pop()
    logs = [logs_of(g) for g in groups]
    means = [statistics.fmean(g) for g in logs]
    grand = statistics.fmean(means)
    msb = r * sum((m - grand) ** 2 for m in means) / (k - 1)
    msw = sum(sum((x - m) ** 2 for x in g) for g, m in zip(logs, means)) / (k * (r - 1))
    var_s = max((msb - msw) / r, 0.0)
    den = msb**2 / (k - 1) + msw**2 / (k * (r - 1))
    df = ((msb - msw) ** 2 / den) if var_s > 0 and den > 0 else 0.0
    return SessionSpread(k, r, _pct(var_s), _pct(msw), df)


def session_term(
    session_sd_pct: float, run_sd_pct: float, runs_per_session: int, sessions: int
) -> tuple[float, float]:
    """(s.d. in %, degrees of freedom) of the session level a comparison of two single
    sessions adds: the spread of one session's mean of its runs, var_s + var_runs / R.

    That is what K measured sessions estimate directly (their means' variance, with
    K - 1 degrees of freedom), even when the session part alone comes out as 0: with
    few sessions the runs often vary more than the sessions' means do, the estimate is
    truncated at 0, and a 0 taken as known let real A/A compares call a change in 4 of
    16 points (BENCHMARKS.md). It counts the runs' noise once more than the records'
    own runs do, so it errs wide."""
    var = math.log1p(session_sd_pct / 100.0) ** 2
    var += math.log1p(run_sd_pct / 100.0) ** 2 / max(runs_per_session, 1)
    return _pct(var), float(max(sessions - 1, 1))
