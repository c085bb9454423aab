"""Command line: parse arguments, pick a front end, map errors to exit codes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import __version__
from .errors import EXIT_USAGE, IpctopError
from .output.text.ascii_fallback import use_ascii_fallback
from .output.text.stdout_errors import output_failed, say
from .signals import Interrupted, interruptible

# name -> module under ipctop.commands; each has add_arguments(parser) and run(args) -> int
COMMANDS = {
    "tui": "live monitor (the default when no command is given)",
    "sweep": "run 1, 2, ... N pairs and print the scaling table",
    "run": "run N pairs and print one line per interval",
    "hackbench": "the time G hackbench groups take (rt-tests' hackbench, in C)",
    "compare": "compare records: ops/s, Diff [%] against the first, scalability",
    "check": "a verdict on this box in about a minute (--quick: 15 s)",
    "ab": "two settings interleaved (ABBA) on one box: B/A with its interval and a verdict",
    "clean": "remove objects left by an ipctop that was killed",
    "replay": "play a record back in the monitor, read-only (no pairs start)",
    "demo": "a scripted story for a room: 1 pair, more pairs, cross placement, the verdict",
    "serve": "serve the monitor to a browser through textual-serve (loopback)",
    "matrix": "one-way latency between every pair of CPUs, by topology class",
    "report": "many boxes' records in one table: groups, medians, outliers and why",
    "completion": "print a shell completion script: bash, zsh or tcsh",
}


STARTS_PAIRS = ("tui", "sweep", "run", "check", "matrix", "demo", "ab")


def _report_leftovers() -> None:
    from .commands.clean import leftovers

    orphans, _ = leftovers()
    if orphans:
        print(
            f"ipctop: note: {len(orphans)} object(s) left by an earlier ipctop whose process "
            "is gone; 'ipctop clean' removes them",
            file=sys.stderr,
        )


class Parser(argparse.ArgumentParser):
    """argparse that reports a bad value in one line and exits 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"ipctop: {message} (see ipctop {self._sub_name()}--help)\n")

    def _sub_name(self) -> str:
        parts = self.prog.split()[1:]
        return (" ".join(parts) + " ") if parts else ""


def build_parser() -> Parser:
    import importlib

    parser = Parser(
        prog="ipctop",
        description="Watch IPC scale, or fail to scale, as CPUs are added.",
    )
    parser.add_argument("--version", action="version", version=f"ipctop {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=Parser, metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        module = importlib.import_module(f"ipctop.commands.{name}")
        # argparse %-formats help strings (not descriptions), so a literal % is doubled.
        p = sub.add_parser(name, help=help_text.replace("%", "%%"), description=help_text)
        module.add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    use_ascii_fallback()
    parser = build_parser()
    # No command means the live monitor; its options may still be given.
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):
        argv = ["tui", *argv]
    args = parser.parse_args(argv)
    args._parser = parser  # `ipctop completion` walks the whole parser
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        if args.command in STARTS_PAIRS:  # inside: an untrusted session directory is one line
            _report_leftovers()
        with interruptible():
            return int(args._module.run(args) or 0)
    except IpctopError as exc:
        say(f"ipctop: {exc}")
        return exc.exit_code
    except Interrupted as exc:
        say(f"ipctop: interrupted by {exc}; everything was cleaned up")
        return exc.exit_code
    except KeyboardInterrupt:
        say("ipctop: interrupted; everything was cleaned up")
        return 130
    except OSError as exc:
        # Reached only after the engine's `with` blocks have removed everything.
        code = output_failed(exc)
        if code is None:
            raise
        return code


if __name__ == "__main__":
    sys.exit(main())
