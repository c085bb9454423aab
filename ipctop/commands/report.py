"""`ipctop report FILE|DIR...`: many boxes' records in one table, the odd ones out flagged.

For a rack or a kernel CI lab: collect every node's `ipctop check --json`
(or sweep records), then one report groups the boxes by CPU model and
kernel, sets each against its group's median with its interval, and says
why an outlier is one (slower, faster, scales worse, imbalanced, noisy).
"""

from __future__ import annotations

import argparse
import sys

from ..analysis.fleet import Group, group_runs, outliers
from ..errors import UsageError

FORMATS = ("text", "markdown", "html")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="FILE|DIR", help="records, or folders of them")
    p.add_argument("--format", choices=FORMATS, default="text", help="default text")
    p.add_argument("--output", "-o", metavar="FILE", help="write here instead of stdout")
    p.add_argument(
        "--fail-on-outlier", action="store_true", help="exit 1 when any record is flagged"
    )


def run(args: argparse.Namespace) -> int:
    from ..output.records.record_io import atomic_write_text
    from ..output.report.report_input import load

    loaded = load(args.paths)
    if args.output:  # on stdout the report itself names them
        for s in loaded.skipped:
            print(f"ipctop: skipped {s}", file=sys.stderr)
    if not loaded.runs:
        # Say why the last one was left out: a lone malformed record is otherwise a mystery.
        why = f" (skipped {loaded.skipped[-1]})" if loaded.skipped else ""
        raise UsageError(f"no ipctop records to report on in {' '.join(args.paths)}{why}")
    groups = group_runs(loaded.runs)
    text = _render(args.format, groups, loaded.skipped)
    if args.output:
        try:
            atomic_write_text(args.output, text)
        except OSError as exc:
            raise UsageError(f"--output {args.output}: {exc.strerror or exc}") from None
        print(f"report written to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 1 if args.fail_on_outlier and outliers(groups) else 0


def _render(fmt: str, groups: list[Group], skipped: list[str]) -> str:
    if fmt == "html":
        from ..output.report.report_html import render_html

        return render_html(groups, skipped)
    from ..output.report.report_tables import render_markdown, render_text

    return (render_markdown if fmt == "markdown" else render_text)(groups, skipped)
