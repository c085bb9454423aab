"""--rt PRIO: SCHED_FIFO ends, as rt-tests' -p, checked before any pair starts."""

from __future__ import annotations

import os
import resource
import threading

from ..errors import ResourceError


def check_rt(prio: int) -> None:
    """Raise ResourceError (exit 3) when this process may not run SCHED_FIFO at prio.

    The probe is a thread of its own, so the caller's policy never changes
    (on Linux a pid of 0 sets the calling thread only).
    """
    failure: list[OSError] = []

    def probe() -> None:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(prio))
        except OSError as exc:
            failure.append(exc)

    t = threading.Thread(target=probe, name="ipctop-rt-probe")
    t.start()
    t.join()
    if failure:
        soft, _ = resource.getrlimit(resource.RLIMIT_RTPRIO)
        raise ResourceError(
            f"--rt {prio}: SCHED_FIFO is not permitted here ({failure[0].strerror}); it needs "
            f"CAP_SYS_NICE or an rtprio limit of at least {prio} (ulimit -r is {soft})"
        )
