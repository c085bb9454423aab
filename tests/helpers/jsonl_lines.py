"""`run --jsonl`'s stdout: one JSON sample per line, then one {"summary": ...} line."""

from __future__ import annotations

import json
from typing import Any


def split_jsonl(text: str) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The samples in order, and the summary (None when the run never got to print it)."""
    samples: list[dict[str, Any]] = []
    summary = None
    for line in text.splitlines():
        d = json.loads(line)
        assert isinstance(d, dict), line
        if "summary" in d:
            assert summary is None, "two summary lines"
            summary = d["summary"]
        elif "profile" not in d:
            assert summary is None, f"a sample after the summary: {line}"
            samples.append(d)
    return samples, summary
