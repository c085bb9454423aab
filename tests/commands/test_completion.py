"""`ipctop completion`: the generated bash script, driven the way bash drives it."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import run_cli

from ipctop.cli import COMMANDS
from ipctop.engine.workloads import WORKLOADS

needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory) -> str:
    r = run_cli("completion", "bash")
    assert r.returncode == 0, r.stderr
    path = tmp_path_factory.mktemp("completion") / "ipctop.bash"
    path.write_text(r.stdout)
    return str(path)


def complete(script: str, cwd, *words: str) -> list[str]:
    """What bash offers for the last word of `words` (COMP_WORDS as bash sets it)."""
    line = " ".join(f"'{w}'" for w in words)
    prog = (
        f"source '{script}'; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; "
        'COMPREPLY=(); _shtab_ipctop; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    r = subprocess.run(["bash", "-c", prog], capture_output=True, text=True, cwd=cwd)
    assert r.returncode == 0, r.stderr
    return [x for x in r.stdout.splitlines() if x]


@needs_bash
def test_commands_options_and_choices_complete(bash_script: str, tmp_path) -> None:
    assert set(complete(bash_script, tmp_path, "ipctop", "")) >= set(COMMANDS)
    assert complete(bash_script, tmp_path, "ipctop", "comp") == ["compare", "completion"]
    assert "--metrics" in complete(bash_script, tmp_path, "ipctop", "sweep", "--")
    assert complete(bash_script, tmp_path, "ipctop", "run", "--placement", "") == [
        "same", "cross", "free"
    ]  # fmt: skip


@needs_bash
def test_workload_names_complete_after_a_comma(bash_script: str, tmp_path) -> None:
    got = complete(bash_script, tmp_path, "ipctop", "sweep", "-w", "sysv-s")
    assert got == [w for w in WORKLOADS if w.startswith("sysv-s")]
    got = complete(bash_script, tmp_path, "ipctop", "sweep", "-w", "pipe,fu")
    assert got == ["pipe,futex"]


@needs_bash
def test_record_arguments_offer_json_files_and_folders(bash_script: str, tmp_path) -> None:
    (tmp_path / "old.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("")
    (tmp_path / "box7").mkdir()
    got = set(complete(bash_script, tmp_path, "ipctop", "compare", ""))
    assert got == {"old.json", "box7"}
    assert "notes.txt" not in complete(bash_script, tmp_path, "ipctop", "replay", "")


@pytest.mark.parametrize("shell", ["zsh", "tcsh"])
def test_other_shells_get_a_script_naming_every_command(shell: str) -> None:
    r = run_cli("completion", shell)
    assert r.returncode == 0, r.stderr
    for name in COMMANDS:
        assert name in r.stdout
    assert "sysv-msg-shared" in r.stdout


def test_an_unknown_shell_is_one_line_and_exit_2() -> None:
    r = run_cli("completion", "fish-and-chips")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
