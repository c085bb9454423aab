"""The versioned JSON record of a sweep or a live session ("ipctop.record/2").

Version 2 adds the per-window rates every interval is built from ("windows"
in steps and points, "window_s" in the config); version 1 records still read,
and their repeats stand in for the windows.

Other tools read these files, so the key names are fixed. Records come back
from disk hand-edited, truncated or from another version; reading one either
yields a Record or raises RecordError with one line naming the problem.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ipctop.analysis.scaling import ScalingPoint, spread_pct
from ipctop.engine.sample import Sample
from ipctop.errors import RecordError
from ipctop.output.latency_record import problems as latency_problems

SCHEMA = "ipctop.record/2"
SCHEMA_PREFIX = "ipctop.record/"
# Versions this ipctop reads; it writes only SCHEMA.
READS = ("ipctop.record/1", SCHEMA)
KINDS = ("sweep", "session")


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class StepThread:
    """One end of one pair over a whole sweep step."""

    pair: int
    role: str
    cpu: int | None  # None when unpinned
    ops_per_s: float
    rounds: int
    errors: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "pair": self.pair,
            "role": self.role,
            "cpu": self.cpu,
            "ops_per_s": self.ops_per_s,
            "rounds": self.rounds,
            "errors": self.errors,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StepThread:
        return cls(
            pair=int(d["pair"]),
            role=str(d["role"]),
            cpu=None if d["cpu"] is None else int(d["cpu"]),
            ops_per_s=float(d["ops_per_s"]),
            rounds=int(d["rounds"]),
            errors=int(d.get("errors", 0)),
        )


@dataclass
class Step:
    """One pair count of a sweep; total_ops_per_s is what the sweep reports for it."""

    pairs: int
    total_ops_per_s: float
    repeats: list[float] = field(default_factory=list)
    spread_pct: float | None = None
    oversubscribed: bool = False
    threads: list[StepThread] = field(default_factory=list)
    costs: dict[str, Any] | None = None  # where the time went (engine.costs.Costs.to_dict)
    ops: dict[str, Any] | None = None  # per-operation rates (life-cycle workloads)
    events: list[str] = field(default_factory=list)
    windows: list[float] = field(default_factory=list)  # every run's window rates, in order
    profile: dict[str, Any] | None = None  # optional: engine.profile.Profile.to_dict
    latency: dict[str, Any] | None = None  # optional: see output/latency_record.py

    def __post_init__(self) -> None:
        self.repeats = [float(x) for x in self.repeats] or [float(self.total_ops_per_s)]
        self.windows = [float(x) for x in self.windows]
        self.threads = [
            t if isinstance(t, StepThread) else _build(StepThread, t) for t in self.threads
        ]
        if self.spread_pct is None:
            self.spread_pct = spread_pct(self.repeats)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "total_ops_per_s": self.total_ops_per_s,
            "repeats": list(self.repeats),
            "spread_pct": self.spread_pct,
            "oversubscribed": self.oversubscribed,
            "threads": [t.to_dict() for t in self.threads],
            "costs": self.costs,
            "ops": self.ops,
            "events": list(self.events),
            "windows": list(self.windows),
            **({"profile": self.profile} if self.profile is not None else {}),
            **({"latency": self.latency} if self.latency is not None else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Step:
        return cls(
            pairs=int(d["pairs"]),
            total_ops_per_s=float(d["total_ops_per_s"]),
            repeats=[float(x) for x in d["repeats"]],
            spread_pct=float(d["spread_pct"]),
            oversubscribed=bool(d["oversubscribed"]),
            threads=[StepThread.from_dict(t) for t in d["threads"]],
            costs=d.get("costs") if isinstance(d.get("costs"), dict) else None,
            ops=d.get("ops") if isinstance(d.get("ops"), dict) else None,
            events=[str(e) for e in d.get("events", [])],
            windows=[float(x) for x in d.get("windows", [])],
            profile=d.get("profile") if isinstance(d.get("profile"), dict) else None,
            latency=d.get("latency") if isinstance(d.get("latency"), dict) else None,
        )


def _build(cls: type, d: dict[str, Any]) -> Any:
    # Tolerates keys it does not know, so a newer writer's extras do not break us.
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in d.items() if k in names})


def point_to_dict(p: ScalingPoint) -> dict[str, Any]:
    # repeats and spread_pct are optional extras beyond the fixed keys.
    return {
        "pairs": p.pairs,
        "total_ops_per_s": p.total_ops_per_s,
        "settled": p.settled,
        "repeats": list(p.repeats),
        "spread_pct": p.spread_pct,
        "windows": list(p.windows),
    }


def point_from_dict(d: dict[str, Any]) -> ScalingPoint:
    return ScalingPoint(
        pairs=int(d["pairs"]),
        total_ops_per_s=float(d["total_ops_per_s"]),
        repeats=tuple(float(x) for x in d.get("repeats", ())),
        spread_pct=None if d.get("spread_pct") is None else float(d["spread_pct"]),
        settled=bool(d.get("settled", True)),
        windows=tuple(float(x) for x in d.get("windows", ())),
    )


@dataclass
class Record:
    """A sweep or session. Lists accept plain dicts too; they are turned into objects."""

    kind: str
    box: dict[str, Any]
    config: dict[str, Any]
    steps: list[Step] = field(default_factory=list)
    points: list[ScalingPoint] = field(default_factory=list)
    timeline: list[Sample] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    interrupted: bool = False
    created: str = field(default_factory=now_iso)
    schema: str = SCHEMA
    # Where it was read from; used for labels, never written.
    source: str | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.steps = [s if isinstance(s, Step) else _build(Step, s) for s in self.steps]
        self.points = [
            p if isinstance(p, ScalingPoint) else point_from_dict(p) for p in self.points
        ]
        self.timeline = [s if isinstance(s, Sample) else Sample.from_dict(s) for s in self.timeline]
        self.events = [str(e) for e in self.events]

    @property
    def name(self) -> str:
        return os.path.basename(self.source) if self.source else "record"

    def to_dict(self) -> dict[str, Any]:
        # Whatever it was read as, this writer's output is the current version.
        return {
            "schema": SCHEMA,
            "kind": self.kind,
            "created": self.created,
            "interrupted": self.interrupted,
            "box": dict(self.box),
            "config": dict(self.config),
            "steps": [s.to_dict() for s in self.steps],
            "points": [point_to_dict(p) for p in self.points],
            "timeline": [s.to_dict() for s in self.timeline],
            "events": list(self.events),
        }

    @classmethod
    def from_dict(cls, d: Any, source: str | None = None) -> Record:
        """Validate and build; raises RecordError naming the first problem."""
        name = os.path.basename(source) if source else "record"
        found = d.get("schema") if isinstance(d, dict) else None
        if isinstance(found, str) and found not in READS and found.startswith(SCHEMA_PREFIX):
            raise RecordError(f"{name} is {found}; this ipctop reads {' and '.join(READS)}")
        problems = validate_record_dict(d)
        if problems:
            more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
            raise RecordError(f"{name}: {problems[0]}{more}")
        try:
            return cls(
                kind=d["kind"],
                box=dict(d["box"]),
                config=dict(d["config"]),
                steps=[Step.from_dict(s) for s in d["steps"]],
                points=[point_from_dict(p) for p in d["points"]],
                timeline=[Sample.from_dict(s) for s in d["timeline"]],
                events=list(d["events"]),
                interrupted=d["interrupted"],
                created=d["created"],
                schema=d["schema"],
                source=source,
            )
        except (KeyError, TypeError, ValueError) as e:
            # validate_record_dict should have caught it; still never leak a traceback.
            raise RecordError(f"{name}: malformed record ({type(e).__name__}: {e})") from e


# --- validation -----------------------------------------------------------

_MISSING = object()

_CONFIG_STR = ("workload", "placement", "mode", "engine")
# Nullable because a live session has no fixed duration or repeat count.
_CONFIG_NUM = ("seconds", "warmup", "interval")


def _tname(v: Any) -> str:
    if v is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string"}.get(
        type(v),
        "list" if isinstance(v, list) else "object" if isinstance(v, dict) else type(v).__name__,
    )


class _Checker:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def _get(self, d: dict[str, Any], key: str, where: str) -> Any:
        if key not in d:
            self.problems.append(f"{where}{key} is missing")
            return _MISSING
        return d[key]

    def number(
        self,
        d: dict[str, Any],
        key: str,
        where: str,
        *,
        nullable: bool = False,
        integer: bool = False,
        minimum: float | None = 0,
        required: bool = True,
    ) -> Any:
        if not required and key not in d:
            return _MISSING
        v = self._get(d, key, where)
        if v is _MISSING or (v is None and nullable):
            return v
        return self.value(v, f"{where}{key}", integer=integer, minimum=minimum)

    def value(self, v: Any, label: str, *, integer: bool = False, minimum: float | None = 0) -> Any:
        # JSON has no integer type of its own; 3.0 is a fine integer.
        is_int = isinstance(v, int) or (isinstance(v, float) and v.is_integer())
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and not is_int):
            if not (isinstance(v, float) and not math.isfinite(v)):
                want = "an integer" if integer else "a number"
                self.problems.append(f"{label} should be {want}, not {_tname(v)}")
                return _MISSING
        if math.isnan(v):
            self.problems.append(f"{label} is NaN")
            return _MISSING
        if math.isinf(v):
            self.problems.append(f"{label} is infinite")
            return _MISSING
        if minimum is not None and v < minimum:
            what = "negative" if minimum == 0 else f"below {minimum}"
            self.problems.append(f"{label} is {what} ({v})")
            return _MISSING
        return v

    def typed(
        self,
        d: dict[str, Any],
        key: str,
        where: str,
        typ: type,
        *,
        nullable: bool = False,
        required: bool = True,
    ) -> Any:
        if not required and key not in d:
            return _MISSING
        v = self._get(d, key, where)
        if v is _MISSING or (v is None and nullable):
            return v
        if not isinstance(v, typ):
            want = {bool: "true or false", str: "a string", list: "a list", dict: "an object"}[typ]
            self.problems.append(f"{where}{key} should be {want}, not {_tname(v)}")
            return _MISSING
        return v

    def items(self, d: dict[str, Any], key: str, where: str, *, required: bool = True):
        """Yield (where-prefix, item dict) for a list of objects."""
        lst = self.typed(d, key, where, list, required=required)
        if lst is _MISSING:
            return
        for i, item in enumerate(lst):
            at = f"{where}{key}[{i}]"
            if not isinstance(item, dict):
                self.problems.append(f"{at} should be an object, not {_tname(item)}")
                continue
            yield at + ".", item


def _schema_problem(d: dict[str, Any]) -> str | None:
    found = d.get("schema", _MISSING)
    if found is _MISSING:
        return "schema is missing (not an ipctop record?)"
    if found not in READS:
        return f"schema is {found!r}; this ipctop reads {' and '.join(READS)}"
    return None


def validate_record_dict(d: Any) -> list[str]:
    """Every problem found in a decoded record, as short phrases; empty when it is valid."""
    if not isinstance(d, dict):
        return [f"top level should be an object, not {_tname(d)}"]
    problem = _schema_problem(d)
    if problem:
        # Another version's other keys may mean other things: stop here.
        return [problem]
    c = _Checker()
    kind = c.typed(d, "kind", "", str)
    if kind is not _MISSING and kind not in KINDS:
        c.problems.append(f"kind should be one of {', '.join(KINDS)}, not {kind!r}")
    created = c.typed(d, "created", "", str)
    if created is not _MISSING:
        try:
            datetime.fromisoformat(created.replace("Z", "+00:00"))
        except ValueError:
            c.problems.append(f"created is not an ISO 8601 time ({created!r})")
    c.typed(d, "interrupted", "", bool)
    c.typed(d, "box", "", dict)
    config = c.typed(d, "config", "", dict)
    if config is not _MISSING:
        for key in _CONFIG_STR:
            c.typed(config, key, "config.", str)
        for key in _CONFIG_NUM:
            c.number(config, key, "config.", nullable=True)
        c.number(config, "repeat", "config.", nullable=True, integer=True, minimum=1)
        cpus = c.typed(config, "cpus", "config.", list)
        if cpus is not _MISSING:
            for i, cpu in enumerate(cpus):
                if isinstance(cpu, bool) or not isinstance(cpu, int) or cpu < 0:
                    c.problems.append(f"config.cpus[{i}] should be a CPU number, not {cpu!r}")
    for at, step in c.items(d, "steps", ""):
        c.number(step, "pairs", at, integer=True, minimum=1)
        c.number(step, "total_ops_per_s", at)
        c.number(step, "spread_pct", at)
        c.typed(step, "oversubscribed", at, bool)
        repeats = c.typed(step, "repeats", at, list)
        if repeats is not _MISSING:
            for i, x in enumerate(repeats):
                c.value(x, f"{at}repeats[{i}]")
        _numbers(c, step, "windows", at)
        c.problems.extend(latency_problems(step.get("latency"), at))
        for tat, th in c.items(step, "threads", at):
            c.number(th, "pair", tat, integer=True)
            c.typed(th, "role", tat, str)
            c.number(th, "cpu", tat, integer=True, nullable=True)
            c.number(th, "ops_per_s", tat)
            c.number(th, "rounds", tat, integer=True)
            c.number(th, "errors", tat, integer=True, required=False)
    for at, pt in c.items(d, "points", ""):
        c.number(pt, "pairs", at, integer=True, minimum=1)
        c.number(pt, "total_ops_per_s", at)
        c.typed(pt, "settled", at, bool)
        c.typed(pt, "repeats", at, list, required=False)
        c.number(pt, "spread_pct", at, nullable=True, required=False)
        _numbers(c, pt, "windows", at)
    for at, s in c.items(d, "timeline", ""):
        _check_sample(c, s, at)
    events = c.typed(d, "events", "", list)
    if events is not _MISSING:
        for i, e in enumerate(events):
            if not isinstance(e, str):
                c.problems.append(f"events[{i}] should be a string, not {_tname(e)}")
    return c.problems


def _numbers(c: _Checker, d: dict[str, Any], key: str, at: str) -> None:
    """An optional list of rates (version 2's windows)."""
    xs = c.typed(d, key, at, list, required=False)
    if xs is not _MISSING:
        for i, x in enumerate(xs):
            c.value(x, f"{at}{key}[{i}]")


def _check_sample(c: _Checker, s: dict[str, Any], at: str) -> None:
    c.number(s, "t", at, minimum=None)
    c.number(s, "dt", at)
    c.number(s, "pairs", at, integer=True)
    c.number(s, "total_ops_per_s", at)
    c.number(s, "ctxt_per_s", at, nullable=True, required=False)
    for tat, th in c.items(s, "threads", at, required=False):
        c.number(th, "pair", tat, integer=True)
        c.typed(th, "role", tat, str)
        c.number(th, "tid", tat, integer=True)
        c.number(th, "bound_cpu", tat, integer=True, nullable=True)
        c.number(th, "last_cpu", tat, integer=True, nullable=True)
        c.number(th, "rounds", tat, integer=True)
        c.number(th, "ops_per_s", tat)
        c.number(th, "errors", tat, integer=True, required=False)
        c.typed(th, "state", tat, str, required=False)
        c.number(th, "vcsw_per_s", tat, nullable=True, required=False)
        c.number(th, "ivcsw_per_s", tat, nullable=True, required=False)
    for cat, cpu in c.items(s, "cpus", at, required=False):
        c.number(cpu, "cpu", cat, integer=True)
        for key in ("user", "system", "softirq", "idle"):
            c.number(cpu, key, cat)
    for iat, ipi in c.items(s, "ipis", at, required=False):
        c.number(ipi, "cpu", iat, integer=True)
        c.number(ipi, "resched_per_s", iat, nullable=True)
        c.number(ipi, "callfunc_per_s", iat, nullable=True)
    events = c.typed(s, "events", at, list, required=False)
    if events is not _MISSING and not all(isinstance(e, str) for e in events):
        c.problems.append(f"{at}events should hold only strings")
    c.typed(s, "extra", at, dict, required=False)


# --- files ----------------------------------------------------------------


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write text so that readers see either the old file or the whole new one."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; a record is meant to be shared
        os.replace(tmp, path)
    except BaseException:
        # The rename never happened: do not leave a half-written temp file behind.
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    # Make the rename itself durable.
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
    return path


def write_record(path: str | os.PathLike[str], record: Record) -> Path:
    """Atomically write a record; refuses one this ipctop could not read back."""
    d = record.to_dict()
    # Validate what a reader will see: JSON turns the samples' tuples into lists.
    problems = validate_record_dict(json.loads(json.dumps(d)))
    if problems:
        raise RecordError(f"refusing to write {os.fspath(path)}: {problems[0]}")
    text = json.dumps(d, indent=1, allow_nan=False) + "\n"
    return atomic_write_text(path, text)


def read_record(path: str | os.PathLike[str]) -> Record:
    """Read and validate a record; every failure is a RecordError with one line."""
    shown = os.fspath(path)
    name = os.path.basename(shown) or shown
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise RecordError(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise RecordError(f"{shown} is a directory, not a record file") from None
    except PermissionError:
        raise RecordError(f"{shown}: permission denied") from None
    except UnicodeDecodeError:
        raise RecordError(f"{name} is not JSON (not even UTF-8 text)") from None
    except OSError as e:
        raise RecordError(f"{shown}: {e.strerror or e}") from None
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise RecordError(
            f"{name} is truncated or not JSON (line {e.lineno}, column {e.colno})"
        ) from None
    except RecursionError:
        raise RecordError(f"{name} is not a record (nested too deeply)") from None
    return Record.from_dict(d, source=shown)


def record_points(record: Record) -> list[ScalingPoint]:
    """Scaling points: the recorded ones if any, else one per sweep step."""
    if record.points:
        return sorted(record.points, key=lambda p: p.pairs)
    return sorted(
        (
            ScalingPoint(
                pairs=s.pairs,
                total_ops_per_s=s.total_ops_per_s,
                repeats=tuple(s.repeats),
                spread_pct=s.spread_pct,
                settled=True,
                windows=tuple(s.windows),
            )
            for s in record.steps
        ),
        key=lambda p: p.pairs,
    )
