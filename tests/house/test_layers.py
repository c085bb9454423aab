"""The package's layers hold: import-linter's contracts, and no UI import at run time.

The contracts live in pyproject.toml ([tool.importlinter]); ARCHITECTURE.md
says what each layer is for.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11")


def _contracts() -> list[dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return config["tool"]["importlinter"]["contracts"]


def test_import_linter_contracts_are_kept() -> None:
    code = (
        "import sys\n"
        "from importlinter.cli import lint_imports\n"
        "sys.exit(lint_imports(no_cache=True, no_logo=True))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{len(_contracts())} kept, 0 broken" in r.stdout, r.stdout


def test_core_modules_load_no_textual_or_rich_at_run_time() -> None:
    # import-linter reads import statements; this also catches a module that
    # pulls the UI in some other way (importlib, a plugin, a side effect).
    (forbidden,) = [c for c in _contracts() if c["type"] == "forbidden"]
    assert set(forbidden["forbidden_modules"]) == {"textual", "rich"}
    code = (
        "import importlib, pkgutil, sys\n"
        f"roots = {forbidden['source_modules']!r}\n"
        "names = []\n"
        "for root in roots:\n"
        "    mod = importlib.import_module(root)\n"
        "    names.append(root)\n"
        "    if hasattr(mod, '__path__'):\n"
        "        for info in pkgutil.walk_packages(mod.__path__, root + '.'):\n"
        "            importlib.import_module(info.name)\n"
        "            names.append(info.name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(len(names), bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    count = int(r.stdout.split()[0])
    assert count >= 40, r.stdout  # the walk reached the packages' modules, not just their names
