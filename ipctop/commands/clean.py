"""`ipctop clean`: the last resort for objects a dead ipctop left behind.

It considers only objects with ipctop's key prefix that belong to the
calling user, and removes one only when the session that made it (found by
the tag in its key) is gone. Anyone else's objects are never touched.
"""

from __future__ import annotations

import argparse
import os

from ..engine.reaper import (
    _alive,
    live_objects,
    release_tag,
    remove_checked,
    session_owner,
    tag_of,
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dry-run", "-n", action="store_true", help="only list what would go")


def leftovers(uid: int | None = None) -> tuple[list[tuple], list[tuple]]:
    """(orphans, in use): our ipctop-keyed objects whose session is dead or alive."""
    uid = os.getuid() if uid is None else uid
    orphans, in_use = [], []
    for kind, ident, key, owner in live_objects():
        tag = tag_of(key)
        if tag is None or owner != uid:
            continue
        pid = session_owner(tag)
        if pid is not None and _alive(pid):
            in_use.append((kind, ident, key, pid))
        else:
            orphans.append((kind, ident, key, pid))
    return orphans, in_use


def run(args: argparse.Namespace) -> int:
    orphans, in_use = leftovers()
    for kind, ident, key, pid in in_use:
        print(f"kept    {kind} id {ident} key {key:#010x}: in use by ipctop pid {pid}")
    removed = 0
    tags = set()
    for kind, ident, key, _ in orphans:
        if args.dry_run:
            print(f"would remove {kind} id {ident} key {key:#010x}")
            continue
        if remove_checked(kind, ident, key):
            removed += 1
            tags.add(tag_of(key))
            print(f"removed {kind} id {ident} key {key:#010x}")
    for tag in tags:
        if tag is not None and session_owner(tag) is not None:
            release_tag(tag)
    if not orphans:
        print("nothing to clean: no ipctop objects whose creator is gone")
    elif not args.dry_run:
        print(f"{removed} object(s) removed")
    return 0
