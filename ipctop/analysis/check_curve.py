"""What `ipctop check` adds to its verdicts with intervals: the pair counts of
the whole curve, the box's A/A noise floor, and absolute rates against a
known-good record of the same CPU model. Pure: readings in, verdicts out."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ipctop.analysis.readings import RunReading
from ipctop.analysis.stats import (
    CONFIDENCE,
    NO_DIFFERENCE,
    TooFewWindows,
    difference,
    fmt_diff,
    holm,
    paired_difference,
)
from ipctop.analysis.verdicts import FAIL, OK, WARN, Verdict, fmt_rate

# Up to this many CPUs every pair count is measured; above it 1, 2, 4, ... N
# and always N-1 and N, so a peak followed by a drop cannot fall between two.
EVERY_COUNT_UP_TO = 8
# A box slower than its known-good record by more than this over the whole
# interval fails; a slowdown shown but not past it warns.
BASELINE_FAIL_PCT = 10.0


def pair_counts(n: int) -> list[int]:
    """The pair counts check measures on n CPUs, ascending."""
    if n <= EVERY_COUNT_UP_TO:
        return list(range(1, n + 1))
    counts = {1, n - 1, n}
    k = 2
    while k < n:
        counts.add(k)
        k *= 2
    return sorted(counts)


@dataclass(frozen=True)
class NoiseFloor:
    """The smallest difference (±pct) this box shows between two halves of one setting."""

    pct: float
    n: int  # windows
    seconds: float
    blocks: int


def aa_blocks(windows: Sequence[float]) -> list[tuple[list[float], list[float]]]:
    """One setting's windows, in time order, as A B B A blocks of two halves."""
    return [
        ([windows[i], windows[i + 3]], [windows[i + 1], windows[i + 2]])
        for i in range(0, len(windows) - 3, 4)
    ]


def aa_noise_floor(windows: Sequence[float], seconds: float) -> NoiseFloor:
    """Split one setting's windows, in time order, into interleaved halves (A B B A
    per block of four) and take the half-width of their paired B/A interval."""
    blocks = aa_blocks(windows)
    try:
        d = paired_difference(blocks)
    except TooFewWindows:
        raise TooFewWindows(
            f"an A/A noise floor needs at least 8 windows, got {len(windows)}"
        ) from None
    return NoiseFloor(d.half_width_pct, 4 * len(blocks), seconds, len(blocks))


def judge_noise(floor: NoiseFloor | None, why_not: str = "") -> Verdict:
    if floor is None:
        return Verdict(WARN, "noise floor", f"no A/A noise floor: {why_not}")
    return Verdict(
        OK,
        "noise floor",
        f"A/A noise floor: differences under ±{floor.pct:.1f} % cannot be shown here in "
        f"{floor.seconds:.0f} s ({floor.blocks} ABBA blocks of windows)",
    )


def judge_baseline(
    run: RunReading,
    base_windows: Sequence[float],
    name: str,
    session_sd_pct: float | None = None,
    no_spread: str = "",
    session_df: float = math.inf,
) -> Verdict:
    """This box's absolute rate against the known-good record's at the same setting.

    This check is a new session and the record another, so the interval needs
    the box's session spread (session_sd_pct, in %); without it the figure is
    shown and not judged (no_spread: what to do about it), as compare does."""
    return judge_baselines([(run, base_windows)], name, session_sd_pct, no_spread, session_df)[0]


def judge_baselines(
    runs: Sequence[tuple[RunReading, Sequence[float]]],
    name: str,
    session_sd_pct: float | None = None,
    no_spread: str = "",
    session_df: float = math.inf,
) -> list[Verdict]:
    """judge_baseline for every run of a check at once, Holm-adjusted over them:
    a check judges several pair counts, and the family, not each line, keeps 5 %.
    With one run the adjusted p is the raw one, and the verdicts are the interval's."""
    var = math.log1p(session_sd_pct / 100.0) ** 2 if session_sd_pct else 0.0
    diffs = [
        difference(base, run.windows, session_var=var, session_df=session_df)
        if len(run.windows) >= 2 and len(base) >= 2
        else None
        for run, base in runs
    ]
    judged = [(i, d) for i, d in enumerate(diffs) if d is not None]
    p_two = dict(zip((i for i, _ in judged), holm([d.p_value for _, d in judged]), strict=True))
    slow = holm([d.p_below(BASELINE_FAIL_PCT) for _, d in judged])
    p_slow = dict(zip((i for i, _ in judged), slow, strict=True))
    family = f", Holm over {len(judged)} pair counts" if len(judged) > 1 else ""
    out = []
    for i, ((run, _), d) in enumerate(zip(runs, diffs, strict=True)):
        subject = f"{run.label} baseline"
        if d is None:
            out.append(
                Verdict(WARN, subject, f"{run.label}: too few windows to compare with {name}")
            )
            continue
        text = f"{run.label}: {fmt_rate(run.total_ops_per_s)} ops/s, {fmt_diff(d)} against {name}"
        if session_sd_pct is None:
            why = f" ({no_spread})" if no_spread else ""
            out.append(
                Verdict(
                    WARN, subject, f"{text}: not judged: sessions differ by an unknown amount{why}"
                )
            )
        elif p_slow[i] < (1.0 - CONFIDENCE) / 2.0:  # one side of the 95 % interval
            out.append(Verdict(FAIL, subject, f"{text}: this box is slow{family}"))
        elif d.ratio < 1.0 and p_two[i] < 1.0 - CONFIDENCE:
            out.append(
                Verdict(WARN, subject, f"{text}: slower, within {BASELINE_FAIL_PCT:g} %{family}")
            )
        else:
            shown = d.verdict if p_two[i] < 1.0 - CONFIDENCE else NO_DIFFERENCE
            out.append(Verdict(OK, subject, f"{text}: {shown}"))
    return out
