"""No module of the package grows past what a reader can hold in their head.

The house rule is about 400 lines a module (small files, one job each); this fails at 450 so
that a small addition to a module near the line does not break the build, but
a module that has become two jobs does.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 450


def _lines(path: Path) -> int:
    with path.open(encoding="utf-8") as f:
        return sum(1 for _ in f)


def _sizes() -> dict[str, int]:
    return {
        p.relative_to(ROOT).as_posix(): _lines(p) for p in sorted((ROOT / "ipctop").rglob("*.py"))
    }


def test_no_module_of_the_package_is_over_450_lines() -> None:
    sizes = _sizes()
    assert len(sizes) > 100, sorted(sizes)  # the walk found the package, not an empty folder
    over = {name: n for name, n in sizes.items() if n > LIMIT}
    listing = "\n".join(f"  {name}: {n} lines" for name, n in sorted(over.items()))
    assert not over, f"modules over {LIMIT} lines (split them by job):\n{listing}"


def test_the_line_count_counts_a_real_file(tmp_path: Path) -> None:
    # The limit is only as good as the count: a file of known length reads as such.
    f = tmp_path / "m.py"
    f.write_text("x = 1\n" * (LIMIT + 1))
    assert _lines(f) == LIMIT + 1
