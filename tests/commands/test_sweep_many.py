"""`ipctop sweep` over a comma-separated list of mechanisms: one side-by-side table."""

from __future__ import annotations

import pytest
from conftest import run_cli

from ipctop.engine.engine import resolve_engine

# Long enough that a loaded box still gives every end some rounds in the window.
QUICK = ("--seconds", "0.5", "--warmup", "0", "--repeat", "1")
native = pytest.mark.skipif(resolve_engine() != "native", reason="needs the native engine")


def side_by_side(stdout: str) -> list[list[str]]:
    lines = stdout.split("side by side\n", 1)[1].strip().splitlines()
    return [line.split() for line in lines]


@native
def test_four_mechanisms_side_by_side() -> None:
    names = ["sysv-sem", "posix-sem", "futex", "pipe"]
    r = run_cli("sweep", "--workload", ",".join(names), "--cpus", "0", *QUICK)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    for n in names:
        assert f"{n} summary" in r.stdout
    table = side_by_side(r.stdout)
    header = " ".join(table[0])
    for n in names:
        assert f"{n} ops/s" in header and f"{n} scal %" in header
    row = table[1]
    assert row[0] == "1"
    ops = [int(cell.replace(",", "")) for cell in row[1 : 1 + len(names)]]
    assert all(v > 0 for v in ops), row
    assert row[1 + len(names) : 1 + 2 * len(names)] == ["100.0"] * len(names)  # scal. at 1 pair
    for n in names:
        assert f"{n} ±95% [%]" in header  # the summaries' intervals, not dropped
    assert all(c == "-" or c.startswith("±") for c in row[1 + 2 * len(names) :]), row
    assert len(row) == 1 + 3 * len(names), row
    # Each step's headline is the figure its summary row gives, and says so.
    for n in names:
        step = next(ln for ln in r.stdout.splitlines() if ln.startswith(f"{n} · 1 pair(s) · "))
        figure = step.split(" · ")[2].split(" ops/s")[0]
        summary = r.stdout.split(f"{n} summary", 1)[1].splitlines()
        one = next(ln.split() for ln in summary if ln.split()[:1] == ["1"])
        assert one[1] == figure, (step, one)
        assert "as in the summary" in step


@native
def test_units_of_other_sizes_sweep_too() -> None:
    r = run_cli(
        "sweep",
        "--workload",
        "sysv-sem-multi,sysv-lifecycle,spin-yield",
        "--queues",
        "64",
        "--threads",
        "2",
        "--sems",
        "16",
        "--cpus",
        "0",
        *QUICK,
    )
    assert r.returncode == 0, r.stderr
    row = side_by_side(r.stdout)[1]
    assert all(int(c.replace(",", "")) > 0 for c in row[1:4]), row


def test_python_engine_sweep_of_what_it_can_run() -> None:
    r = run_cli(
        "sweep", "--workload", "pipe,socket,eventfd", "--engine", "python", "--cpus", "0", *QUICK
    )
    assert r.returncode == 0, r.stderr
    assert "side by side" in r.stdout


@pytest.mark.parametrize(
    "args, words",
    [
        (("--workload", "sysv-sem,spin", "--placement", "same"), "spin with --placement same"),
        (("--workload", "pipe,futex", "--engine", "python"), "futex is unavailable"),
        (("--workload", "pipe,nope"), "unknown workload 'nope'"),
    ],
)
def test_one_bad_mechanism_refuses_the_whole_sweep_in_one_line(args: tuple, words: str) -> None:
    r = run_cli("sweep", *args, *QUICK)
    assert r.returncode == 2
    # A note about other sessions' leftovers may precede it; the refusal is one line.
    lines = [ln for ln in r.stderr.strip().splitlines() if not ln.startswith("ipctop: note:")]
    assert len(lines) == 1, r.stderr
    assert words in lines[0]
    assert "summary" not in r.stdout  # refused before anything ran


@native
@pytest.mark.parametrize("workloads", ["posix-mq", "sysv-msg,posix-mq"])
def test_posix_mq_sweeps_alone_and_beside_others(workloads: str, tmp_path) -> None:
    # Issue 27 #13: posix-mq counts its queues in a `queues` attribute too, which the sweep
    # took for sysv-lifecycle's and asked it for a prefill: AttributeError before any run.
    out = tmp_path / "mq.json"
    r = run_cli("sweep", "-w", workloads, "--max-pairs", "1", "--cpus", "0", "--json", str(out),
                *QUICK)  # fmt: skip
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 0, r.stderr
    assert "posix-mq summary" in r.stdout
    many = "," in workloads  # one record per workload, named for it
    written = [tmp_path / "mq.posix-mq.json"] if many else [out]
    assert all(p.exists() for p in written), sorted(tmp_path.iterdir())
