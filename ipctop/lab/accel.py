"""The fastest QEMU accelerator that boots a kernel here: KVM with a CPU model that works, else TCG.

/dev/kvm opening is not enough: on a nested host `-cpu host` can abort on an
MSR the outer hypervisor refuses (MSR 0x10a here), and other models can hang
before the kernel's first line. So each candidate boots the lab's kernel with
no root file system for a few seconds, and counts only if the kernel printed
its banner on the serial line.

A /dev/kvm served by PVM (the kvm_pvm module, a KVM without hardware
virtualisation, as on this box's host) runs only kernels built as PVM guests:
Debian's printed nothing, not even with earlyprintk, under every CPU model
tried (host, host,-arch-capabilities, Skylake-Server, EPYC,+topoext, qemu64,
kvm64). `auto` skips it, saying so, instead of spending 20 s a model on it;
`--accel kvm` still tries (a PVM guest kernel given with --kernel may boot).
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass

from .topology import CPU_MODEL

# Models tried under KVM, in order: the host's own CPU (without the MSR a
# nested host refuses), then the lab's SMT-capable model.
KVM_MODELS = ("host", "host,-arch-capabilities", CPU_MODEL)
BANNER = b"Linux version"
MODULES = "/sys/module"


def kvm_is_pvm(modules: str = MODULES) -> bool:
    """/dev/kvm is PVM's: kvm_pvm is loaded and neither hardware KVM module is."""
    loaded = set(os.listdir(modules)) if os.path.isdir(modules) else set()
    return "kvm_pvm" in loaded and not loaded & {"kvm_intel", "kvm_amd"}


@dataclass(frozen=True)
class Accel:
    name: str  # "kvm" or "tcg"
    cpu_model: str
    tried: tuple[str, ...]  # what did not work, one phrase each

    @property
    def emulated(self) -> bool:
        return self.name == "tcg"

    def note(self) -> str:
        if self.emulated:
            return "TCG (emulated CPUs): figures are emulation, not the kernel's speed"
        return (
            f"KVM (-cpu {self.cpu_model}; nested virtualisation): "
            "figures are a guest's, not the host kernel's"
        )


def _boots(kernel: str, accel: str, model: str, seconds: float) -> str | None:
    """None if the kernel printed its banner within seconds, else why not."""
    with tempfile.TemporaryDirectory(prefix="ipctop-accel-") as d:
        log = os.path.join(d, "serial")
        cmd = [
            "qemu-system-x86_64", "-accel", accel, "-cpu", model, "-m", "256",
            "-smp", "1", "-kernel", kernel, "-append", "console=ttyS0 panic=-1",
            "-serial", f"file:{log}", "-display", "none", "-monitor", "none",
            "-no-reboot", "-nodefaults",
        ]  # fmt: skip
        proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    break
                if os.path.exists(log) and BANNER in open(log, "rb").read():
                    return None
                time.sleep(0.2)
            if os.path.exists(log) and BANNER in open(log, "rb").read():
                return None
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
        if proc.returncode not in (None, -signal.SIGKILL) and err:
            lines = err.decode(errors="replace").strip().splitlines()
            errors = [ln for ln in lines if "warning" not in ln] or lines
            return f"{accel} -cpu {model}: exited {proc.returncode}: {errors[0][:120]}"
        return f"{accel} -cpu {model}: no kernel banner in {seconds:.0f} s"


def choose(kernel: str, want: str = "auto", seconds: float = 20.0) -> Accel:
    """want: auto (KVM if a model boots, else TCG), kvm (error if none boots) or tcg."""
    tried: list[str] = []
    if want in ("auto", "kvm"):
        if not os.access("/dev/kvm", os.R_OK | os.W_OK):
            tried.append("kvm: /dev/kvm cannot be opened")
        elif want == "auto" and kvm_is_pvm():
            tried.append(
                "kvm: /dev/kvm is PVM (kvm_pvm), which boots only PVM guest kernels, "
                "not this one (--accel kvm tries anyway)"
            )
        else:
            for model in KVM_MODELS:
                why = _boots(kernel, "kvm", model, seconds)
                if why is None:
                    # -cpu host has no SMT model of its own; the topology still comes from -smp.
                    return Accel("kvm", model, tuple(tried))
                tried.append(why)
        if want == "kvm":
            raise RuntimeError("lab: no KVM CPU model boots: " + "; ".join(tried))
    return Accel("tcg", CPU_MODEL, tuple(tried))
