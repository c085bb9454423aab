"""Where the CPU time of the pairs goes: perf samples of their CPUs, in windows.

perf.py says whether perf can run here (and, when not, which reason and the
fix, in one line); perf_record.py drives `perf record` and `perf script`;
parse.py reads only the fields `perf script -F` was asked for; window.py holds
the immutable per-window profile every consumer reads. See ARCHITECTURE.md,
"Profiling", for why this drives the perf binary.
"""

from .perf import PerfStatus, perf_status
from .perf_record import PerfRecorder
from .window import Profile, ProfileWindow, SymbolShare

__all__ = [
    "PerfRecorder",
    "PerfStatus",
    "Profile",
    "ProfileWindow",
    "SymbolShare",
    "perf_status",
]
