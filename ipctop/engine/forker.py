"""A long-lived thread that performs every fork of processes mode.

PR_SET_PDEATHSIG fires when the *thread* that forked a child exits, not the
process. Forking from short-lived threads (a TUI worker, say) would kill the
children early, so all forks happen here, on a thread that lives as long as
the engine.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

_T = TypeVar("_T")
_Job = tuple[Callable[..., Any], tuple[Any, ...], "Future[Any]"]


class Forker:
    def __init__(self, name: str = "ipctop-forker") -> None:
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def call(self, fn: Callable[..., _T], *args: Any) -> _T:
        fut: Future[_T] = Future()
        self._jobs.put((fn, args, fut))
        return fut.result()

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join(2.0)

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fn, args, fut = job
            try:
                fut.set_result(fn(*args))
            except BaseException as exc:  # handed back to the caller, who re-raises it
                fut.set_exception(exc)
