"""Write the published JSON Schema of records: `python -m ipctop.output.records.record_schema`.

The schema is generated from the models in record.py; the copy kept in
ipctop/schema/ is what other tools read, and tests/records/test_record_schema.py
fails when the two drift apart.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ipctop.output.records.record import SCHEMA, Record

PUBLISHED = Path(__file__).resolve().parents[2] / "schema" / "record.schema.json"


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the files ipctop writes (what the models serialize to)."""
    schema = Record.model_json_schema(mode="serialization")
    # Written only when set (an ab run, a check's A/A floor, warnings): not required of every file.
    optional = ("ab", "noise", "sessions", "warnings")
    schema["required"] = [k for k in schema.get("required", []) if k not in optional]
    step = schema.get("$defs", {}).get("Step")
    # latency, profile, units: only when measured or a load; no_rate: only when it has none
    if step and "required" in step:
        step["required"] = [
            k
            for k in step["required"]
            if k not in ("latency", "profile", "stalls", "noise", "units", "no_rate")
        ]
    op = schema.get("$defs", {}).get("OpRate")
    if op and "required" in op:  # an operation's repeat count: only for msgbench's phases
        op["required"] = [k for k in op["required"] if k != "n"]
    sample = schema.get("$defs", {}).get("Sample")
    if sample and "required" in sample:  # a sample's stall marks: only when stalled
        sample["required"] = [
            k for k in sample["required"] if k not in ("stalled", "gap", "cpu_pressure_pct")
        ]
    thread = schema.get("$defs", {}).get("ThreadSample")
    if thread and "required" in thread:  # an end's op counts: only when the workload counts ops
        thread["required"] = [k for k in thread["required"] if k != "ops"]
    noise = schema.get("$defs", {}).get("StepNoise")
    if noise and "required" in noise:  # the clock: only where cpufreq has one
        noise["required"] = [k for k in noise["required"] if k != "mhz"]
    cpu = schema.get("$defs", {}).get("CpuSample")
    if cpu and "required" in cpu:  # steal and the clock: only where the box says them
        cpu["required"] = [k for k in cpu["required"] if k not in ("steal", "mhz")]
    schema["$id"] = f"https://ipctop.invalid/schema/{SCHEMA.replace('/', '-')}.json"
    schema["description"] = (
        "A sweep or live session recorded by ipctop. Version 1 records lack "
        "the windows keys and still read."
    )
    return schema


def schema_text() -> str:
    return json.dumps(json_schema(), indent=1, sort_keys=True) + "\n"


def main() -> int:
    PUBLISHED.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {PUBLISHED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
