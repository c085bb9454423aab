"""`ipctop report` as text and Markdown: one table per group, outliers with their reasons.

Each group's first row is its median (absolute ops/s); each box's cells are
its figure against that median, in %, with the box's 95 % interval around it
when its record had windows. Whole percents: the intervals of a shared box
are several % wide, so a decimal would claim more than the data holds.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from ...analysis.fleet import Group, Standing
from ...analysis.verdicts import fmt_rate
from ..text.tables import format_table


def short(key: str) -> str:
    """'sysv-msg same 1 pair' -> 'sysv-msg same 1'; '... all CPUs' -> '... N'."""
    return key.replace(" 1 pair", " 1").replace(" all CPUs", " N")


def cell(s: Standing | None) -> str:
    if s is None:
        return "-"
    text = f"{(s.ratio - 1) * 100:+.0f} %"
    if s.low is not None and s.high is not None:
        text += f" [{(s.low - 1) * 100:+.0f}, {(s.high - 1) * 100:+.0f}]"
    return text


def group_rows(g: Group) -> tuple[list[str], list[list[str]]]:
    headers = ["box", "record", *(short(k) for k in g.keys)]
    headers += [f"{c.split()[0]} scaling" for c in g.curves]
    headers.append("flags")
    median = ["group median", f"{len(g.boxes)} record(s)"]
    median += [fmt_rate(g.medians[k]) for k in g.keys]
    for c in g.curves:
        effs = [b.efficiency[c][0] for b in g.boxes if c in b.efficiency]
        median.append(f"{statistics.median(effs) * 100:.0f} % of linear" if effs else "-")
    median.append("")
    rows = [median]
    for b in g.boxes:
        row = [b.run.host, b.run.source]
        row += [cell(b.standings.get(k)) for k in g.keys]
        for c in g.curves:
            eff = b.efficiency.get(c)
            if eff is None:
                row.append("-")
            else:
                rel = "" if eff[1] is None else f" ({(eff[1] - 1) * 100:+.0f} %)"
                row.append(f"{eff[0] * 100:.0f} %{rel}")
        row.append(", ".join(dict.fromkeys(f.reason for f in b.flags)) or "ok")
        rows.append(row)
    return headers, rows


def _why(g: Group) -> list[str]:
    out = []
    for b in g.boxes:
        for f in b.flags:
            out.append(f"{b.run.host} ({b.run.source}): {f.reason}: {f.detail}")
    return out


def _title(g: Group) -> str:
    cpus = sorted({b.run.ncpus for b in g.boxes})
    engines = sorted({b.run.engine for b in g.boxes})
    return (
        f"{g.title} · {len(g.boxes)} record(s) · {'/'.join(map(str, cpus))} CPUs · "
        f"engine {'/'.join(engines)}"
    )


def note_lines(groups: Sequence[Group], skipped: Sequence[str]) -> list[str]:
    lines = [f"skipped {s}" for s in skipped]
    small = [g for g in groups if len(g.boxes) < 3]
    if small:
        lines.append(
            "groups of fewer than 3 records are shown but not judged slower, faster, "
            "noisier or scaling worse: there is no median to stand out from"
        )
    lines.append(
        "cells: the figure against the group median, [its 95 % interval]; "
        "1 = one pair, N = one pair per CPU; scaling = total(N) / (N x total(1))"
    )
    return lines


def render_text(groups: Sequence[Group], skipped: Sequence[str]) -> str:
    out = []
    for g in groups:
        headers, rows = group_rows(g)
        out.append(_title(g))
        out.append(format_table(headers, rows, "ll" + "r" * (len(headers) - 3) + "l"))
        out += [f"! {w}" for w in _why(g)]
        out.append("")
    out += [f"# {n}" for n in note_lines(groups, skipped)]
    return "\n".join(out) + "\n"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(groups: Sequence[Group], skipped: Sequence[str]) -> str:
    out = ["# ipctop report", ""]
    for g in groups:
        headers, rows = group_rows(g)
        out += [f"## {_md_escape(_title(g))}", ""]
        out.append("| " + " | ".join(map(_md_escape, headers)) + " |")
        out.append("|" + "|".join(["---", "---"] + ["---:"] * (len(headers) - 3) + ["---"]) + "|")
        for r in rows:
            out.append("| " + " | ".join(map(_md_escape, r)) + " |")
        why = _why(g)
        if why:
            out += ["", "Outliers:", ""] + [f"- {_md_escape(w)}" for w in why]
        out.append("")
    out += [f"_{_md_escape(n)}_  " for n in note_lines(groups, skipped)]
    return "\n".join(out) + "\n"
