"""What the typed record models leave free, checked when a record is read.

record.py types the parts every reader uses; a profile's symbols and a
`check --json` result are free objects there, and a hand-edited one used
to reach compare or report as a list where an object belongs, "12" where a
list of rates belongs, or NaN, Infinity, 1e308 or 1e-300 where a measurement
belongs (a ratio of 1e308 to 1e-300 overflows). Here those parts get shapes
(pydantic models, strict: no "3" taken for 3), and every number outside the
box facts is finite and bounded, so what passes can be computed with.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ipctop.output.records.record_problems import phrase

# A measurement (ops/s, or ns of latency) is 0 or within these: a million times
# any box's rate and 1000 s of latency above, a millionth of an op per second
# below. Between them any ratio and its logarithm stay finite.
FIGURE_MAX = 1e12
FIGURE_MIN = 1e-6
# Any other number in a record (counts, seconds, percents, p-values), box facts aside:
# kernel limits there (shmmax) are legitimately near 2**64.
NUMBER_MAX = 1e15
# Keys whose numbers, at any depth below them, are measurements.
FIGURE_KEYS = frozenset(
    {"windows", "repeats", "total_ops_per_s", "ops_per_s", "per_pair", "window_totals", "blocks"}
)
# Keys whose numbers are not measurements even below a FIGURE_KEYS key (a profile's
# windows carry clock times and sample counts).
NOT_FIGURES = frozenset({"t0", "t1", "samples", "cpu_samples", "cost_pct", "owners"})
MAX_PROBLEMS = 20
# Characters in any string a record holds. Every string ipctop writes (a CPU model, a
# kernel version, an option, a warning) is far shorter; a longer one is a hand-made
# record's, and printed whole it would flood compare and slow the monitor. A profile's symbols
# (C++ names demangled by perf) may be longer, to their own bound.
STRING_MAX = 4096
SYMBOL_MAX = 65536


class _Shape(BaseModel):
    # Keys a newer writer adds are kept; NaN is left to number_problems' clearer phrase.
    model_config = ConfigDict(extra="allow", strict=True)


class SymbolShape(_Shape):
    name: str
    dso: str = ""
    self_: int = Field(0, alias="self", ge=0)
    total: int = Field(0, ge=0)
    self_pct: float = 0.0
    total_pct: float = 0.0
    windows_self_pct: list[float] = []
    windows_total_pct: list[float] = []


class ProfileShape(_Shape):
    """A recorded profile as engine.profile.window.Profile.from_dict reads it."""

    event: str = "?"
    perf_version: str | None = None
    frequency: int = Field(0, ge=0)
    cpus: list[int] = []
    notes: list[str] = []
    na: str | None = None
    symbols: list[SymbolShape] = []
    samples: int = Field(0, ge=0)
    cost_pct: float | None = None
    windows: list[dict[str, Any]] = []


class CheckThread(_Shape):
    pair: int = Field(ge=0)
    rounds: int | float = Field(ge=0)


class CheckRun(_Shape):
    workload: str
    placement: str
    pairs: int = Field(ge=1)
    total_ops_per_s: float = Field(ge=0)
    threads: list[CheckThread] = []
    window_totals: list[float] = []
    error: str | None = None


class CheckResult(_Shape):
    """A `check --json` result (ipctop.check/1), as `ipctop report` reads it."""

    engine: str = "?"
    cpus: list[int] = []
    box: dict[str, Any]
    runs: list[CheckRun]


def _number_problem(x: float, figure: bool) -> str | None:
    if math.isnan(x):
        return "is NaN"
    if math.isinf(x):
        return "is infinite"
    if figure:
        if x < 0:
            return f"is negative ({x!r})"
        if x > FIGURE_MAX or 0 < x < FIGURE_MIN:
            return f"is {x!r}, not a measurement (0 or {FIGURE_MIN:g} to {FIGURE_MAX:g})"
    elif abs(x) > NUMBER_MAX:
        return f"is {x!r}, beyond any figure ipctop writes (±{NUMBER_MAX:g})"
    return None


def number_problems(value: Any, at: str = "", figure: bool = False) -> list[str]:
    """Every NaN, infinite or out-of-bounds number at or below value, as "where what"."""
    out: list[str] = []
    stack = [(value, at, figure)]
    while stack and len(out) < MAX_PROBLEMS:
        v, where, fig = stack.pop()
        if isinstance(v, bool) or v is None or isinstance(v, str):
            continue
        if isinstance(v, (int, float)):
            try:
                problem = _number_problem(float(v), fig)
            except OverflowError:  # an integer literal too long for any float
                problem = "is beyond any figure ipctop writes"
            if problem:
                out.append(f"{where or 'top level'} {problem}")
        elif isinstance(v, dict):
            for k, x in reversed(list(v.items())):
                inner = (fig or k in FIGURE_KEYS) and k not in NOT_FIGURES
                stack.append((x, f"{where}.{k}" if where else str(k), inner))
        elif isinstance(v, list):
            for i, x in reversed(list(enumerate(v))):
                stack.append((x, f"{where}[{i}]", fig))
    return out


def string_problems(value: Any, at: str = "") -> list[str]:
    """Every string at or below value longer than a record's strings may be."""
    out: list[str] = []
    stack = [(value, at, STRING_MAX)]
    while stack and len(out) < MAX_PROBLEMS:
        v, where, most = stack.pop()
        if isinstance(v, str):
            if len(v) > most:
                out.append(
                    f"{where or 'top level'} is {len(v):,} characters long (at most {most:,})"
                )
        elif isinstance(v, dict):
            for k, x in reversed(list(v.items())):
                inner = SYMBOL_MAX if k in ("profile", "symbols") else most
                stack.append((x, f"{where}.{k}" if where else str(k), inner))
        elif isinstance(v, list):
            for i, x in reversed(list(enumerate(v))):
                stack.append((x, f"{where}[{i}]", most))
    return out


def _shape_problems(model: type[BaseModel], value: Any, at: str) -> list[str]:
    try:
        model.model_validate(value)
    except ValidationError as e:
        return [phrase({**err, "loc": (at, *err["loc"])}) for err in e.errors(include_url=False)]
    return []


def record_problems(d: dict[str, Any]) -> list[str]:
    """What is wrong with a decoded ipctop.record's free parts and numbers."""
    out = string_problems(d) + number_problems({k: v for k, v in d.items() if k != "box"})
    steps = d.get("steps")
    for i, step in enumerate(steps if isinstance(steps, list) else []):
        if isinstance(step, dict) and step.get("profile") is not None:
            out += _shape_problems(ProfileShape, step["profile"], f"steps[{i}].profile")
    # The ab object's shape is record_ab.AbRecord's, checked with the record; here
    # what that leaves free: an ab record without one, and its profiles' shapes.
    ab = d.get("ab")
    if ab is None and d.get("kind") == "ab":
        out.append("ab should be an object, not null")
    profiles = ab.get("profile") if isinstance(ab, dict) else None
    if isinstance(profiles, dict):
        for side in ("A", "B"):
            if isinstance(profiles.get(side), dict):
                out += _shape_problems(ProfileShape, profiles[side], f"ab.profile.{side}")
    return out


def check_result_problems(d: dict[str, Any]) -> list[str]:
    """What is wrong with a decoded `check --json` result."""
    out = string_problems(d, "result") + _shape_problems(CheckResult, d, "result")
    runs = d.get("runs")
    if isinstance(runs, list):
        out += number_problems(runs, "runs")
    return [p.removeprefix("result.") for p in out]
