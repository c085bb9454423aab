"""The latency matrix: topology classes from (fake) sysfs trees, sampling, a real run."""

from __future__ import annotations

import json
import os

import pytest
from conftest import run_cli, two_cpus

from ipctop.box import read_box
from ipctop.cpuclass import CLASSES, LLC, NODE, REMOTE, SAME_CPU, SMT, ordered_pairs, read_classes
from ipctop.engine.latency import LatencySummary
from ipctop.engine.matrix_runs import Cell, class_rows
from ipctop.engine.objects import _native
from ipctop.errors import RecordError
from ipctop.output.records.matrix_record import (
    MatrixConfig,
    MatrixRecord,
    matrix_from_dict,
    write_matrix,
)
from ipctop.output.records.record_box import Box
from ipctop.plain import to_plain

native = pytest.mark.skipif(_native is None, reason="the native extension is not built")


def _w(path, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + "\n")


def fake_sysfs_2node_smt(root) -> tuple[str, str]:
    """A FAKE 16-CPU box: SMT pairs (2k, 2k+1), an L3 per 4 CPUs, 8 CPUs per NUMA node."""
    cpu, node = str(root / "cpu"), str(root / "node")
    for c in range(16):
        d = os.path.join(cpu, f"cpu{c}")
        first = c - c % 2
        _w(os.path.join(d, "topology", "thread_siblings_list"), f"{first}-{first + 1}")
        caches = [
            (1, "Data", str(c)),
            (1, "Instruction", str(c)),
            (2, "Unified", f"{first}-{first + 1}"),
        ]
        l3 = c - c % 4
        caches.append((3, "Unified", f"{l3}-{l3 + 3}"))
        for i, (level, kind, shared) in enumerate(caches):
            idx = os.path.join(d, "cache", f"index{i}")
            _w(os.path.join(idx, "level"), str(level))
            _w(os.path.join(idx, "type"), kind)
            _w(os.path.join(idx, "shared_cpu_list"), shared)
    _w(os.path.join(node, "node0", "cpulist"), "0-7")
    _w(os.path.join(node, "node1", "cpulist"), "8-15")
    return cpu, node


def test_fake_two_node_smt_box_yields_every_class(tmp_path):
    cpu, node = fake_sysfs_2node_smt(tmp_path)
    classes = read_classes(list(range(16)), cpu, node)
    assert classes.unknown == ()
    assert classes.classify(0, 0) == SAME_CPU
    assert classes.classify(0, 1) == classes.classify(1, 0) == SMT
    assert classes.classify(0, 2) == classes.classify(3, 1) == LLC
    assert classes.classify(0, 4) == classes.classify(7, 2) == NODE
    assert classes.classify(0, 8) == classes.classify(15, 3) == REMOTE


def test_fake_container_without_caches_or_nodes_says_what_it_could_not_tell(tmp_path):
    cpu = tmp_path / "cpu"
    for c in range(4):
        _w(str(cpu / f"cpu{c}" / "topology" / "thread_siblings_list"), str(c))
    classes = read_classes([0, 1, 2, 3], str(cpu), str(tmp_path / "no-node"))
    assert set(classes.unknown) == {LLC, "NUMA nodes"}
    # Without cache or node facts, two CPUs are "same node": nothing finer is claimed.
    assert classes.classify(0, 1) == NODE


def test_this_box_classes_are_read_from_its_sysfs():
    cpus = sorted(os.sched_getaffinity(0))
    classes = read_classes(cpus)
    assert classes.classify(cpus[0], cpus[0]) == SAME_CPU
    for a in cpus:
        for b in cpus:
            assert classes.classify(a, b) in CLASSES


def test_fake_box_sample_takes_at_most_k_cells_of_each_class_and_the_same_ones_twice(tmp_path):
    cpu, node = fake_sysfs_2node_smt(tmp_path)
    cpus = list(range(16))
    classes = read_classes(cpus, cpu, node)
    sample = ordered_pairs(cpus, classes, per_class=3)
    by = {}
    for a, b in sample:
        by.setdefault(classes.classify(a, b), []).append((a, b))
    assert {k: len(v) for k, v in by.items()} == {c: 3 for c in CLASSES}
    assert ordered_pairs(cpus, classes, per_class=3) == sample
    assert len(ordered_pairs(cpus, classes, per_class=None)) == 256


def _planted(workload: str, src: int, dst: int, cls: str, p50: float, n: int = 1000) -> Cell:
    s = LatencySummary(n, p50, p50, 2 * p50, 3 * p50, 4 * p50)
    return Cell(workload, src, dst, cls, s, s, s, 1.0)


def test_planted_cells_give_each_class_its_kernel_share():
    cells = [
        _planted("sysv-sem", 0, 0, SAME_CPU, 3000),
        _planted("sysv-sem", 0, 1, LLC, 12000),
        _planted("sysv-sem", 1, 0, LLC, 14000),
        _planted("spin", 0, 1, LLC, 400),
        _planted("spin", 1, 0, LLC, 600),
        _planted("sysv-sem", 0, 8, REMOTE, 30000),
        _planted("spin", 0, 8, REMOTE, 9, n=5),  # starved: too few to stand for its class
    ]
    rows = {(r.workload, r.cls): r for r in class_rows(cells)}
    llc = rows[("sysv-sem", LLC)]
    assert (llc.cells, llc.p50, llc.base_p50, llc.kernel_p50) == (2, 13000, 500, 12500)
    assert llc.kernel_p99 == 26000 - 1000
    same = rows[("sysv-sem", SAME_CPU)]
    assert same.base_p50 is None and same.kernel_p50 is None
    remote = rows[("sysv-sem", REMOTE)]
    assert remote.base_p50 is None  # the only spin cell there was starved
    assert rows[("spin", REMOTE)].few == 1


