"""`python -m ipctop.lab` on the host, without booting: needs, usage errors, presets.

These run in the normal suite (no guest): a missing tool is found by hiding
PATH from a real `python -m ipctop.lab`, not by faking a lookup.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from conftest import ROOT

from ipctop.lab.accel import Accel, choose, kvm_is_pvm
from ipctop.lab.guest import vng_command
from ipctop.lab.needs import find_kernels, find_vng
from ipctop.lab.topology import PRESETS


def _lab(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ipctop.lab", *args],
        capture_output=True, text=True, timeout=60, cwd=ROOT, env=env,
    )  # fmt: skip


def test_needs_names_each_missing_tool_with_its_install_command() -> None:
    # An empty PATH hides qemu and busybox; vng is still found beside this interpreter.
    res = _lab("--needs", env={"PATH": "/nonexistent"})
    assert res.returncode == 4, res.stderr
    line = res.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "qemu-system-x86_64 (install: apt-get install qemu-system-x86)" in line
    assert "busybox (install: apt-get install busybox-static)" in line


def test_bad_options_are_one_line_and_exit_2(tmp_path) -> None:
    for args in (["--cpus", "7"], ["--kernel", str(tmp_path / "none")], ["--timeout", "x"]):
        res = _lab(*args)
        assert res.returncode == 2, (args, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


def test_presets_give_qemu_the_layout_they_describe() -> None:
    big = PRESETS[64]
    assert (big.cpus, big.nodes) == (64, 2)
    assert big.smp() == "64,sockets=2,cores=16,threads=2"
    assert big.vng_numa() == ["--numa", "2048M,cpus=0-31", "--numa", "2048M,cpus=32-63"]
    small = PRESETS[8]
    assert small.smp() == "8,sockets=2,cores=2,threads=2"
    assert small.vng_numa() == ["--numa", "1024M,cpus=0-3", "--numa", "1024M,cpus=4-7"]
    assert PRESETS[32].describe().startswith("32 CPUs: 2 sockets x 8 cores x 2 threads")


def test_a_pvm_kvm_is_told_from_a_hardware_one(tmp_path) -> None:
    # A named fake /sys/module: one box has only one kind of KVM.
    for loaded, pvm in (
        (["kvm", "kvm_pvm"], True),
        (["kvm", "kvm_pvm", "kvm_amd"], False),
        (["kvm", "kvm_intel"], False),
        ([], False),
    ):
        d = tmp_path / "-".join(loaded or ["none"])
        for m in loaded:
            (d / m).mkdir(parents=True)
        assert kvm_is_pvm(str(d)) is pvm, loaded


@pytest.mark.skipif(not kvm_is_pvm(), reason="this box's /dev/kvm is not PVM's")
@pytest.mark.skipif(not find_kernels(), reason="no /boot/vmlinuz-*-amd64 (linux-image-amd64)")
def test_auto_skips_a_pvm_kvm_at_once_and_says_why() -> None:
    t0 = time.monotonic()
    acc = choose(find_kernels()[-1], "auto")
    # No 20 s boot probe per CPU model: PVM is known not to boot a stock kernel.
    assert time.monotonic() - t0 < 5.0
    assert acc.name == "tcg" and acc.emulated
    assert any("PVM" in why for why in acc.tried), acc.tried


@pytest.mark.skipif(find_vng() is None, reason="no vng (pip install virtme-ng)")
def test_the_guest_boots_with_numa_balancing_off_unless_asked(tmp_path) -> None:
    tcg = Accel("tcg", "Skylake-Server", ())
    kernel = "/boot/vmlinuz-test"

    def appended(**kw: bool) -> list[str]:
        cmd = vng_command(kernel, PRESETS[64], tcg, str(tmp_path), ["true"], **kw)
        return [cmd[i + 1] for i, a in enumerate(cmd[: cmd.index("--")]) if a == "--append"]

    assert "numa_balancing=disable" in appended()
    assert "numa_balancing=enable" in appended(numa_balancing=True)
    assert "numa_balancing=disable" not in appended(numa_balancing=True)
    res = _lab("--numa-balancing", "maybe")
    assert res.returncode == 2 and "Traceback" not in res.stderr
