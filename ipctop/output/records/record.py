"""The versioned JSON record of a sweep or a live session ("ipctop.record/3"), as typed models.

Version 2 adds the per-window rates every interval is built from ("windows"
in steps and points, "window_s" in the config). Version 3 adds the box's
session level ("sessions", from `check --sessions`) and makes the per-run
figures ("repeats") the replicate compare judges by. Versions 1 and 2 still
read; in version 1 the repeats stand in for the windows.

Other tools read these files, so the key names are fixed; the models below
are the one statement of them, and generate the JSON Schema published in
ipctop/schema/record.schema.json (`python -m ipctop.output.records.record_schema`).
Records come back from disk hand-edited, truncated or from another version;
reading one either yields a Record or raises RecordError with one line
naming the problem. record_io.py reads and writes the files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Container
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)
from pydantic_core import PydanticCustomError

from ipctop.analysis.noise import StepNoise
from ipctop.analysis.scaling import ScalingPoint, spread_pct
from ipctop.analysis.sessions import session_term
from ipctop.engine.config import RunConfig
from ipctop.engine.costs import Costs
from ipctop.engine.opstats import OpRate
from ipctop.engine.profile import Profile
from ipctop.engine.sample import Sample, lift_extra
from ipctop.engine.stalls import StallSummary
from ipctop.errors import RecordError
from ipctop.output.records.latency_record import StepLatency
from ipctop.output.records.latency_record import problems as latency_problems
from ipctop.output.records.profile_record import StepProfile
from ipctop.output.records.record_ab import AbRecord
from ipctop.output.records.record_box import Box
from ipctop.output.records.record_checks import record_problems
from ipctop.output.records.record_problems import phrase
from ipctop.plain import Count, Integer, Rate, from_plain

SCHEMA = "ipctop.record/3"
SCHEMA_PREFIX = "ipctop.record/"
# Versions this ipctop reads; it writes only SCHEMA.
READS = ("ipctop.record/1", "ipctop.record/2", SCHEMA)
KINDS = ("sweep", "session", "ab")
# Keys every record file has, in the order a reader is told they are missing.
FILE_KEYS = (
    "kind",
    "created",
    "interrupted",
    "box",
    "config",
    "steps",
    "points",
    "timeline",
    "events",
)


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class StepThread:
    """One end of one pair over a whole sweep step."""

    pair: Count
    role: str
    cpu: Count | None  # None when unpinned
    ops_per_s: Rate
    rounds: Count
    errors: Count = 0


@dataclass
class StepUnit:
    """One group or room of a load sweep's step, from its median run: what the
    monitor shows per unit (a replay's rows), not each of its 40 or 80 ends."""

    unit: Count
    ends: Count
    ops_per_s: Rate  # messages delivered/s: a hackbench group's over its own time
    cpus: list[Count] = field(default_factory=list)  # where its ends last ran


def _noise_in_range(n: StepNoise | None) -> StepNoise | None:
    # Shares are of a CPU's time, clocks positive: a hand-edited NaN or 1e308 is refused.
    if n is None:
        return n
    pcts = [n.mark_pct, *n.steal_pct, *n.pressure_pct]
    if not all(v is None or 0.0 <= v <= 100.0 for v in pcts):
        raise PydanticCustomError("ipctop_noise", "shares should lie in 0..100 %")
    if not all(v is None or 0.0 < v < 1e6 for v in n.mhz or ()):
        raise PydanticCustomError("ipctop_noise", "clocks should lie in 0..1e6 MHz")
    if not 0 <= n.stolen_windows <= len(n.steal_pct):
        raise PydanticCustomError("ipctop_noise", "stolen_windows should count steal_pct's")
    return n


def _known(cls: type[_Known], d: dict[str, Any]) -> _Known:
    # Unvalidated: keys this version does not know are dropped (Record.from_dict validates;
    # a step alone reads through plain.from_plain).
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in d.items() if k in names})