@native
@two_cpus
@pytest.mark.slow  # the quick loop's slowest (3-19 s); CI runs it
def test_real_matrix_on_this_box_writes_a_record_compare_reads(tmp_path):
    out = tmp_path / "m.json"
    r = run_cli("matrix", "-w", "sysv-sem", "--cpus", "0-1", "--seconds", "0.3",
                "--warmup", "0.05", "--json", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "one-way p50, from (rows) to (columns)" in r.stdout
    d = json.loads(out.read_text())
    assert d["schema"] == "ipctop.matrix/1"
    sem = [c for c in d["cells"] if c["workload"] == "sysv-sem"]
    assert sorted((c["from"], c["to"]) for c in sem) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    for c in sem:
        assert c["oneway"]["n"] > 0 and 0 < c["oneway"]["p50"] < c["rtt"]["p50"]
    assert {c["class"] for c in sem if c["from"] == c["to"]} == {SAME_CPU}
    # The box and the run as the typed models wrote them: every fact, every option.
    assert d["box"] == json.loads(json.dumps(to_plain(read_box())))
    assert d["config"]["workloads"] == ["sysv-sem"] and d["config"]["cpus"] == [0, 1]
    assert (d["config"]["seconds"], d["config"]["baseline"], d["config"]["rt"]) == (
        0.3,
        "spin",
        None,
    )
    spin = [c for c in d["cells"] if c["workload"] == "spin"]
    assert sorted((c["from"], c["to"]) for c in spin) == [(0, 1), (1, 0)]
    r = run_cli("compare", str(out), str(out))
    assert r.returncode == 0, r.stderr
    assert "by topology class" in r.stdout and "sysv-sem" in r.stdout


def test_matrix_refuses_the_python_engine_and_untimed_workloads():
    r = run_cli("matrix", "--engine", "python", "--seconds", "0.1")
    assert r.returncode == 2 and "native engine" in r.stderr
    r = run_cli("matrix", "-w", "sysv-sem-multi", "--seconds", "0.1")
    assert r.returncode == 2 and "no two-end token" in r.stderr


def test_compare_refuses_a_matrix_beside_a_sweep_record(tmp_path):
    m = tmp_path / "m.json"
    s = LatencySummary(10, 1.0, 1.0, 1.0, 1.0, 1.0).to_dict()
    cell = {"workload": "sysv-sem", "from": 0, "to": 0, "class": SAME_CPU, "oneway": s}
    m.write_text(json.dumps({"schema": "ipctop.matrix/1", "cells": [cell]}))
    from test_latency_cli import _record

    _record(tmp_path / "r.json")
    r = run_cli("compare", str(m), str(tmp_path / "r.json"))
    assert r.returncode == 2 and "only with matrix records" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "ipctop.matrix/1", "cells": [{"workload": 1}]}))
    r = run_cli("compare", str(bad), str(m))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "malformed matrix cell" in r.stderr


def _cells() -> list[Cell]:
    return [_planted("sysv-sem", a, b, SAME_CPU if a == b else LLC, 5000) for a in (0, 1)
            for b in (0, 1)]  # fmt: skip


def test_a_matrix_records_box_and_config_are_typed_and_write_what_they_read(tmp_path):
    config = MatrixConfig(workloads=("sysv-sem",), mode="threads", cpus=(0, 1), seconds=0.5,
                          warmup=0.1, sample=None, baseline="spin", rt=None, unknown=())  # fmt: skip
    path = tmp_path / "m.json"
    write_matrix(path, MatrixRecord(Box.of(read_box()), config, _cells()))
    back = matrix_from_dict(json.loads(path.read_text()), str(path))
    assert isinstance(back.box, Box) and back.box.kernel_release == os.uname().release
    assert back.config == config and back.config.cpus == (0, 1)
    assert back.to_dict()["box"] == json.loads(json.dumps(to_plain(read_box())))
    # A hand-made or newer record: the keys it has, no more, and a newer one's kept.
    d = json.loads(path.read_text())
    d["box"] = {"kernel_release": "6.1.0", "a newer fact": 1}
    d["config"] = {"mode": "threads", "a newer option": [1, 2]}
    again = matrix_from_dict(d, "old.json")
    assert again.box.kernel_release == "6.1.0" and again.config.workloads == ()
    assert again.to_dict()["box"] == d["box"] and again.to_dict()["config"] == d["config"]
    # Without them (the oldest hand-made ones): nothing said, still read.
    bare = matrix_from_dict({k: v for k, v in d.items() if k not in ("box", "config")}, "b.json")
    assert bare.to_dict()["box"] == {} and bare.to_dict()["config"] == {}


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("box", {"online": "0-1"}, "m.json: box.online should be a list, not string"),
        ("box", {"sysv_ipc": "yes"}, "m.json: box.sysv_ipc should be true or false, not string"),
        ("config", {"seconds": "1"}, "m.json: config.seconds should be a number, not string"),
        ("config", {"cpus": [0, "1"]}, "m.json: config.cpus[1] should be an integer, not string"),
    ],
)
def test_a_hand_edited_matrix_box_or_config_is_one_line(tmp_path, key, value, words):
    d = json.loads(json.dumps(MatrixRecord(Box(), MatrixConfig(), _cells()).to_dict()))
    d[key] = value
    with pytest.raises(RecordError) as e:
        matrix_from_dict(d, str(tmp_path / "m.json"))
    assert str(e.value) == words
    path = tmp_path / "m.json"
    path.write_text(json.dumps(d))
    r = run_cli("compare", str(path), str(path))
    assert r.returncode == 2 and r.stderr.strip() == f"ipctop: {words}", r.stderr
