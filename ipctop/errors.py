"""Exit codes and the errors that map to them (documented in the README)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1  # a check failed or a comparison regressed
EXIT_USAGE = 2
EXIT_NO_RESOURCES = 3
EXIT_UNSUPPORTED = 4
# compare --fail-below could not judge: one record a side from separate sessions
# and no session spread. Neither a pass (0) nor a regression (1).
EXIT_NOT_JUDGED = 5


class IpctopError(Exception):
    """An error with a one-line message for the user and an exit code."""

    exit_code = EXIT_FAILED


class UsageError(IpctopError):
    exit_code = EXIT_USAGE


class ResourceError(IpctopError):
    """A kernel limit was reached; the message names the sysctl to raise."""

    exit_code = EXIT_NO_RESOURCES


class UnsupportedError(IpctopError):
    exit_code = EXIT_UNSUPPORTED


class RecordError(IpctopError):
    """A record file is missing, truncated, hand-edited or of another version."""

    exit_code = EXIT_USAGE


class PairStartError(IpctopError):
    """A pair's ends did not start; everything made for it was removed (exit 1)."""
