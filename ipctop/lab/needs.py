"""What the lab needs on the host, and the package that provides each piece."""

from __future__ import annotations

import glob
import os
import shutil
import sys
from dataclasses import dataclass

KERNEL_GLOB = "/boot/vmlinuz-*-amd64"


@dataclass(frozen=True)
class Missing:
    what: str
    install: str  # the command that provides it

    def __str__(self) -> str:
        return f"{self.what} (install: {self.install})"


def find_vng() -> str | None:
    """vng beside this interpreter first (a venv's bin is often not on PATH)."""
    here = os.path.join(os.path.dirname(sys.executable), "vng")
    return here if os.access(here, os.X_OK) else shutil.which("vng")


def find_kernels() -> list[str]:
    """Debian's full kernels, newest name last; the cloud flavour has no 9p, so not it."""
    return sorted(k for k in glob.glob(KERNEL_GLOB) if "-cloud-" not in k)


def missing() -> list[Missing]:
    out = []
    if shutil.which("qemu-system-x86_64") is None:
        out.append(Missing("qemu-system-x86_64", "apt-get install qemu-system-x86"))
    if not find_kernels():
        out.append(Missing(f"a kernel matching {KERNEL_GLOB}", "apt-get install linux-image-amd64"))
    if shutil.which("busybox") is None:
        out.append(Missing("busybox", "apt-get install busybox-static"))
    if find_vng() is None:
        out.append(Missing("vng", "pip install virtme-ng"))
    return out


def missing_line(items: list[Missing]) -> str:
    return "lab: missing " + "; ".join(str(m) for m in items)
