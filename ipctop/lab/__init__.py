"""The lab: a real kernel with many CPUs, NUMA nodes and SMT siblings, in a VM.

    python -m ipctop.lab [--cpus 64|32|8] [--accel auto|kvm|tcg] [--out DIR]

A 2-CPU box has no second socket, no SMT sibling and 2 columns in
/proc/interrupts; fakes of /proc and /sys agree with the code that reads
them. The lab boots the host's own root file system read-only under a
packaged kernel (virtme-ng over QEMU) with the topology asked for, runs
ipctop inside on the guest's kernel and brings back what it saw
(ipctop/lab/inside.py). It installs nothing: `needs` names what is missing.
Every figure measured in a guest is emulation (TCG) or nested virtualisation,
never the kernel's speed on real hardware, and says so.
"""
