"""The collector's pacing: raised once a sampler exists, never lowered, never turned on."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from ipctop.engine import collector


@pytest.fixture
def thresholds() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_pace_raises_the_young_threshold_and_keeps_the_others(thresholds: None) -> None:
    gc.set_threshold(700, 11, 12)
    collector.pace()
    assert gc.get_threshold() == (collector.YOUNG, 11, 12)


def test_pace_never_lowers_it_nor_turns_collection_back_on(thresholds: None) -> None:
    gc.set_threshold(collector.YOUNG * 2, 10, 10)
    collector.pace()
    assert gc.get_threshold()[0] == collector.YOUNG * 2
    gc.set_threshold(0, 10, 10)
    collector.pace()
    assert gc.get_threshold()[0] == 0