@dataclass
class Step:
    """One pair count of a sweep; total_ops_per_s is what the sweep reports for it."""

    pairs: Annotated[Integer, Field(ge=1)]
    total_ops_per_s: Rate
    repeats: list[Rate] = field(default_factory=list)
    spread_pct: Rate | None = None
    oversubscribed: bool = False
    threads: list[StepThread] = field(default_factory=list)
    costs: Costs | None = None  # where the time went (the median run's)
    ops: dict[str, OpRate] | None = None  # per-operation rates (life-cycle workloads)
    events: list[str] = field(default_factory=list)
    windows: list[Rate] = field(default_factory=list)  # every run's window rates, in order
    profile: StepProfile | None = None  # optional: only when profiled
    latency: StepLatency | None = None  # optional: only when rounds were timed
    stalls: StallSummary | None = None  # optional: only when a pair stalled
    noise: Annotated[StepNoise | None, AfterValidator(_noise_in_range)] = (
        None  # optional: per window
    )
    units: list[StepUnit] = field(default_factory=list)  # optional: a load sweep's units
    # Optional: why the step has no rate (every window of every run stalled). Its
    # total_ops_per_s is then 0.0, not a measured 0, its repeats and windows empty,
    # and the sweep made no point of it: readers skip it and say so (`unrated`).
    no_rate: str | None = None

    def __post_init__(self) -> None:
        # A step with no rate has no repeat: its 0.0 is not one.
        mine: list[float] = [] if self.no_rate is not None else [float(self.total_ops_per_s)]
        self.repeats = [float(x) for x in self.repeats] or mine
        self.windows = [float(x) for x in self.windows]
        self.threads = [t if isinstance(t, StepThread) else StepThread(**t) for t in self.threads]
        self.units = [u if isinstance(u, StepUnit) else _known(StepUnit, u) for u in self.units]
        if isinstance(self.costs, dict):  # from_dict's plain dict
            self.costs = from_plain(Costs, self.costs)
        if isinstance(self.stalls, dict):
            self.stalls = from_plain(StallSummary, self.stalls)
        if isinstance(self.noise, dict):
            self.noise = from_plain(StepNoise, self.noise)
        if isinstance(self.profile, dict):
            self.profile = Profile.from_dict(self.profile)
        if isinstance(self.latency, dict):
            self.latency = from_plain(StepLatency, self.latency)
        if self.ops is not None:
            self.ops = {
                k: v if isinstance(v, OpRate) else from_plain(OpRate, v)
                for k, v in self.ops.items()
            }
        if self.spread_pct is None:
            self.spread_pct = spread_pct(self.repeats)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if self.profile is not None:
            d["profile"] = self.profile.to_dict()
        if self.ops is not None:
            d["ops"] = {k: v.to_dict() for k, v in self.ops.items()}
        if self.latency is not None:
            d["latency"] = self.latency.to_dict()
        if self.noise is not None:
            d["noise"] = self.noise.to_dict()
        for key in ("profile", "latency", "stalls", "noise", "no_rate"):
            if d[key] is None:
                del d[key]  # optional: absent, not null, when not measured
        if not d["units"]:
            del d["units"]  # a pair sweep's steps read as before
        return d


def point_to_dict(p: ScalingPoint) -> dict[str, Any]:
    return {
        "pairs": p.pairs,
        "total_ops_per_s": p.total_ops_per_s,
        "per_pair": p.per_pair,
        "settled": p.settled,
        "repeats": list(p.repeats),
        "spread_pct": p.spread_pct,
        "windows": list(p.windows),
    }


class NoiseFloor(BaseModel):
    """The smallest difference this box showed between two halves of one setting (A/A)."""

    model_config = ConfigDict(frozen=True, extra="allow", allow_inf_nan=False)

    pct: Rate
    seconds: Rate
    n: Count


