"""Issue 27, finding 15: SIGINT while the `ipctop` command is still importing.

The console script imported ipctop.cli, whose imports take up to a second on a
loaded box, before any handler of ipctop's was set: a ^C then was a
KeyboardInterrupt traceback. It now imports ipctop.entry, which sets the
handler first. The interpreter's own start-up (before the script's first
import) stays out of reach, so a run whose signal landed there is told apart
by its traceback's last line of the script and not counted.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_fault_output import interrupt_after

SCRIPT = Path(sys.executable).parent / "ipctop"
# Spread over the imports (10-35 ticks of 10 ms on a quiet box), and past them. In
# the child's CPU ticks past the interpreter's own start-up, not wall time: a loaded
# box stretched the start-up past fixed delays of 0.08-0.8 s, and too few landed.
TICKS = (0, 1, 2, 4, 6, 9, 13, 18, 25, 40)
OUT_OF_REACH = "from ipctop.entry import main"  # the script's first line of ipctop


@pytest.mark.skipif(not SCRIPT.exists(), reason=f"no installed ipctop command at {SCRIPT}")
def test_sigint_during_the_commands_imports_exits_130_without_a_traceback() -> None:
    reached = 0
    for ticks in TICKS:
        # SIGINT at its default in the child, as a terminal's ^C finds it.
        p = subprocess.Popen(
            [str(SCRIPT), "run", "--seconds", "3", "--cpus", "0"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            restore_signals=True,
        )
        interrupt_after(p, ticks)  # SIGINT once the child has run that far
        _, err = p.communicate(timeout=60)
        if "Traceback" in err and OUT_OF_REACH in err and "ipctop/cli.py" not in err:
            continue  # still in the interpreter's own start-up: nothing of ipctop's ran yet
        assert "Traceback" not in err, (ticks, err[-3000:])
        assert p.returncode == 130, (ticks, p.returncode, err[-2000:])
        reached += 1
    assert reached >= len(TICKS) // 2, f"only {reached} of {len(TICKS)} signals reached ipctop"
