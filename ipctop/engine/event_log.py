"""The engine's warnings, in order, each readable once by every consumer.

Engine.events keeps the last KEEP warnings (a failing run must not grow
without bound), so a consumer cannot find "what is new" by its length once
the log is full. Each warning gets a serial number instead: a consumer keeps
the count it has seen and asks for what came since.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Iterator

KEEP = 200


class EventLog:
    """append/extend from any thread (pairs' threads, workers, the sampler)."""

    def __init__(self, keep: int = KEEP) -> None:
        self._items: deque[str] = deque(maxlen=keep)
        self._lock = threading.Lock()
        #: warnings logged so far, the ones dropped from the front included
        self.count = 0

    def append(self, message: str) -> None:
        with self._lock:
            self._items.append(message)
            self.count += 1

    def extend(self, messages: Iterable[str]) -> None:
        for m in messages:
            self.append(m)

    def since(self, seen: int) -> tuple[list[str], int]:
        """The warnings after the first `seen` (those still kept), and the count to pass next."""
        with self._lock:
            new = min(self.count - seen, len(self._items))
            items = list(self._items)[len(self._items) - new :] if new > 0 else []
            return items, self.count

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __repr__(self) -> str:
        return f"EventLog({list(self)!r})"
