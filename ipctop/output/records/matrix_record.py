"""The matrix's JSON record ("ipctop.matrix/1"), and reading it back for compare."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...engine.matrix_runs import Cell, ClassRow, class_rows
from ...errors import RecordError
from .record import now_iso
from .record_io import atomic_write_text

SCHEMA = "ipctop.matrix/1"


@dataclass
class MatrixRecord:
    box: dict[str, Any]
    config: dict[str, Any]
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
            "box": self.box,
            "config": self.config,
            "cells": [c.to_dict() for c in self.cells],
            "classes": [r.to_dict() for r in self.classes],
        }


def write_matrix(path: str | os.PathLike[str], rec: MatrixRecord) -> Path:
    return atomic_write_text(path, json.dumps(rec.to_dict(), indent=1, allow_nan=False) + "\n")


def is_matrix(d: Any) -> bool:
    return isinstance(d, dict) and str(d.get("schema", "")).startswith("ipctop.matrix/")


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
    box: dict[str, Any] = d["box"] if isinstance(d.get("box"), dict) else {}
    config: dict[str, Any] = d["config"] if isinstance(d.get("config"), dict) else {}
    return MatrixRecord(box, config, built, str(d.get("created", "")), source)
