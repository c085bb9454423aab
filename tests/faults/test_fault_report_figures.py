"""Issue 27, finding 10: one check result with a non-finite or negative total.

report took the median of each group's figures; one `check --json` with NaN,
Infinity or a negative `total_ops_per_s` made the median nan, so every box of
the group read "+nan %" and "ok", exit 0. Such a result is now skipped, named
on its own line, and the other boxes are judged against a median of real
figures. Synthetic check results (tests/records/test_report.py's, in `check --json`'s
layout): four boxes of one kernel are what a group needs, and this box is one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from test_report import synthetic_check


@pytest.mark.parametrize("bad, says", [
    (float("nan"), "is NaN"), (float("inf"), "is infinite"), (-5.0, "is negative"),
], ids=["nan", "inf", "negative"])  # fmt: skip
def test_a_non_finite_or_negative_total_is_skipped_not_a_nan_median(
    tmp_path: Path, bad: float, says: str
) -> None:
    for i in range(4):
        d = synthetic_check(f"box{i}")
        if i == 0:
            d["runs"][0]["total_ops_per_s"] = bad
        (tmp_path / f"c{i}.json").write_text(json.dumps(d, allow_nan=True))
    r = run_cli("report", str(tmp_path))
    assert r.returncode == 0, r.stderr
    table = "\n".join(line for line in r.stdout.splitlines() if not line.startswith("#")).lower()
    assert "nan" not in table and "inf" not in table, r.stdout
    skipped = [line for line in r.stdout.splitlines() if "skipped" in line and "c0.json" in line]
    assert len(skipped) == 1 and "runs[0].total_ops_per_s" in skipped[0], r.stdout
    assert says in skipped[0], skipped
    assert all(f"box{i}" in r.stdout for i in (1, 2, 3)), r.stdout