class Sessions(BaseModel):
    """The box's session level, from `ipctop check --sessions` (analysis.sessions)."""

    model_config = ConfigDict(frozen=True, extra="allow", allow_inf_nan=False)

    sessions: Annotated[int, Field(ge=2)]
    runs_per_session: Annotated[int, Field(ge=2)]
    session_sd_pct: Annotated[float, Field(ge=0, le=1e6)]
    run_sd_pct: Annotated[float, Field(ge=0, le=1e6)]
    session_df: Annotated[float, Field(ge=0, le=1e6)]

    def term(self) -> tuple[float, float]:
        """(s.d. %, df) a comparison of two single sessions adds (analysis.sessions)."""
        return session_term(
            self.session_sd_pct, self.run_sd_pct, self.runs_per_session, self.sessions
        )


_Known = TypeVar("_Known", "StepThread", "StepUnit")  # what _known reads


class Record(BaseModel):
    """A sweep or session; built from objects or from their plain dicts."""

    model_config = ConfigDict(
        extra="ignore",  # a newer writer's extras do not break us
        allow_inf_nan=False,
        populate_by_name=True,
        json_schema_serialization_defaults_required=True,
        title="ipctop record",
    )

    schema_id: Literal[READS] = Field(default=SCHEMA, alias="schema")  # type: ignore[valid-type]
    kind: Literal[KINDS]  # type: ignore[valid-type]
    created: str = Field(default_factory=now_iso, description="ISO 8601 time")
    interrupted: bool = False
    box: Box
    config: RunConfig
    steps: list[Step] = Field(default_factory=list)
    points: list[ScalingPoint] = Field(default_factory=list)
    timeline: list[Sample] = Field(default_factory=list)
    events: list[str] = Field(default_factory=list)
    # Optional (written only when set): an `ipctop ab` run's two sides and result,
    # the box's A/A noise floor measured by `ipctop check`, the engines' warnings.
    ab: AbRecord | None = None
    noise: NoiseFloor | None = None
    # Version 3: how much sessions of this box differ beyond their runs (check --sessions).
    sessions: Sessions | None = None
    warnings: list[str] | None = Field(
        default=None,
        description="what the engines warned about during the run (no reaper, contention, "
        "a failed pair, an end that did not stop in time), once each; absent when none",
    )
    # Where it was read from; used for labels, never written.
    source: str | None = Field(default=None, exclude=True)

    @field_validator("created")
    @classmethod
    def _iso_time(cls, v: str) -> str:
        try:
            datetime.fromisoformat(v.replace("Z", "+00:00"))
        except ValueError:
            raise PydanticCustomError(
                "ipctop_iso_time", f"is not an ISO 8601 time ({v!r})"
            ) from None
        return v

    def __eq__(self, other: object) -> bool:
        # Where it was read from is not part of what it says.
        if not isinstance(other, Record):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]

    @property
    def name(self) -> str:
        return os.path.basename(self.source) if self.source else "record"

    def to_dict(self) -> dict[str, Any]:
        # Whatever it was read as, this writer's output is the current version. The
        # models' own serialisation writes what each says (the keys it was made or read
        # with: a box read as {} writes {}); the optional ones are absent when unset.
        said = self.model_dump(mode="json", include=set(_MODELS), exclude_unset=True)
        return {
            "schema": SCHEMA,
            "kind": self.kind,
            "created": self.created,
            "interrupted": self.interrupted,
            "box": said["box"],
            "config": said["config"],
            "steps": [s.to_dict() for s in self.steps],
            "points": [point_to_dict(p) for p in self.points],
            "timeline": [s.to_dict() for s in self.timeline],
            "events": list(self.events),
            **{k: said[k] for k in _MODELS[2:] if said.get(k) is not None},
            **({"warnings": list(self.warnings)} if self.warnings else {}),
        }

    @classmethod
    def from_dict(cls, d: Any, source: str | None = None) -> Record:
        """Validate and build; raises RecordError naming the first problem."""
        name = os.path.basename(source) if source else "record"
        found = d.get("schema") if isinstance(d, dict) else None
        if isinstance(found, str) and found not in READS and found.startswith(SCHEMA_PREFIX):
            raise RecordError(f"{name} is {found}; this ipctop reads {_reads()}")
        record, problems = _validate(d)
        if record is None:
            more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
            raise RecordError(f"{name}: {problems[0]}{more}")
        record.source = source
        return record


