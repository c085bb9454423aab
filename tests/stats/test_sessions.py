"""The session level (analysis.sessions): variance components computed by hand."""

from __future__ import annotations

import math
import random

import pytest

from ipctop.analysis.sessions import session_spread


def test_components_by_hand() -> None:
    # Session offsets -0.04, 0, +0.04; runs -0.01, 0, +0.01 within each (logs).
    groups = [[1000 * math.exp(s + e) for e in (-0.01, 0.0, 0.01)] for s in (-0.04, 0.0, 0.04)]
    sp = session_spread(groups)
    msw = (2 * 0.01**2) / 2  # each session's variance, pooled
    msb = 3 * (2 * 0.04**2) / 2
    assert sp.run_sd_pct == pytest.approx(100 * math.expm1(math.sqrt(msw)))
    assert sp.session_sd_pct == pytest.approx(100 * math.expm1(math.sqrt((msb - msw) / 3)))
    assert (sp.sessions, sp.runs_per_session) == (3, 3)
    assert "--session-sd 4.0" in sp.line()


def test_no_session_effect_is_estimated_near_zero() -> None:
    rng = random.Random(1)
    groups = [[1e6 * math.exp(rng.gauss(0, 0.02)) for _ in range(3)] for _ in range(40)]
    sp = session_spread(groups)
    assert sp.session_sd_pct < 1.0 < sp.run_sd_pct < 3.0


def test_refuses_ragged_or_too_few() -> None:
    with pytest.raises(ValueError):
        session_spread([[1.0, 2.0]])
    with pytest.raises(ValueError):
        session_spread([[1.0, 2.0], [1.0, 2.0, 3.0]])
