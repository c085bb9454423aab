"""Reading one /proc or /sys file that may not be there."""

from __future__ import annotations


def read_kernel_file(path: str) -> str | None:
    """The file's text, or None where it is missing or masked: containers hide parts of
    /sys and /proc, and a kernel without the feature has no file. Bytes that are not
    UTF-8 come through replaced rather than failing the whole read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except (FileNotFoundError, PermissionError, NotADirectoryError):
        return None
