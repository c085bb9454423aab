"""Issue 27, finding 9: no control character of a record reaches the terminal.

Real records made on this box now (a sweep and an A/B), then edited as the
hostile run did: ESC sequences that set the window title (OSC 0) and clear
the screen (CSI 2J), a C1 CSI and a carriage return in `box.cpu_model` and
`kernel_release`. compare (its table header and its stderr notes), report
(text and markdown) and compare of the A/B record printed them raw; every
string read from a record now has its control characters written out.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_cli

from ipctop.output.records.record_text import escape_controls, printable

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x9b2J\rX"
SHOWN = "\\x1b]0;pwned\\x07\\x1b[2J\\x9b2J\\x0dX"  # what the user sees instead
RAW = ("\x1b", "\x07", "\x9b", "\r")
QUICK = ("--cpus", "0", "--seconds", "0.5", "--warmup", "0", "--repeat", "1", "-q")


def _edited(src: Path, dst: Path, kernel: str) -> Path:
    d = json.loads(src.read_text())
    d["box"]["cpu_model"] = "Evil CPU " + HOSTILE
    d["box"]["kernel_release"] = kernel + HOSTILE
    dst.write_text(json.dumps(d))  # ensure_ascii: ESC travels as \u001b, as an editor leaves it
    return dst


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("made")
    r = run_cli("sweep", "-w", "sysv-sem", "--max-pairs", "1", *QUICK, "--json", str(d / "s.json"))
    assert r.returncode == 0, r.stderr
    if len(os.sched_getaffinity(0)) >= 2:
        r = run_cli(
            "ab", "--window", "0.2", "--settle", "0.05", "--max-seconds", "3",
            "--precision", "0.001", "--json", str(d / "ab.json"), timeout=180,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
    return d


def _no_raw_controls(out: str) -> None:
    assert "Traceback" not in out, out
    for c in RAW:
        assert c not in out, (c, out)


def test_compare_prints_a_hostile_box_escaped(made: Path, tmp_path: Path) -> None:
    # Two kernels: compare notes on stderr that the kernels differ, naming both.
    a = _edited(made / "s.json", tmp_path / "a.json", "6.1-a")
    b = _edited(made / "s.json", tmp_path / "b.json", "6.1-b")
    r = run_cli("compare", str(a), str(b))
    assert r.returncode == 0, r.stderr
    _no_raw_controls(r.stdout + r.stderr)
    assert SHOWN in r.stdout + r.stderr, (r.stdout, r.stderr)


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_report_prints_a_hostile_box_escaped(made: Path, tmp_path: Path, fmt: str) -> None:
    _edited(made / "s.json", tmp_path / "a.json", "6.1-a")
    r = run_cli("report", str(tmp_path), "--format", fmt)
    assert r.returncode == 0, r.stderr
    _no_raw_controls(r.stdout + r.stderr)
    assert SHOWN in r.stdout, r.stdout


def test_compare_of_an_ab_record_prints_it_escaped(made: Path, tmp_path: Path) -> None:
    if not (made / "ab.json").exists():
        pytest.skip("ab needs 2 allowed CPUs; this box allows only 1")
    a = _edited(made / "ab.json", tmp_path / "ab.json", "6.1-ab")
    d = json.loads(a.read_text())
    d["ab"]["sides"]["B"]["cmd"] = "echo " + HOSTILE  # a side's hook is printed too
    a.write_text(json.dumps(d))
    r = run_cli("compare", str(a))
    assert r.returncode == 0, r.stderr
    _no_raw_controls(r.stdout + r.stderr)
    assert "B: echo " + SHOWN in r.stdout, r.stdout


def test_escape_controls_reaches_keys_lists_and_nesting() -> None:
    d = {"a\x1bk": ["x\x07", {"y": "\x9bz", "n": 1.5}], "ok": "µs · é"}
    text = json.dumps(d)
    out = escape_controls(json.loads(text), text)
    assert out == {"a\\x1bk": ["x\\x07", {"y": "\\x9bz", "n": 1.5}], "ok": "µs · é"}
    assert printable("plain µ") == "plain µ"
    # A record with no escape that could be a control is returned untouched, unwalked.
    clean = json.loads(json.dumps({"ok": "µs"}))
    assert escape_controls(clean, json.dumps({"ok": "µs"})) is clean
