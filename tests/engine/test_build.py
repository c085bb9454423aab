"""Install must succeed without a compiler; ipctop then runs its Python engine."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT, run_cli


def test_build_without_a_compiler_still_succeeds(tmp_path) -> None:
    # FAKE: this box has gcc; CC=false stands in for a box without one.
    env = {"CC": "false", "LDSHARED": "false", "PATH": "/usr/bin:/bin"}
    r = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext",
         "--build-lib", str(tmp_path / "lib"), "--build-temp", str(tmp_path / "tmp")],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "pure-Python engine will be used" in r.stderr
    assert not list((tmp_path / "lib").rglob("_native*.so"))


def test_python_engine_is_chosen_when_native_is_missing() -> None:
    # FAKE: the native module is hidden by a meta-path blocker, as if never built.
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'ipctop._native': raise ImportError('not built')\n"
        "sys.meta_path.insert(0, Block())\n"
        "from ipctop.cli import main\n"
        "sys.exit(main(['run', '--cpus', '0', '--seconds', '0.3']))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "engine python" in r.stdout
    assert run_cli("run", "--engine", "native", "--seconds", "0.2").returncode == 0
