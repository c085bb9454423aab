"""Read many records for `ipctop report`: files or folders, each turned into a BoxRun.

`check --json` results (ipctop.check/1) and sweep or session records
(ipctop.record/1 and /2) are read. Records of another ipctop schema or version
are named and skipped. A file named on the command line that is not ipctop's
at all is a usage error; inside a folder it is only named and skipped, since a
collection folder may hold other files.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...analysis.fleet import BoxRun, Figure
from ...errors import RecordError, UsageError
from ..records.bounded_read import json_depth_problem, read_bounded_text
from ..records.record import READS, SCHEMA_PREFIX, Record, record_points, unrated
from ..records.record_box import Box
from ..records.record_checks import check_result_problems
from ..records.record_text import escape_controls

CHECK_SCHEMA = "ipctop.check/1"


@dataclass
class Loaded:
    runs: list[BoxRun] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "file: why"


def expand(paths: list[str]) -> list[tuple[Path, bool]]:
    """(file, named) for every path; folders give their *.json files, recursively."""
    out: list[tuple[Path, bool]] = []
    for text in paths:
        p = Path(text)
        try:
            p.stat()
        except FileNotFoundError:
            raise UsageError(f"{text}: no such file or folder") from None
        except OSError as exc:
            raise UsageError(f"{text}: cannot read it ({exc.strerror or exc})") from None
        if p.is_dir():
            if not os.access(p, os.R_OK | os.X_OK):
                raise UsageError(f"{text}: cannot read this folder (permission denied)")
            try:
                found = sorted(q for q in p.rglob("*.json") if q.is_file())
            except OSError as exc:
                raise UsageError(
                    f"{text}: cannot read this folder ({exc.strerror or exc})"
                ) from None
            out += [(q, False) for q in found]
        else:
            out.append((p, True))
    return out


def load(paths: list[str]) -> Loaded:
    got = Loaded()
    for path, named in expand(paths):
        try:
            run, no_rate = _load_one(path)
        except _Skip as why:
            got.skipped.append(f"{path}: {why}")
            continue
        except _Refused as why:
            if named:
                raise RecordError(str(why)) from None
            said = str(why)  # it names the file, by its path or only by its name
            got.skipped.append(said if said.startswith(str(path)) else f"{path}: {said}")
            continue
        except _NotOurs as why:
            if named:
                raise UsageError(f"{path} is not an ipctop record ({why})") from None
            got.skipped.append(f"{path}: not an ipctop record ({why})")
            continue
        got.runs.append(run)
        # Its steps with no rate are no figures: skipped, and said to be, not a 0.
        got.skipped += [f"{path}: {what}" for what in no_rate]
    return got


class _Skip(Exception):
    """An ipctop record this report does not read: named, never fatal."""


class _Refused(Exception):
    """Not readable as a record at all (a FIFO, a device, too big, not UTF-8, no access)."""


class _NotOurs(Exception):
    """Not an ipctop record at all."""


def _load_one(path: Path) -> tuple[BoxRun, list[str]]:
    """The record's figures, and what of it has no rate ("N pair(s): no rate (why)")."""
    try:
        # As compare reads: a FIFO never blocks, /dev/zero or a 300 MiB file is refused.
        text = read_bounded_text(path)
    except RecordError as exc:
        raise _Refused(str(exc)) from None
    try:
        d = escape_controls(json.loads(text), text)  # no ESC from a record reaches a terminal
    except (json.JSONDecodeError, RecursionError):
        raise _NotOurs("not JSON") from None
    too_deep = json_depth_problem(d)  # as compare and replay: no deeper than a record nests
    if too_deep:
        raise _Skip(f"not a record ({too_deep})")
    schema = d.get("schema") if isinstance(d, dict) else None
    if not isinstance(schema, str) or not schema.startswith("ipctop."):
        raise _NotOurs("no ipctop schema")
    if schema == CHECK_SCHEMA:
        problems = check_result_problems(d)
        if problems:
            raise _Skip(f"a malformed {schema} result: {problems[0]}")
        try:
            return from_check(d, path.name), _check_no_rate(d)
        except (KeyError, TypeError, ValueError) as exc:
            raise _Skip(f"a malformed {schema} result ({type(exc).__name__}: {exc})") from None
    if schema in READS:
        if d.get("kind") == "ab":
            raise _Skip(
                "an A/B of two settings on one box, not the box's figures (compare reads it)"
            )
        try:
            rec = Record.from_dict(d, source=str(path))
        except RecordError as exc:
            raise _Skip(str(exc)) from None
        said = [f"{n} pair(s): no rate ({why})" for n, why in sorted(unrated(rec).items())]
        return from_record(rec), said
    if schema.startswith(SCHEMA_PREFIX):
        raise _Skip(f"{schema}: a version this ipctop does not read ({', '.join(READS)})")
    kind = schema.split("/")[0].removeprefix("ipctop.")
    raise _Skip(f"{schema}: report compares check results and sweep records, not {kind}")