# A record's parts that are models of their own, in the order a file has them.
_MODELS = ("box", "config", "ab", "noise", "sessions")


def _reads() -> str:
    return f"{', '.join(READS[:-1])} and {READS[-1]}"


def _validate(d: Any) -> tuple[Record | None, list[str]]:
    if not isinstance(d, dict):
        return None, [f"top level should be an object, not {type(d).__name__}"]
    found = d.get("schema")
    if "schema" not in d:
        return None, ["schema is missing (not an ipctop record?)"]
    if found not in READS:
        # Another version's other keys may mean other things: stop here.
        return None, [f"schema is {found!r}; this ipctop reads {_reads()}"]
    problems = [f"{key} is missing" for key in FILE_KEYS if key not in d]
    steps = d.get("steps")
    for i, step in enumerate(steps if isinstance(steps, list) else []):
        if isinstance(step, dict):
            problems += latency_problems(step.get("latency"), f"steps[{i}].")
    timeline = d.get("timeline")
    if isinstance(timeline, list):
        d = {**d, "timeline": [lift_extra(s) if isinstance(s, dict) else s for s in timeline]}
    try:
        # Through JSON, strictly: what a reader of the file would see, and no
        # "3" quietly taken for 3. An object JSON cannot hold raises TypeError.
        record = Record.model_validate_json(json.dumps(d, allow_nan=True), strict=True)
    except ValidationError as e:
        errors = e.errors(include_url=False)
        # A profile that does not read is named better by record_checks' shape of it.
        plain = [phrase(err) for err in errors if err["type"] != "ipctop_profile"]
        found = list(dict.fromkeys(problems + plain + record_problems(d)))
        return None, found or [phrase(err) for err in errors]
    problems += record_problems(d)  # the ab object, profiles, and every number's bounds
    return (None if problems else record), problems


def validate_record_dict(d: Any) -> list[str]:
    """Every problem found in a decoded record, as short phrases; empty when it is valid."""
    return _validate(d)[1]


def record_points(record: Record) -> list[ScalingPoint]:
    """Scaling points: the recorded ones if any, else one per sweep step that has a
    rate (`unrated` names the others)."""
    skip = unrated(record)
    if record.points:
        return sorted((p for p in record.points if p.pairs not in skip), key=lambda p: p.pairs)
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
            if s.pairs not in skip
        ),
        key=lambda p: p.pairs,
    )


def unrated(record: Record) -> dict[int, str]:
    """pairs -> why, for every step with no rate: no point, skipped by every reader."""
    out: dict[int, str] = {}
    for s in record.steps:
        if s.no_rate is not None:
            out[s.pairs] = s.no_rate
        elif s.stalls is not None and not s.windows and s.total_ops_per_s == 0:
            # Written before no_rate was: every window stalled, and its point's 0.0
            # (the sweep made one then) is no measurement either.
            out[s.pairs] = (
                f"every window stalled, {s.stalls.left_out_s:g} s left out "
                "(an older record, before no_rate was written)"
            )
    return out


def unrated_lines(record: Record, only: Container[int] | None = None) -> list[str]:
    """What compare and report say of the steps they skip for having no rate (those
    at the pair counts `only` names, when given: compare's latency section)."""
    return [
        f"skipped: {record.name} at {n} pair(s): no rate ({why})"
        for n, why in sorted(unrated(record).items())
        if only is None or n in only
    ]
