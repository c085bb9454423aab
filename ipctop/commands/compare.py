"""`ipctop compare OLD.json NEW.json [MORE.json ...]`: the seeds' kernel-vs-kernel table.

Every record is read and validated before anything is printed, so a bad file
is one line on stderr and exit 2; a regression beyond --fail-below is exit 1.
One record a side from separate sessions is judged only with the box's
session spread (--session-sd, a record's `sessions`, else the one `check
--sessions` stored for this host, kernel and workload); without one the
figures are shown unjudged, and --fail-below exits 5 (EXIT_NOT_JUDGED).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
from collections.abc import Sequence
from contextlib import nullcontext, redirect_stdout
from pathlib import Path

from ..analysis.stats import TooFewWindows, block_log_ratios, fmt_diff, paired_difference
from ..analysis.verdicts import fmt_rate
from ..errors import EXIT_FAILED, EXIT_NOT_JUDGED, EXIT_OK, RecordError, UsageError
from ..output.exports.gnuplot import write_gnuplot
from ..output.records.ab_record import NOT_JUDGED, ab_blocks
from ..output.records.matrix_record import MatrixRecord, is_matrix, matrix_from_dict
from ..output.records.output_paths import check_output_file
from ..output.records.record import Record, record_points
from ..output.records.record_io import atomic_write_text, read_record
from ..output.records.spread_store import find_spread, read_spreads
from ..output.text import matrix_text
from ..output.text.ab_stalls import stalls_line
from ..output.text.compare_records import (
    Side,
    compare,
    comparison_to_dict,
    format_comparison,
    record_label,
)
from ..output.text.compare_rows import Comparison
from ..output.text.latency_compare import NOT_JUDGED as LATENCY_NOT_JUDGED
from ..output.text.latency_compare import (
    format_latency_comparison,
    has_latency,
    latency_comparison_rows,
)

PLAIN_MARKERS = ("*", "o", "x", "+", "#", "@")


def percent(text: str) -> float:
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be zero or a positive percentage")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "records",
        nargs="+",
        metavar="RECORD.json",
        help="the first is the baseline; with --vs, all of these are pooled as the baseline",
    )
    p.add_argument(
        "--vs",
        nargs="+",
        metavar="RECORD.json",
        help="records pooled as the new side (repeated runs or separate sessions)",
    )
    p.add_argument("--plot", action="store_true", help="draw the curves in the terminal")
    p.add_argument("--gnuplot", metavar="DIR", help='write one "pairs total" file per record')
    p.add_argument(
        "--fail-below",
        type=percent,
        metavar="PCT",
        help="exit 1 when a settled point's whole 95 %% interval lies more than PCT %% "
        "below the baseline; exit 5 when it cannot judge (one record a side from separate "
        "sessions and no session spread)",
    )
    p.add_argument(
        "--force", action="store_true", help="compare records that differ in setting anyway"
    )
    p.add_argument(
        "--session-sd",
        type=percent,
        metavar="PCT",
        help="this box's session-to-session s.d. in %%, taken as known (`ipctop sweep "
        "--sessions 5` measures and stores it for its CPUs, and compare then finds it "
        "itself, with its degrees of freedom), added to intervals where a side is a single "
        "record",
    )
    p.add_argument(
        "--json",
        metavar="FILE",
        help="also write every point's estimate, interval, verdict, n and unit as JSON "
        "('-' for stdout, the table then going to stderr)",
    )


def run(args: argparse.Namespace) -> int:
    loaded = [_load(path) for path in args.records + (args.vs or [])]
    if len(loaded) == 1 and isinstance(loaded[0], Record) and loaded[0].kind == "ab":
        return _ab(loaded[0], args)
    if args.vs is None and len(args.records) < 2:
        raise UsageError(
            "compare needs at least two records (the first is the baseline), or one ab record"
        )
    matrices = [r for r in loaded if isinstance(r, MatrixRecord)]
    if matrices:
        if len(matrices) != len(loaded):
            raise UsageError("compare: matrix records compare only with matrix records")
        labels = [f"{m.box.kernel_release or '?'} ({m.name})" for m in matrices]
        print("One-way latency by topology class (median over each class's cells)")
        print(matrix_text.compare_table(matrices, labels))
        return EXIT_OK
    records = [r for r in loaded if isinstance(r, Record)]  # all of them: no matrix
    if args.vs is not None:
        sides: Sequence[Side] = [records[: len(args.records)], records[len(args.records) :]]
    else:
        sides = records
    json_path = getattr(args, "json", None)
    if json_path and json_path != "-":
        check_output_file(json_path, "--json")
    sd, df, source, why_not = _session_sd(args, records)
    cmp = compare(
        sides, force=args.force, session_sd_pct=sd, session_source=source,
        no_spread_why=why_not, session_df=df,
    )  # fmt: skip
    with redirect_stdout(sys.stderr) if json_path == "-" else nullcontext():
        code = _print_all(args, cmp, records)
    if json_path:
        doc = comparison_to_dict(cmp)
        if has_latency(records):
            labels = [record_label(r) for r in records]
            doc["latency"] = latency_comparison_rows(records, labels)
            doc["latency_note"] = LATENCY_NOT_JUDGED
        text = json.dumps(doc, indent=2, allow_nan=False)
        if json_path == "-":
            print(text)
        else:
            atomic_write_text(json_path, text + "\n")
    return code


def _session_sd(
    args: argparse.Namespace, records: list[Record]
) -> tuple[float | None, float, str, str]:
    """(the session term's s.d. %, its df, where it came from, why none was stored):
    --session-sd (taken as known), else the widest a record carries, else the one this
    box stored for the records' host, kernel, workload and CPUs (check --sessions,
    sweep --sessions). A measured spread enters as the spread of a session's mean with
    its K - 1 degrees of freedom (analysis.sessions.session_term)."""
    given: float | None = getattr(args, "session_sd", None)
    if given is not None:
        return given, math.inf, f"session spread {given:g} % s.d. (--session-sd)", ""
    carried = [r.sessions for r in records if r.sessions is not None]
    if carried:
        terms = [(s.term(), s) for s in carried]
        (sd, df), s = max(terms, key=lambda t: t[0][0])
        widest = next(r for r in records if r.sessions is s)
        return (
            sd,
            df,
            f"session term {sd:.1f} % s.d. of a session's mean, df {df:g} (sessions "
            f"{s.session_sd_pct:.1f} %, runs {s.run_sd_pct:.1f} %), measured by --sessions "
            f"in {widest.name}, n={s.sessions}",
            "",
        )
    try:
        entries = read_spreads()
    except RecordError as exc:
        return None, math.inf, "", str(exc)  # a broken store costs its verdicts, not the table
    cfg = records[0].config
    found = find_spread(
        entries,
        [(r.box.hostname, r.box.kernel_release) for r in records],
        cfg.workload,
        cfg.cpus,
        cfg.placement,
        cfg.mode,
    )
    if found.spread is None:
        return None, math.inf, "", found.why_not
    sd, df = found.spread.term()
    return sd, df, found.spread.legend(), ""


def _print_all(args: argparse.Namespace, cmp: Comparison, records: list[Record]) -> int:
    for line in noise_lines(records):
        print(line)
    print(format_comparison(cmp))
    for text in profile_deltas([r.name for r in records], records):
        print()
        print(text)
    if has_latency(records):
        print("\nLatency (all pairs; geometric mean of the sampler windows [95 % interval] n)")
        print(format_latency_comparison(records, [record_label(r) for r in records]))
        print(f"  {LATENCY_NOT_JUDGED}")
    if args.plot:
        print()
        print(plot_text(cmp, records))
    if args.gnuplot:
        for path in write_gnuplot_files(Path(args.gnuplot), records):
            print(f"gnuplot data written to {path}", file=sys.stderr)
    if args.fail_below is None:
        return EXIT_OK
    return _gate(cmp, args.fail_below)


def profile_deltas(labels: list[str], records: list[Record]) -> list[str]:
    """The delta explained, against the first record, at every pair count both profiled."""
    from ..output.text.profile_table import format_delta

    out = []
    base = {s.pairs: s for s in records[0].steps if s.profile}
    for label, record in zip(labels[1:], records[1:]):
        for step in record.steps:
            old = base.get(step.pairs)
            if old is None or not old.profile or not step.profile:
                continue
            text = format_delta(
                (labels[0], label), old.profile, step.profile, old.costs, step.costs
            )
            out.append(f"{step.pairs} pair(s): {text}")
    return out


def _load(path: str) -> Record | MatrixRecord:
    """A matrix record, or a sweep/session record (whose reader names any problem)."""
    from ..errors import RecordError
    from ..output.records.bounded_read import read_bounded_text
    from ..output.records.record_text import escape_controls

    try:
        # Bounded, and never blocking on a FIFO: `compare a.json /dev/zero` must not
        # read until the OOM killer comes.
        text = read_bounded_text(path)
        d = escape_controls(json.loads(text), text)  # no ESC from a record reaches a terminal
    except (RecordError, ValueError, RecursionError):
        return read_record(path)
    if is_matrix(d):
        return matrix_from_dict(d, path)
    return read_record(path)


def _gate(cmp: Comparison, threshold: float) -> int:
    # A gate must not pass a point it could not compare: missing on a side, or no rate.
    unmatched = uncomparable(cmp)
    have = [r for r in cmp.rows if any(d is not None for d in r.intervals)]
    if not have and not unmatched:
        raise UsageError(
            "--fail-below needs an interval: no point has at least 2 windows on both sides"
        )
    regressions = cmp.regressions(threshold)
    if cmp.not_judged and not regressions and not unmatched:
        # A gate that cannot judge must neither pass nor look like a regression.
        print(f"\n--fail-below {threshold:g}: {cmp.not_judged}")
        print(f"ipctop: --fail-below not judged: {cmp.not_judged}", file=sys.stderr)
        return EXIT_NOT_JUDGED
    if not regressions and not unmatched:
        if not cmp.decidable:
            print(f"\nno settled point to judge against {cmp.labels[0]}: not passed")
            return EXIT_FAILED
        print(
            f"\nno point shown more than {threshold:g} % below {cmp.labels[0]} "
            f"({cmp.decidable} judged, one-sided, Holm 5 % family-wise)"
        )
        return EXIT_OK
    if regressions:
        print(
            f"\nregressions of more than {threshold:g} % against {cmp.labels[0]} "
            f"(one-sided, Holm over {cmp.decidable} point(s) judged):"
        )
        for r in regressions:
            print(
                f"  {r.label} at {r.pairs} pair(s): {r.diff_pct:+.1f} % "
                f"(interval up to {r.high_pct:+.1f}, Holm p {r.p_holm:.3f})"
            )
    if unmatched:
        print(f"\nnot comparable with {cmp.labels[0]}, so not passed:")
        for line in unmatched:
            print(f"  {line}")
    return EXIT_FAILED


def uncomparable(cmp: Comparison) -> list[str]:
    """Every (side, point) the gate cannot judge: missing on either side, or no rate."""
    if not cmp.rows:
        return ["no record has any point"]
    out = []
    for i, label in enumerate(cmp.labels[1:], start=1):
        if all(row.totals[i] is None for row in cmp.rows):
            out.append(f"{label}: no points at all")
            continue
        for row in cmp.rows:
            if row.diffs[i] is not None:
                continue
            base, new = row.totals[0], row.totals[i]
            if base is None:
                why = f"the baseline has no {row.pairs}-pair point"
            elif new is None:
                why = f"no {row.pairs}-pair point"
            else:
                why = f"the baseline's {row.pairs}-pair total is {base:g}"
            out.append(f"{label} at {row.pairs} pair(s): {why}")
    return out


def _ab(record: Record, args: argparse.Namespace) -> int:
    """One `ipctop ab` record: its B against its A, from the ABBA blocks."""
    blocks = ab_blocks(record)
    try:
        d = paired_difference(blocks)
    except TooFewWindows as exc:
        raise UsageError(f"{record.name}: {exc}") from None
    if record.ab is not None:
        for name, side in (("A", record.ab.sides.A), ("B", record.ab.sides.B)):
            what = " ".join(p for p in (side.options, side.cmd) if p)
            print(f"{name}: {what or '(the shared options)'}")
    # The run itself may have declined to judge ops/s (a busy box): so does its reading.
    result = record.ab.result if record.ab is not None else None
    why = (result.not_judged_why or "") if result is not None else ""
    declined = result is not None and result.verdict == NOT_JUDGED
    verdict = "not judged (a busy box)" if declined else d.verdict
    # The blocks B/A rests on: one whose side kept no window (stalled) gave no ratio.
    print(f"B/A: {fmt_diff(d)} · {verdict} · {d.test}, {len(block_log_ratios(blocks))} blocks")
    if declined:
        print(f"  {why}")
    if record.ab is not None and record.ab.stalls is not None:
        print(stalls_line(record.ab.stalls, len(blocks)))
    for line in noise_lines([record]):
        print(line)
    table = ab_latency_table(record)
    if table:
        print(table)
    delta = ab_profile_delta(record)
    if delta:
        print(delta)
    if args.fail_below is not None and declined:
        print(f"ipctop: --fail-below: {why}", file=sys.stderr)
        return EXIT_NOT_JUDGED
    if args.fail_below is not None and d.below(args.fail_below):
        print(f"B is more than {args.fail_below:g} % below A over the whole interval")
        return EXIT_FAILED
    return EXIT_OK


def ab_latency_table(record: Record) -> str | None:
    """The latency table of an ab record (None for one made before ab timed rounds)."""
    from ..output.text.ab_latency_text import format_ab_latency

    latency = record.ab.latency if record.ab is not None else None
    if latency is None:
        return None
    blocks = [{"A": {k: list(v) for k, v in b.A.items()}, "B": {k: list(v) for k, v in b.B.items()}}
              for b in latency.blocks]  # fmt: skip
    return format_ab_latency(blocks)


def ab_profile_delta(record: Record) -> str | None:
    """The delta explained of an `ab --profile` record: B's slots against A's."""
    from ..output.text.profile_table import format_delta

    if record.ab is None or record.ab.profile is None:
        return None
    prof, costs = record.ab.profile, record.ab.costs
    a_costs, b_costs = (costs.A, costs.B) if costs is not None else (None, None)
    return format_delta(("A", "B"), prof.A, prof.B, a_costs, b_costs)


def noise_lines(records: list[Record]) -> list[str]:
    """The box's noise floor, from records whose check measured one."""
    out = []
    for r in records:
        floor = r.noise
        if floor:
            out.append(
                f"noise floor of {r.name}'s box: ±{floor.pct:.1f} % "
                f"(A/A, {floor.seconds:g} s, n={floor.n})"
            )
    return out


