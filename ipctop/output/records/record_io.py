"""Records on disk: atomic writes, and reads that fail with one line, never a traceback."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from ipctop.errors import RecordError
from ipctop.output.records.bounded_read import json_depth_problem, read_bounded_text
from ipctop.output.records.record import Record, validate_record_dict
from ipctop.output.records.record_text import escape_controls


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
    problems = validate_record_dict(d)
    if problems:
        raise RecordError(f"refusing to write {os.fspath(path)}: {problems[0]}")
    text = json.dumps(d, indent=1, allow_nan=False) + "\n"
    return atomic_write_text(path, text)


def read_record(path: str | os.PathLike[str]) -> Record:
    """Read and validate a record; every failure is a RecordError with one line."""
    shown = os.fspath(path)
    name = os.path.basename(shown) or shown
    text = read_bounded_text(path)
    try:
        d = escape_controls(json.loads(text), text)  # no ESC from a record reaches a terminal
    except json.JSONDecodeError as e:
        raise RecordError(
            f"{name} is truncated or not JSON (line {e.lineno}, column {e.colno})"
        ) from None
    except RecursionError:
        raise RecordError(f"{name} is not a record (nested too deeply)") from None
    too_deep = json_depth_problem(d)
    if too_deep:
        raise RecordError(f"{name} is not a record ({too_deep})")
    return Record.from_dict(d, source=shown)
