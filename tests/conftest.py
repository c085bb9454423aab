"""Shared fixtures: every test must leave /proc/sysvipc and our children as it found them."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from private_fs import fill, tmpfs_over

from ipctop.engine.profile.spawn import SPAWNER

ROOT = Path(__file__).resolve().parent.parent

# A runner that starts pytest in the background without job control (`cmd &` in
# a script, nohup) hands it SIGINT ignored, and an ignored signal stays ignored
# across exec: every ipctop the tests start would then shrug off the SIGINT the
# Ctrl-C tests send (a CI run launched so failed those 12 tests, and only them).
# The tests are about ipctop, so their children start with SIGINT at its default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


# The slow tier (README, "Set up and test"): `pytest -m "not slow"` is the quick
# loop. Whole files whose tests drive a terminal, a browser, the TUI, a fault, a
# bench reference or long runs; SLOW_TESTS names single tests of other files,
# the longest by `pytest --durations=0` in a quiet CI replica (2026-12-06), until
# the rest sum to under 4 minutes of test time.
SLOW_FILES = frozenset(
    {
        "test_ab.py",
        "test_ab_latency.py",
        "test_bench_ref.py",
        "test_build.py",
        "test_check.py",
        "test_check_curve.py",
        "test_faults.py",
        "test_lab_boot.py",
        "test_latency_think.py",
        "test_msgbench.py",
        "test_profile.py",
        "test_profile_lifetime.py",
        "test_serve.py",
        "test_sweep_many.py",
        "test_think.py",
    }
)
SLOW_PREFIXES = ("test_tui_", "test_fault_")
SLOW_TESTS: frozenset[str] = frozenset(
    {
        "test_chat.py::test_the_fidelity_bench_sets_ipctop_against_the_reference_in_abba_blocks",
        "test_chat.py::test_the_rooms_sweep_samples_above_its_rooms",
        "test_cli.py::test_every_help_page_prints",
        "test_compare_cli.py::test_fail_below_exit_codes",
        "test_engine_warnings.py::test_run_sweep_and_check_say_contention_once_and_records_keep_it",
        "test_latency_cli.py::test_sweep_records_percentiles_per_step_and_pair_and_compare_shows_them",
        "test_load_everywhere.py::test_ab_sets_one_load_against_another",
        "test_load_everywhere.py::test_check_load_adds_its_verdict_to_the_json",
        "test_load_everywhere.py::test_metrics_serve_a_group_s_ends_and_its_messages_per_second",
        "test_load_records.py::test_a_load_record_is_not_compared_with_other_fds_or_a_pair_sweep",
        "test_mechanisms.py::test_runs_counts_and_cleans_up",
        "test_metrics.py::test_check_exposes_its_one_pair_and_all_cpu_points_as_it_goes",
        "test_metrics.py::test_run_serves_every_end_and_cpu_while_two_real_pairs_run",
        "test_metrics.py::test_sweep_exposes_each_settled_point_as_it_is_measured",
        "test_metrics_histograms.py::test_run_exports_histograms_that_grow_while_two_real_pairs_run",
        "test_progress.py::test_ab_on_a_terminal_shows_each_slot_and_the_time_left",
        "test_prometheus.py::test_a_real_prometheus_scrapes_ipctop_and_the_dashboard_queries_return_data",
        "test_report.py::test_report_on_real_records_of_this_box",
        "test_stats.py::test_the_tuis_window_interval_covers_95_percent_with_the_sessions_r",
        "test_sweep_sessions.py::test_a_sweep_keeps_its_own_workloads_session_spread",
        "test_syscalls.py::test_calls_per_round_match_the_stated_sequence",
        "test_syscalls.py::test_every_send_carries_the_payload_size",
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        name = item.path.name
        test = f"{name}::{getattr(item, 'originalname', item.name)}"
        if name in SLOW_FILES or name.startswith(SLOW_PREFIXES) or test in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


# How long the after-test check waits for what a test ended to be gone (objects, its
# threads, its children) before it calls a leak: a loaded CI box can take seconds to
# run a reaper or an exiting thread; a clean test never waits, a leak waits it out.
LEAK_GRACE = 15.0

two_cpus = pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2,
    reason="needs 2 allowed CPUs; this box allows only 1",
)


def wait_for(predicate, timeout: float = 30.0) -> bool:
    """Poll predicate until it holds or timeout seconds pass (a loaded box is slow, never
    wrong: the default leaves a CI box at high load room; a clean run never waits it out)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return bool(predicate())