def gnuplot_names(records: list[Record]) -> list[str]:
    """One file name per record: its own name's stem, numbered when two would clash."""
    stems = [Path(r.name).stem or "record" for r in records]
    if len(set(stems)) == len(stems):
        return [f"{s}.dat" for s in stems]
    return [f"{i + 1}-{s}.dat" for i, s in enumerate(stems)]


def write_gnuplot_files(directory: Path, records: list[Record]) -> list[Path]:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--gnuplot {directory}: {exc.strerror or exc}") from None
    if not directory.is_dir():
        raise UsageError(f"--gnuplot {directory} is not a directory")
    return [
        write_gnuplot(directory, name, record_points(r))
        for name, r in zip(gnuplot_names(records), records)
    ]


def plot_text(cmp: Comparison, records: list[Record]) -> str:
    """The scaling curves as terminal text; colour only when stdout is a terminal."""
    import plotext as plt

    plt.clear_figure()
    width, height = shutil.get_terminal_size((100, 30))
    plt.plotsize(min(width, 120), max(15, min(height - 5, 30)))
    plt.theme("default" if sys.stdout.isatty() else "clear")
    colour = sys.stdout.isatty()
    for i, (label, record) in enumerate(zip(cmp.labels, records)):
        points = record_points(record)
        plt.plot(
            [p.pairs for p in points],
            [p.total_ops_per_s for p in points],
            label=label,
            # Without colour only the marker tells the curves apart.
            marker="braille" if colour else PLAIN_MARKERS[i % len(PLAIN_MARKERS)],
        )
    top = max((t for row in cmp.rows for t in row.totals if t is not None), default=0.0)
    if top > 0:
        # From zero, so that a collapse looks like one; ticks read "4.01M", not 4010000.0.
        ticks = [top * i / 4 for i in range(5)]
        plt.ylim(0, top * 1.05)
        plt.yticks(ticks, [fmt_rate(t) for t in ticks])
    plt.title("total ops/s by pairs")
    plt.xlabel("pairs")
    plt.xticks(sorted({r.pairs for r in cmp.rows}))
    text = plt.build()
    plain: str = plt.uncolorize(text)  # plotext is untyped
    return text if colour else plain
