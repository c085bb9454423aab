"""The matrix's JSON record ("ipctop.matrix/1"), and reading it back for compare."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import ErrorDetails

from ...engine.matrix_runs import Cell, ClassRow, class_rows
from ...errors import RecordError
from .record import now_iso
from .record_box import Box
from .record_io import atomic_write_text
from .record_problems import phrase

SCHEMA = "ipctop.matrix/1"


class MatrixConfig(BaseModel):
    """How `ipctop matrix` ran (commands/matrix.py). Every key is optional: a
    hand-made record says less; keys a newer ipctop adds are kept as they are, and
    a record writes only the keys it was made or read with."""

    model_config = ConfigDict(frozen=True, extra="allow", allow_inf_nan=False)

    workloads: tuple[str, ...] = ()
    mode: str | None = None
    cpus: tuple[int, ...] = ()
    seconds: float | None = None  # per cell
    warmup: float | None = None  # per cell
    sample: int | None = None  # cells per class; None: every ordered pair
    baseline: str | None = None  # the spin flag's workload, None with --no-baseline
    rt: int | None = None  # the ends' SCHED_FIFO priority
    unknown: tuple[str, ...] = ()  # what sysfs did not say (cpuclass.Classes.unknown)


@dataclass
class MatrixRecord:
    box: Box
    config: MatrixConfig
    cells: list[Cell]
    created: str = field(default_factory=now_iso)
    source: str | None = None

    @property
    def name(self) -> str:
        return os.path.basename(self.source) if self.source else "matrix"

    @property
    def classes(self) -> list[ClassRow]:
        return class_rows(self.cells)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "created": self.created,
            "box": self.box.model_dump(mode="json", exclude_unset=True),
            "config": self.config.model_dump(mode="json", exclude_unset=True),
            "cells": [c.to_dict() for c in self.cells],
            "classes": [r.to_dict() for r in self.classes],
        }


def write_matrix(path: str | os.PathLike[str], rec: MatrixRecord) -> Path:
    return atomic_write_text(path, json.dumps(rec.to_dict(), indent=1, allow_nan=False) + "\n")


def is_matrix(d: Any) -> bool:
    return isinstance(d, dict) and str(d.get("schema", "")).startswith("ipctop.matrix/")


_Part = TypeVar("_Part", Box, MatrixConfig)


def _part(model: type[_Part], d: dict[str, Any], key: str, name: str) -> _Part:
    """The record's box or config; one the file lacks (or holds as no object) says nothing."""
    raw = d.get(key)
    if not isinstance(raw, dict):
        return model()
    try:
        # Through JSON, strictly, as a sweep record's parts are read: no "3" taken for 3.
        return model.model_validate_json(json.dumps(raw, allow_nan=True), strict=True)
    except ValidationError as e:
        first: ErrorDetails = e.errors(include_url=False)[0]
        raise RecordError(f"{name}: {phrase({**first, 'loc': (key, *first['loc'])})}") from None


def matrix_from_dict(d: dict[str, Any], source: str) -> MatrixRecord:
    """Validate and build; one RecordError line naming the problem otherwise."""
    name = os.path.basename(source)
    if not isinstance(d, dict):
        raise RecordError(f"{name} is not a matrix record (top level is not an object)")
    if d.get("schema") != SCHEMA:
        raise RecordError(f"{name} is {d.get('schema')!r}; this ipctop reads {SCHEMA}")
    cells = d.get("cells")
    if not isinstance(cells, list) or not cells:
        raise RecordError(f"{name}: cells should be a non-empty list")
    try:
        built = [Cell.from_dict(c) for c in cells]
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise RecordError(f"{name}: malformed matrix cell ({type(e).__name__}: {e})") from None
    box, config = _part(Box, d, "box", name), _part(MatrixConfig, d, "config", name)
    return MatrixRecord(box, config, built, str(d.get("created", "")), source)