def sysv_objects(ours_only: bool = True) -> set[tuple[str, str, str]]:
    """(kind, key, id) of the SysV objects on the box with ipctop's key prefix.

    The box is shared (other benchmarks may run beside the tests), so by
    default only keys ipctop can have made count; ours_only=False sees all.
    """
    out = set()
    for kind in ("msg", "sem", "shm"):
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            f = line.split()
            if len(f) >= 2 and (not ours_only or (int(f[0]) & 0xFF000000) == 0x1C000000):
                out.add((kind, f[0], f[1]))
    return out


def posix_queues() -> set[str]:
    d = Path("/dev/mqueue")
    return {p.name for p in d.iterdir() if p.name.startswith("ipctop")} if d.is_dir() else set()


def made_here() -> tuple[set[tuple[str, str, str]], set[str]]:
    """The SysV objects and session tags this very process owns now: what an
    in-process check may assert about on a box others share."""
    from ipctop.engine.reaper import session_owner, tag_of
    from ipctop.engine.session_dir import session_dir

    me = os.getpid()
    objects = {
        o for o in sysv_objects() if (t := tag_of(int(o[1]))) is not None and session_owner(t) == me
    }
    tags = set()
    for name in os.listdir(session_dir()):
        if len(name) == 3 and all(c in "0123456789abcdef" for c in name):
            if session_owner(int(name, 16)) == me:
                tags.add(name)
    return objects, tags


def _someone_elses(key: int, me: psutil.Process) -> bool:
    """True for an object of a live ipctop outside this test run (a shared box)."""
    from ipctop.engine.reaper import _alive, session_owner, tag_of

    tag = tag_of(key)
    owner = session_owner(tag) if tag is not None else None
    if owner is None or not _alive(owner) or owner == me.pid:
        return False
    try:
        return me.pid not in {p.pid for p in psutil.Process(owner).parents()}
    except psutil.NoSuchProcess:
        return False


def _queue_of_someone_else(name: str, me: psutil.Process) -> bool:
    """True for a POSIX queue ("ipctop-PID-...") a live process outside this run made."""
    try:
        pid = int(name.split("-")[1])
        return pid != me.pid and me.pid not in {p.pid for p in psutil.Process(pid).parents()}
    except (IndexError, ValueError, psutil.NoSuchProcess):
        return False


def _still_there(before: set, me: psutil.Process) -> set:
    """New objects that are ours and outlive a short grace.

    Another run on the box may be exiting right now, its reaper a moment from
    removing what it made (a moment that a loaded box stretches to seconds); a
    real leak is still there after the grace, and a clean test never waits it out.
    """
    deadline = time.monotonic() + LEAK_GRACE
    while True:
        leaked = {o for o in sysv_objects() - before if not _someone_elses(int(o[1]), me)}
        if not leaked or time.monotonic() > deadline:
            return leaked
        time.sleep(0.05)


def _queues_still_there(before: set[str], me: psutil.Process) -> set[str]:
    """New POSIX queues that are not another live run's and outlive the grace: a run
    that just exited (another on the shared box) has its reaper a moment from
    unlinking them, and its pid is gone by then (seen: CI-like load, 2 queues)."""
    deadline = time.monotonic() + LEAK_GRACE
    while True:
        left = {q for q in posix_queues() - before if not _queue_of_someone_else(q, me)}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def _running_children(me: psutil.Process) -> list[psutil.Process]:
    """Children still running after the grace: a killed or stopped end is a moment
    (seconds, on a loaded box) from its exit; a process left behind is still there."""
    deadline = time.monotonic() + LEAK_GRACE
    while True:
        alive = []
        for c in me.children(recursive=True):
            try:
                if c.is_running() and c.status() != psutil.STATUS_ZOMBIE:
                    alive.append(c)
            except psutil.NoSuchProcess:
                continue  # gone between the listing and the look: not left behind
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def _ipctop_threads() -> set[threading.Thread]:
    # perf's spawner lives as long as the process by design (engine/profile/spawn.py).
    return {t for t in threading.enumerate() if t.name.startswith("ipctop") and t.name != SPAWNER}


