"""Every module of the package has a name of its own.

`matrix.py` once named three different things (the command, the engine's runs,
the TUI's screen): a traceback, a grep or an editor's tab then said nothing about
which. A package's __init__.py and __main__.py are the only names allowed twice.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = {"__init__.py", "__main__.py"}


def shared_basenames(package: Path) -> dict[str, list[str]]:
    """Basenames used by more than one module under `package` (besides SHARED)."""
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(package.rglob("*.py")):
        if path.name not in SHARED:
            where[path.name].append(path.relative_to(package.parent).as_posix())
    return {name: paths for name, paths in where.items() if len(paths) > 1}


def test_no_two_modules_of_the_package_share_a_basename() -> None:
    modules = list((ROOT / "ipctop").rglob("*.py"))
    assert len(modules) > 100  # the walk found the package, not an empty folder
    shared = shared_basenames(ROOT / "ipctop")
    listing = "\n".join(f"  {name}: {', '.join(paths)}" for name, paths in sorted(shared.items()))
    assert not shared, f"modules sharing a basename (name each for its job):\n{listing}"


def test_a_shared_basename_is_found(tmp_path: Path) -> None:
    # The check is only as good as its walk: two sweep.py in sub-packages are caught,
    # two __init__.py are not.
    pkg = tmp_path / "pkg"
    for sub in ("a", "b"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "sweep.py").write_text("")
        (pkg / sub / "__init__.py").write_text("")
    assert shared_basenames(pkg) == {"sweep.py": ["pkg/a/sweep.py", "pkg/b/sweep.py"]}
