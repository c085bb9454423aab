"""Strings read from a record never reach a terminal raw.

A record is a file anyone may have edited: an ESC in `box.cpu_model` printed
by `compare` or `report` sets the window title (OSC 0), clears the screen
(CSI 2J) or worse. Every string of a decoded record, keys included, has its
control characters (C0, DEL, C1) written out as visible escapes (`\\x1b`)
as soon as it is read, so every reader and every output (text, markdown,
HTML, the monitor) gets only printable text.

JSON text cannot hold a raw C0 character in a string; such a character comes
only from an escape (`\\u001b`, `\\n`) or is a raw DEL or C1. A record with
none of those is returned as it is, without walking it.
"""

from __future__ import annotations

import re
from typing import Any

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# In the JSON text: an escape that may decode to a control character, or a raw DEL or C1.
_MAY_HOLD = re.compile(r"\\[bfnrt]|\\u00[0189][0-9a-fA-F]|\\u007[fF]|[\x7f-\x9f]")


def _visible(m: re.Match[str]) -> str:
    return f"\\x{ord(m.group()):02x}"


def printable(s: str) -> str:
    """s with each control character written as \\xNN."""
    return _CONTROL.sub(_visible, s)


def escape_controls(value: Any, text: str | None = None) -> Any:
    """A decoded JSON value with every string (and key) made printable.

    `text`, the JSON it was decoded from, lets a record with no escape that
    could be a control character skip the walk. Iterative: a JSON bomb nested
    thousands deep is refused later by the depth check, not here by a RecursionError.
    """
    if text is not None and not _MAY_HOLD.search(text):
        return value
    if isinstance(value, str):
        return printable(value)
    stack = [value] if isinstance(value, (dict, list)) else []
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            for i, x in enumerate(v):
                if isinstance(x, str):
                    v[i] = printable(x)
                elif isinstance(x, (dict, list)):
                    stack.append(x)
            continue
        for k in [k for k in v if _CONTROL.search(k)]:
            v[printable(k)] = v.pop(k)
        for k, x in v.items():
            if isinstance(x, str):
                v[k] = printable(x)
            elif isinstance(x, (dict, list)):
                stack.append(x)
    return value
