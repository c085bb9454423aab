"""One registry of workloads, and one layout of the counter slot, shared by C and Python.

engine/workloads/__init__.py's class list is the registry: the CLI's choices
and help read it, and the native module's table must name the same workloads.
The slot's layout is native.h's struct end_slot; engine/counters.py reads it
at offsets that must be the C compiler's.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from ipctop.engine import counters
from ipctop.engine.objects import _native
from ipctop.engine.workloads import WORKLOADS

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
