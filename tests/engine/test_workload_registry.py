"""One registry of workloads, and one layout of the counter slot, shared by C and Python.

engine/workloads/__init__.py's class list is the registry: the CLI's choices
and help read it, and the native module's table must name the same workloads.
The slot's layout is native.h's struct end_slot; engine/counters.py reads it
at offsets that must be the C compiler's.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest
from conftest import ROOT, run_cli, wait_for

from ipctop.engine import counters, latency
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine
from ipctop.engine.objects import _native
from ipctop.engine.workloads import (
    _CLASSES,
    OPTIONS,
    WORKLOADS,
    Workload,
    readme_table,
    record_payload,
    takers,
)

needs_native = pytest.mark.skipif(_native is None, reason="the native extension is not built")


@needs_native
def test_the_c_table_names_the_same_workloads_as_the_class_list() -> None:
    assert sorted(_native.workloads()) == sorted(WORKLOADS)


@needs_native
def test_the_counter_slot_offsets_are_the_c_compilers() -> None:
    assert _native.slot_layout() == counters.SLOT_OFFSETS


def test_the_slot_struct_formats_agree_with_the_offsets() -> None:
    # _LAYOUT reads rounds .. failed_op in one go; each field must start where
    # SLOT_OFFSETS says, and the stats block (cpu .. nivcsw) likewise.
    head = [
        "rounds",
        "errors",
        "tid",
        "state",
        "last_errno",
        "stop",
        "bad_value",
        "ops",
        "failed_op",
    ]
    fmt = counters._LAYOUT.format.lstrip("<")
    codes = list("QQiiiiq") + [f"{counters.NOPS}Q", "i"]
    assert "".join(codes) == fmt
    for name, i in zip(head, range(len(codes))):
        assert struct.calcsize("<" + "".join(codes[:i])) == counters.SLOT_OFFSETS[name], name
    stats = counters.SLOT_OFFSETS["cpu"]
    for name, prefix in (("stats_ns", "i"), ("nvcsw", "iQ"), ("nivcsw", "iQQ")):
        assert stats + struct.calcsize("<" + prefix) == counters.SLOT_OFFSETS[name], name
    assert counters.SLOT_OFFSETS["nivcsw"] + 8 <= counters.SLOT_SIZE


def test_setup_builds_every_c_file_of_the_native_directory() -> None:
    text = (ROOT / "setup.py").read_text()
    assert 'Path("ipctop/native").glob("*.c")' in text
    assert sorted(Path(ROOT, "ipctop/native").glob("loops_*.c")), "the loops are C files there"


def test_every_workload_is_in_the_help() -> None:
    r = run_cli("run", "--help")
    assert r.returncode == 0, r.stderr
    flat = " ".join(r.stdout.split()).replace("- ", "-")
    for name in WORKLOADS:
        assert name in flat, name


# --- A workload describes itself: every fact below is read from its class. ---

DECLARED = ("name", "original", "summary", "one_round", "timed", "options")


def _declares(cls: type[Workload], attr: str) -> bool:
    """Whether the class (or a workload class between it and Workload) sets attr."""
    return any(attr in vars(k) for k in cls.__mro__ if k is not Workload and k is not object)


@pytest.mark.parametrize("cls", _CLASSES, ids=lambda c: c.name)
def test_every_workload_declares_what_the_registry_reads(cls: type[Workload]) -> None:
    missing = [a for a in DECLARED if not _declares(cls, a)]
    assert not missing, f"{cls.__name__} does not declare {missing}"
    assert cls.name and cls.original and cls.summary and cls.one_round
    assert isinstance(cls.timed, bool)
    # The sampler reads as many op counters as the workload names, of the slot's NOPS.
    assert len(cls.ops) <= counters.NOPS, cls.ops
    for o in cls.options:
        assert o.flag.startswith("--") and o.help, o
        assert o.default is not None or o.default_text, f"{o.flag}: no default said"
        assert o.default is None or o.low <= o.default <= o.high, o


def test_every_option_is_a_config_field_with_its_one_default() -> None:
    fields = RunConfig.model_fields
    for name, o in OPTIONS.items():
        assert name in fields, name
        assert fields[name].default == o.default, name
        assert getattr(RunConfig(), name) == o.default


def test_every_option_is_on_the_command_line_with_its_default_and_help() -> None:
    r = run_cli("run", "--help")
    assert r.returncode == 0, r.stderr
    flat = " ".join(r.stdout.split())
    for o in OPTIONS.values():
        assert o.flag in flat, o.flag
        assert " ".join(o.help_for(takers(o)).split()) in flat, o.flag


def test_the_readme_table_is_the_classes() -> None:
    text = (ROOT / "README.md").read_text()
    assert readme_table() in text, "regenerate: python -c 'from ipctop.engine.workloads "
    "import readme_table; print(readme_table())'"


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_every_record_payload_carries_its_options_and_payload(name: str) -> None:
    cls = WORKLOADS[name]
    got = record_payload(RunConfig(name, cpus=(0,)))
    assert json.loads(json.dumps(got)) == got
    for o in cls.options:
        assert o.field in got, o.field
    assert ("size" in got) == (cls.default_size is not None)
    if cls.default_size is not None:
        assert got["size"] == cls.default_size


@needs_native
@pytest.mark.parametrize("name", list(WORKLOADS))
def test_timed_says_whether_the_native_loop_times_rounds(name: str) -> None:
    """Real ends for a moment: a timed workload's histograms fill, another's stay empty."""
    if name == "spin" and len(os.sched_getaffinity(0)) < 2:
        pytest.skip("spin needs cross placement: 2 allowed CPUs")
    cpus = tuple(sorted(os.sched_getaffinity(0))[:2])
    placement = "cross" if name == "spin" else "same"
    extra = {"queues": 64} if name == "sysv-lifecycle" else {}
    config = RunConfig(name, placement, cpus=cpus, engine="native", latency_every=1, **extra)
    with Engine(config) as engine:
        engine.start(1)
        tracker = latency.Tracker(engine.counters.latency)
        # The unit's rounds: a hackbench sender or a chat client sender counts none.
        slots = [e.slot for e in engine.pairs[0].ends]

        def rounds() -> int:
            return sum(engine.counters.rounds(s) for s in slots)

        tracker.read(engine.pairs)
        since = rounds()
        assert wait_for(lambda: rounds() > since + 50)
        got = tracker.read(engine.pairs)
        assert engine.timing == WORKLOADS[name].timed
        timed_rounds = sum(p.rtt.n for p in got)
        assert (timed_rounds > 0) == WORKLOADS[name].timed, (name, timed_rounds)