def _box_facts(box: Box) -> tuple[str, str, str, int]:
    return box.hostname or "?", box.cpu, box.kernel, len(box.allowed or box.online)


def from_check(d: dict[str, Any], source: str) -> BoxRun:
    # A check result's box is the record's (BoxFacts.to_dict); a bad one is a ValueError.
    host, model, kernel, box_cpus = _box_facts(Box.model_validate(d["box"]))
    ncpus = len(d.get("cpus") or ()) or box_cpus
    figures: dict[str, Figure] = {}
    curves: dict[str, list[tuple[int, float]]] = {}
    for r in d["runs"]:
        if r.get("error"):
            continue
        curve = f"{r['workload']} {r['placement']}"
        pairs = int(r["pairs"])
        total = float(r["total_ops_per_s"])
        per_pair = _per_pair([(t["pair"], float(t["rounds"])) for t in r.get("threads", ())])
        fig = Figure.from_windows(total, r.get("window_totals", ()), per_pair)
        key = _key(curve, pairs, ncpus)
        if key is not None:
            figures[key] = fig
        curves.setdefault(curve, []).append((pairs, total))
    return BoxRun(
        host=host,
        source=source,
        kind="check",
        cpu_model=model,
        kernel=kernel,
        ncpus=ncpus,
        engine=str(d.get("engine", "?")),
        figures=figures,
        curves={c: tuple(sorted(set(v))) for c, v in curves.items()},
    )


def _check_no_rate(d: dict[str, Any]) -> list[str]:
    """A check run with no rate (check_runs.NO_RATE) is left out of the figures, as
    every run with an error is; this one is said, as a sweep step with none is."""
    return [
        f"{r['workload']} {r['placement']} {r['pairs']} pair(s): {r['error']}"
        for r in d["runs"]
        if str(r.get("error") or "").startswith("no rate")
    ]


def from_record(rec: Record) -> BoxRun:
    host, model, kernel, box_cpus = _box_facts(rec.box)
    c = rec.config
    ncpus = len(c.cpus) or box_cpus
    mode = "" if c.mode == "threads" else f" {c.mode}"
    curve = f"{c.workload} {c.placement}{mode}"
    steps = {s.pairs: s for s in rec.steps}
    figures: dict[str, Figure] = {}
    points = [p for p in record_points(rec) if p.settled]
    for p in points:
        key = _key(curve, p.pairs, ncpus)
        if key is None:
            continue
        step = steps.get(p.pairs)
        per_pair = _per_pair([(t.pair, t.ops_per_s) for t in step.threads]) if step else ()
        windows = p.windows or (p.repeats if len(p.repeats) > 1 else ())
        figures[key] = Figure.from_windows(p.total_ops_per_s, windows, per_pair)
    return BoxRun(
        host=host,
        source=rec.name,
        kind=rec.kind,
        cpu_model=model,
        kernel=kernel,
        ncpus=ncpus,
        engine=c.engine,
        figures=figures,
        curves={curve: tuple((p.pairs, p.total_ops_per_s) for p in points)},
    )


def _key(curve: str, pairs: int, ncpus: int) -> str | None:
    """The figures boxes are compared on: 1 pair, and one pair per CPU."""
    if pairs == 1:
        return f"{curve} 1 pair"
    if pairs == ncpus:
        return f"{curve} all CPUs"
    return None


def _per_pair(ends: list[tuple[int, float]]) -> tuple[float, ...]:
    by: dict[int, float] = {}
    for pair, v in ends:
        by[int(pair)] = by.get(int(pair), 0.0) + v
    return tuple(by[p] for p in sorted(by))
