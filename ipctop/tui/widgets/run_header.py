"""Two lines on top: what runs where, and how well it scales right now.

Each line is built of pieces with a priority; at a narrow width the least
needed go first and the words that stay get shorter, in the order ORDER
states, so what remains is whole words, never a figure cut mid-word.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from ...cpus import format_cpu_list
from ...live.session import Session
from ...live.sources import RunInfo
from .bands import HeaderBand
from .spark import si

# Levels, in the order fit() applies them until a line fits: a piece of level L is
# dropped at L; a piece's short form for level L replaces it at L. KEEP is never
# dropped. First what a narrow line can lose (the CPU model, the kernel and the CPU
# list, the program's name, the linear reference, the interval's ±), then shorter
# words for what stays ("total" goes, "scalability" becomes the table's "scal",
# "engine native" becomes "native", "above linear" becomes ">"), then the reason
# scalability is missing, then terser figures ("pairs 2/4 CPUs" becomes
# "pairs 2/4", "> linear 200 %" becomes "> linear", "REPLAY <file>" and a note
# "REC <file> (N)" become "REPLAY" and "REC"), and last a state or a note. A line too narrow even then is cut in
# its full words (the too-small screen). A shortening a later drop made needless
# is undone, so a note dropped last does not leave words shorter than need be.
LAST, CPUS, NAME, LINEAR, PM, WORDS, WHY, TERSE, STATE, NOTE = range(1, 11)
KEEP = 99
ORDER = (LAST, CPUS, NAME, LINEAR, PM, WORDS, WHY, TERSE, STATE, NOTE)

# (text, style, level) or (text, style, level, ((level, shorter text), ...))
Piece = tuple[str, str, int] | tuple[str, str, int, tuple[tuple[int, str], ...]]


def fit(pieces: Sequence[Piece], width: int) -> Text:
    """Join pieces, dropping and shortening them level by level (ORDER) until they fit."""
    full = [p[0] for p in pieces]
    levels = [p[2] for p in pieces]
    shorter = [dict(p[3]) if len(p) > 3 else {} for p in pieces]
    shown: list[str | None] = list(full)  # None: dropped

    def wide() -> bool:
        return sum(len(t) for t in shown if t is not None) > width

    done: list[tuple[int, str | None]] = []  # (piece, its words before a shortening)
    for level in ORDER:
        # One piece at a time, the rightmost first: a second note need not take the
        # first (REC path) with it, and the last words shorten before the first.
        for i in reversed(range(len(pieces))):
            if not wide():
                break
            if shown[i] is None:
                continue
            if levels[i] == level:
                shown[i] = None
            elif level in shorter[i]:
                done.append((i, shown[i]))
                shown[i] = shorter[i][level]
    if wide():
        # Too narrow even so (the too-small screen): the line is cut whatever it says,
        # so it says what it says at full width, cut, not shorter words cut.
        shown = [t if lvl == KEEP else None for t, lvl in zip(full, levels, strict=True)]
    else:
        # A later drop can make a shorter word needless (a note dropped last frees the
        # columns a word was shortened for): undo, the latest first, what still fits.
        # Drops stay: a field dropped is never shown in place of a later one.
        for i, before in reversed(done):
            now, shown[i] = shown[i], before
            if wide():
                shown[i] = now
    out = Text()
    for text, (_, style, *_) in zip(shown, pieces, strict=True):
        if text is not None:
            out.append(text, style)
    return out


class RunHeader(HeaderBand):
    DEFAULT_CSS = """
    RunHeader { height: 2; }
    """

    def update_from(
        self, info: RunInfo, session: Session, pairs: int | None, notes: list[str]
    ) -> None:
        s = session.latest
        # Line 1 fits the same way: the CPU model goes first, then the kernel, then the
        # program's name; what runs, its engine and a source other than live stay.
        runs = f"{info.config.workload} · {info.config.placement} · {info.config.mode}"
        first: list[Piece] = [
            ("ipctop ", "bold", KEEP, ((NAME, ""),)),
            (
                f"{runs} · engine {info.config.engine}",
                "",
                KEEP,
                ((WORDS, f"{runs} · {info.config.engine}"),),
            ),
            (f" · kernel {info.kernel}", "dim", CPUS),
            (f" · {info.cpu_model}", "dim", LAST),
        ]
        if info.source != "live":
            # A replay's file name goes last of all; the word REPLAY stays.
            kind = info.source.split()[0]
            first.append((f" · {info.source}", "bold", KEEP, ((TERSE, f" · {kind}"),)))
        active = s.pairs if s is not None else (pairs or 0)
        ncpu = len(info.config.cpus)
        pieces: list[Piece] = [
            (f"pairs {active}/{ncpu} CPUs", "bold", KEEP, ((TERSE, f"pairs {active}/{ncpu}"),))
        ]
        pieces.append((f" ({format_cpu_list(info.config.cpus)})", "bold", CPUS))
        if s is not None and s.oversubscribed:
            pieces.append((" oversubscribed", "bold reverse", KEEP))
        head = session.headline()
        here = head.settled
        if here is not None:
            # The table's figure first; the last interval beside it, named as such.
            half = here.summary.half_width_pct
            pm = f" ±{half:.1f} %" if half is not None else ""
            total = f"{si(here.total_ops_per_s)} ops/s settled"
            pieces.append((f" · total {total}", "", KEEP, ((WORDS, f" · {total}"),)))
            # The table's ± column says it too: at 80 columns it goes before a cut figure.
            pieces.append((pm, "", PM))
            pieces.append((f" (last {info.interval:g} s {si(head.now)})", "dim", LAST))
        else:
            total = f"{si(head.now)} ops/s"
            pieces.append((f" · total {total}", "", KEEP, ((WORDS, f" · {total}"),)))
            pieces.append((f" (last {info.interval:g} s)", "", LAST))
        if active >= 2:
            if head.scal is None:
                # "scal" is the table's own name for the column.
                pieces.append((" · scalability -", "", KEEP, ((WORDS, " · scal -"),)))
                why = f" ({head.scal_none})"
                pieces.append((why, "", WHY, ((WORDS, why.replace("needs a ", "no ")),)))
            else:
                scal = f"{head.scal:.0f} %" + ("" if head.scal_settled else " settling")
                short = ((WORDS, f" · scal {scal}"),)
                pieces.append((f" · scalability {scal}", "bold", KEEP, short))
                if head.above is not None:
                    linear = f"linear {100 * active} %"
                    shorter = ((WORDS, f" > {linear}"), (TERSE, " > linear"))
                    pieces.append((f" above {linear}", "bold reverse", KEEP, shorter))
                else:
                    pieces.append((f" (linear {100 * active} %)", "", LINEAR))
        if s is not None and s.pairs > 0 and here is None:
            pieces.append((f" · {session.settle_state}", "", STATE))
        for note in notes:
            # A note named by a capital tag (REC <file> (N), PAUSED (space)) keeps its tag.
            tag = note.split(" ", 1)[0]
            tagged: tuple[tuple[int, str], ...] = ()
            if tag.isupper() and tag != note:
                tagged = ((TERSE, f" · {tag}"),)
            pieces.append((f" · {note}", "bold reverse", NOTE, tagged))
        width = self.size.width or 10_000  # padding excluded already; unmounted: no limit
        self.show(Text("\n").join([fit(first, width), fit(pieces, width)]))
