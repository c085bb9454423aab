"""`ipctop completion bash|zsh|tcsh`: a completion script generated from the parser (shtab).

Commands and options come from argparse itself, so the script cannot drift
from the parser; workload names come from the workload registry and record
arguments complete JSON files (folders too, for `report`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import Any

from ..engine.workloads import WORKLOADS

SHELLS = ("bash", "zsh", "tcsh")
#: the dests that name a record or another file ipctop reads or writes
RECORD_DESTS = {"records", "record", "baseline", "replay", "paths"}
FILE_DESTS = {"json", "csv", "html", "markdown", "output"}
DIR_DESTS = {"gnuplot", "screenshot_dir"}
WORKLOAD_DESTS = {"workload"}

_BASH_WORKLOADS = """
_ipctop_workloads() {
  # a comma-separated list: complete the name after the last comma
  local cur="${1##*,}" head=""
  [[ "$1" == *,* ]] && head="${1%,*},"
  compgen -P "$head" -W "@NAMES@" -- "$cur"
}
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("shell", choices=SHELLS, help="the shell to write a completion script for")


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script for ipctop's whole parser (cli hands it over: commands
    sit below cli and do not import it)."""
    import shtab

    names = " ".join(WORKLOADS)
    workloads = {"bash": "_ipctop_workloads", "zsh": f"({names})", "tcsh": f"({names})"}
    records = shtab.glob("*.json")
    for action in _actions(parser):
        dest = action.dest
        if dest in WORKLOAD_DESTS:
            action.complete = workloads
        elif dest in RECORD_DESTS:
            action.complete = records
        elif dest in FILE_DESTS and action.nargs != 0:
            action.complete = shtab.FILE
        elif dest in DIR_DESTS:
            action.complete = shtab.DIRECTORY
    preamble = {"bash": _BASH_WORKLOADS.replace("@NAMES@", names)}
    # shtab takes a str or {shell: str} (its annotation says only the first).
    return shtab.complete(parser, shell=shell, preamble=preamble)  # type: ignore[arg-type]


def _actions(parser: argparse.ArgumentParser) -> Iterator[Any]:
    # Any: shtab completes through a `complete` attribute argparse's Action does not declare.
    for action in parser._actions:
        yield action
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _actions(sub)


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(script(args._parser, args.shell))
    return 0
