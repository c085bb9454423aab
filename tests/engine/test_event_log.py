"""Engine.events: a consumer's cursor still finds what is new once the log is full."""

from __future__ import annotations

from ipctop.engine.event_log import EventLog


def test_since_counts_past_the_kept_warnings() -> None:
    log = EventLog(keep=3)
    seen = 0
    log.extend(["a", "b"])
    new, seen = log.since(seen)
    assert new == ["a", "b"]
    log.extend(["c", "d", "e", "f"])  # past full: a length no longer says what is new
    new, seen = log.since(seen)
    assert new == ["d", "e", "f"]  # c was dropped before anyone read it
    assert log.since(seen) == ([], 6)
    log.append("g")
    assert log.since(seen) == (["g"], 7)
    assert list(log) == ["e", "f", "g"] and len(log) == 3 and log