def _threads_still_running(before: set[threading.Thread]) -> list[str]:
    """ipctop's own threads (the sampler, ...) a test started and left running:
    a sampler stop() waits 2 s for its thread, and a loaded box may take longer
    to run a thread's last lines, so give them the grace."""
    deadline = time.monotonic() + LEAK_GRACE
    while True:
        left = _ipctop_threads() - before
        if not left or time.monotonic() > deadline:
            return sorted(f"{t.name} at {_where(t)}" for t in left)
        time.sleep(0.05)


def _where(t: threading.Thread) -> str:
    """The innermost ipctop frame a thread is in, so a leak says what it waits for."""
    frame = sys._current_frames().get(t.ident or 0)
    stack = traceback.extract_stack(frame) if frame is not None else []
    ours = [f for f in stack if "/ipctop/" in f.filename] or stack
    return " < ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in ours[-3:][::-1])


@pytest.fixture(autouse=True)
def private_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """ipctop's persistent state (the box's stored session spread) in a fresh folder per
    test: a spread the developer's `check --sessions` stored must not change a test's
    verdicts, and a test's `check --sessions` must not overwrite the developer's."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return state


@pytest.fixture(autouse=True)
def leaves_nothing_behind():
    before = sysv_objects()
    mq_before = posix_queues()
    threads_before = _ipctop_threads()
    yield
    threads_left = _threads_still_running(threads_before)
    me = psutil.Process()
    alive = _running_children(me)
    leaked = _still_there(before, me)
    mq_leaked = _queues_still_there(mq_before, me)
    assert not leaked, f"SysV objects leaked: {sorted(leaked)}"
    assert not mq_leaked, f"POSIX queues leaked: {sorted(mq_leaked)}"
    assert not alive, f"processes left running: {[c.pid for c in alive]}"
    assert not threads_left, f"threads left running: {threads_left}"


def run_cli(
    *args: str, timeout: float = 120, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run `python -m ipctop ARGS` and capture its output."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "ipctop", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=full_env,
    )


@dataclass(frozen=True)
class FilledDisk:
    run: subprocess.CompletedProcess
    line: str  # ipctop's "could not write ...: ... kept in PATH"
    kept: Path


@pytest.fixture
def filling_disk(tmp_path: Path) -> Iterator[Callable[..., FilledDisk]]:
    """run(ARGS[, OPTION]): `ipctop ARGS --json DISK/r.json` (OPTION for --json), DISK a 256 KiB tmpfs of its own
    mount namespace that is filled 1 s in, once ipctop has passed its start-up check
    of the path (the check's probe file is gone by then). Each kept record is
    removed afterwards. Needs root and unshare, and skips without them."""
    if os.geteuid() != 0:
        pytest.skip("needs root for a private mount namespace")
    if not shutil.which("unshare"):
        pytest.skip("unshare is not installed")
    kept: list[Path] = []

    def run(args: str, option: str = "--json") -> FilledDisk:
        disk = tmp_path / f"disk{len(kept)}"
        disk.mkdir()
        script = (
            f"{tmpfs_over(disk, 'size=256k', source='ipctop-test')} && "
            f"({sys.executable} -m ipctop {args} {option} {disk}/r.json & "
            f"sleep 1; {fill(disk / 'fill')}; wait $!)"
        )
        r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                           capture_output=True, text=True, cwd=ROOT, timeout=60)  # fmt: skip
        line = next((ln for ln in r.stderr.splitlines() if "could not write" in ln), None)
        assert line is not None, (r.returncode, r.stderr)
        path = Path(line.rsplit(" kept in ", 1)[1].strip())
        kept.append(path)
        return FilledDisk(r, line, path)

    yield run
    for path in kept:
        path.unlink(missing_ok=True)
