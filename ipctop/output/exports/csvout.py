"""CSV export: one row per sweep step and thread, for spreadsheets and pandas."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from ipctop.output.records.record import Record, unrated
from ipctop.output.records.record_io import atomic_write_text

COLUMNS = (
    "workload",
    "placement",
    "mode",
    "engine",
    "pairs",
    "pair",
    "role",
    "cpu",
    "ops_per_s",
    "total_ops_per_s",
)


def csv_text(record: Record) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    cfg = [getattr(record.config, k, "") for k in ("workload", "placement", "mode", "engine")]
    none = unrated(record)
    for step in record.steps:
        # A step with no rate writes empty rates (NaN to a reader), never a 0.
        rated = step.pairs not in none
        total = repr(float(step.total_ops_per_s)) if rated else ""
        if not step.threads:
            # Keep the step's total even when no per-thread figures were kept.
            w.writerow([*cfg, step.pairs, "", "", "", "", total])
            continue
        for t in sorted(step.threads, key=lambda t: (t.pair, t.role)):
            w.writerow(
                [
                    *cfg,
                    step.pairs,
                    t.pair,
                    t.role,
                    "" if t.cpu is None else t.cpu,
                    repr(float(t.ops_per_s)) if rated else "",
                    total,
                ]
            )
    return buf.getvalue()


def write_csv(path: str | os.PathLike[str], record: Record) -> Path:
    return atomic_write_text(path, csv_text(record))
