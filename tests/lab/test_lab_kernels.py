"""On the host: a record made in a lab guest, on the guest's kernel, compared with the
host's own: compare names both kernels and every box fact that differs (the emulated
CPU model, the CPU count, SMT, the clocksource), refuses, and with --force shows
the table under those lines.

Both records come from the same step of bench/lab_session.py (`record`: one
sysv-sem pair on CPU 0, 2 runs), in the guest and on the host, so only the
kernel and the box differ. The guest's comes back in the lab's out folder.
tests/records/test_compare_kernels.py checks the same against a named fake of
a guest's box; here the guest is real. The rates are TCG emulation: nothing
here judges one.

Where the guest comes from:
  IPCTOP_LAB=1            boots the lab's IPCTOP_LAB_CPUS preset (8 unless said;
                          minutes under TCG) for bench/lab_session.py's steps,
                          IPCTOP_LAB_STEPS ("record" unless said; one boot of the
                          64-CPU guest can run the monitor and the sampler bench
                          too), killed after IPCTOP_LAB_TIMEOUT s (1200); the
                          record step must have finished, whatever came after;
  IPCTOP_LAB_REUSE=DIR    reads an out folder a lab run already brought back.
Neither: the tests skip, saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from labguest import IN_GUEST
from test_lab_boot import _guest_processes, _lab, _run_to_the_end

from ipctop.lab.needs import missing, missing_line

SESSION = Path(ROOT) / "bench" / "lab_session.py"
REUSE = os.environ.get("IPCTOP_LAB_REUSE")
TIMEOUT = float(os.environ.get("IPCTOP_LAB_TIMEOUT", "1200"))
pytestmark = [
    pytest.mark.skipif(IN_GUEST, reason="already inside a lab guest"),
    pytest.mark.skipif(
        not REUSE and os.environ.get("IPCTOP_LAB") != "1",
        reason="needs a lab guest's record: IPCTOP_LAB=1 boots one (minutes under TCG), "
        "IPCTOP_LAB_REUSE=DIR reads a lab out folder",
    ),
    pytest.mark.timeout(TIMEOUT + 600),
]


def _boot(out: Path) -> None:
    gaps = missing()
    if gaps:
        pytest.skip(missing_line(gaps))
    cpus = os.environ.get("IPCTOP_LAB_CPUS", "8")
    steps = os.environ.get("IPCTOP_LAB_STEPS", "record").split()
    assert "record" in steps, steps
    argv = _lab("--cpus", cpus, "--out", str(out), "--timeout", f"{TIMEOUT:.0f}", "--")
    res = _run_to_the_end([*argv, sys.executable, str(SESSION), *steps], timeout=TIMEOUT + 300)
    assert not _guest_processes(out)
    # The lab's own exit says whether every step passed (or the guest ran out of time);
    # what these tests need is the record step, done in the guest before what followed.
    ran = out / "session-guest.json"
    assert ran.is_file(), res.stderr[-3000:]
    record = [s for s in json.loads(ran.read_text())["steps"] if s["step"] == "record"]
    log = (out / "steps" / "record.log").read_text()
    assert record and record[0]["returncode"] == 0, log[-3000:]


@pytest.fixture(scope="module")
def guest_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if REUSE:
        out = Path(REUSE)
    else:
        out = tmp_path_factory.mktemp("lab") / "out"
        _boot(out)
    assert (out / "records" / "sweep-guest.json").is_file(), f"no guest record in {out}"
    return out


@pytest.fixture(scope="module")
def host_record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("host")
    res = subprocess.run(
        [sys.executable, str(SESSION), "--out", str(out), "record"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert res.returncode == 0, (out / "steps" / "record.log").read_text()[-3000:]
    return out / "records" / "sweep-host.json"


def _box(path: Path) -> dict:
    return json.loads(path.read_text())["box"]


def _model_name(cpuinfo: str) -> str:
    return next(ln.split(":", 1)[1].strip() for ln in cpuinfo.splitlines() if "model name" in ln)


def test_the_guest_record_holds_the_guest_kernel_and_box(guest_out: Path) -> None:
    rec = json.loads((guest_out / "records" / "sweep-guest.json").read_text())
    box, facts = rec["box"], guest_out / "facts"
    # What the guest's own kernel said beside the record (ipctop.lab.inside's facts).
    assert box["kernel_release"] in (facts / "uname.txt").read_text()
    lscpu = [ln for ln in (facts / "lscpu-p.csv").read_text().splitlines() if ln[:1].isdigit()]
    assert len(box["online"]) == len(lscpu)
    assert box["cpu_model"] == _model_name((facts / "proc-cpuinfo.txt").read_text())
    assert rec["config"]["cpus"] == [0] and rec["config"]["workload"] == "sysv-sem"
    assert [len(s["repeats"]) for s in rec["steps"]] == [2]


def test_compare_refuses_naming_both_kernels_and_each_box_fact(
    guest_out: Path, host_record: Path
) -> None:
    guest = guest_out / "records" / "sweep-guest.json"
    host, other = _box(host_record), _box(guest)
    assert host["kernel_release"] != other["kernel_release"], "the guest ran the host's kernel"
    r = run_cli("compare", str(host_record), str(guest))
    assert r.returncode == 2, r.stdout
    line = r.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert (
        f"sweep-host.json ({host['kernel_release']}) and "
        f"sweep-guest.json ({other['kernel_release']}) were made on different boxes"
    ) in line
    assert f"CPU model {host['cpu_model']!r} vs {other['cpu_model']!r}" in line
    assert f"CPUs online {len(host['online'])} vs {len(other['online'])}" in line
    assert "the boxes' as much as the kernels'" in line and "pass --force" in line


def test_force_states_the_kernels_and_the_boxes_above_the_table(
    guest_out: Path, host_record: Path
) -> None:
    guest = guest_out / "records" / "sweep-guest.json"
    host, other = _box(host_record), _box(guest)
    r = run_cli("compare", str(host_record), str(guest), "--force")
    assert r.returncode == 0, r.stderr
    head, _, table = r.stdout.partition("\n\n")
    notes = head.splitlines()
    assert notes[0] == (
        f"kernels differ: sweep-host.json has {host['kernel_release']}, "
        f"sweep-guest.json {other['kernel_release']}"
    )
    forced = "forced: sweep-host.json vs sweep-guest.json: "
    assert f"{forced}CPU model {host['cpu_model']!r} vs {other['cpu_model']!r}" in notes
    assert f"{forced}CPUs online {len(host['online'])} vs {len(other['online'])}" in notes
    threads = [max((len(g) for g in b["smt_siblings"]), default=None) for b in (host, other)]
    if None not in threads and threads[0] != threads[1]:
        assert f"{forced}SMT threads per core {threads[0]} vs {threads[1]}" in notes
    if host["clocksource"] != other["clocksource"]:
        shown = f"{host['clocksource']!r} vs {other['clocksource']!r}"
        assert f"{forced}clocksource {shown}" in notes
    # Nothing but the boxes and the kernels differs: the same step made both records.
    assert not [n for n in notes[1:] if not n.startswith(forced)], notes
    assert "ops/s" in table and "Diff [%]" in table
    j = run_cli("compare", str(host_record), str(guest), "--force", "--json", "-")
    assert j.returncode == 0, j.stderr
    assert json.loads(j.stdout)["notes"][0] == notes[0]
