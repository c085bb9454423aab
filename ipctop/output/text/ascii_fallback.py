"""Print on a terminal or pipe that cannot take UTF-8 (PYTHONIOENCODING=ascii, a C locale).

Rather than threading a flag through every print, the streams get an
encoding error handler that writes each symbol ipctop uses as its ASCII
stand-in, and anything else as '?'.
"""

from __future__ import annotations

import codecs
import sys
from typing import TextIO

HANDLER = "ipctop-ascii"
# The symbols ipctop prints, and what stands in for them.
ASCII = {
    "·": "-",
    "µ": "u",
    "●": "*",
    "≠": "!=",
    "→": "->",
    "×": "x",
    "±": "+/-",
    "…": "...",
    "–": "-",
    "—": "-",
    "≈": "~",
    "≤": "<=",
    "≥": ">=",
    "°": " deg",
}
ASCII.update({c: "#" for c in "▁▂▃▄▅▆▇█"})


def _replace(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    bad = exc.object[exc.start : exc.end]
    return "".join(ASCII.get(c, "?") for c in bad), exc.end


codecs.register_error(HANDLER, _replace)


def _needs_fallback(stream: TextIO) -> bool:
    encoding = getattr(stream, "encoding", None)
    if not encoding:
        return False
    try:
        "·µ●→".encode(encoding)
    except UnicodeEncodeError:
        return True
    except LookupError:
        return False  # an encoding Python does not know: leave the stream alone
    return False


def use_ascii_fallback() -> bool:
    """Switch stdout and stderr to ASCII stand-ins where they cannot encode ours."""
    changed = False
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and _needs_fallback(stream) and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors=HANDLER)
            changed = True
    return changed
