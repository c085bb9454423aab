"""`python -m ipctop`: the first thing it does is make an early signal a quiet exit.

Until the command installs its own handlers (ipctop.signals.interruptible)
nothing has been created, so SIGINT during the imports and the parsing exits
130 at once instead of printing a KeyboardInterrupt traceback.
"""

import signal
import sys


def _early_exit(signum: int, frame: object) -> None:
    # SystemExit, not os._exit: buffered output still flushes and finally blocks run.
    sys.exit(128 + signum)


if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _early_exit)

from .cli import main  # noqa: E402  (after the handler: a ^C during the imports exits quietly)

sys.exit(main())
