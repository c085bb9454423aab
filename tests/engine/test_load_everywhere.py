"""hackbench and chat through the commands every workload goes through: ab by
load (--groups, --rooms), run --rooms, --metrics (real runs, real ends)."""

from __future__ import annotations

import pytest
from conftest import run_cli, two_cpus

from ipctop.engine.objects import _native

needs_native = pytest.mark.skipif(_native is None, reason="the native extension is not built")


@needs_native
@two_cpus
def test_ab_sets_one_load_against_another(tmp_path) -> None:
    path = tmp_path / "ab.json"
    r = run_cli(
        "ab", "-w", "hackbench", "--fds", "2", "--a", "--groups 1", "--b", "--groups 2",
        "--max-seconds", "20", "--window", "0.3", "--settle", "0.1", "--json", str(path),
    )  # fmt: skip
    assert r.returncode in (0, 1), r.stderr  # 1: a difference is a finding, not a failure
    assert "A: --groups 1 · B: --groups 2 · hackbench" in r.stdout
    assert path.exists()


def test_a_load_name_in_an_option_set_is_checked_like_pairs() -> None:
    r = run_cli("ab", "-w", "chat", "--a", "--rooms 0", "--b", "--rooms 1")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--rooms" in r.stderr


@needs_native
@two_cpus
def test_run_takes_rooms_for_chat() -> None:
    r = run_cli(
        "run", "-w", "chat", "--rooms", "1", "--transport", "unix", "--seconds", "1",
        "--interval", "0.5",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "1 pair(s)" in r.stdout


def test_check_s_load_verdict_names_the_seed_s_knee() -> None:
    from ipctop.analysis.load_scaling import LoadPoint
    from ipctop.commands.check_load import judge_load

    # 2.6.4: 39.0 s at 100 groups, 218.8 at 400 (three runs each, planted)
    pts = [
        LoadPoint(100, (38.5, 39.0, 39.5), messages=1),
        LoadPoint(400, (216.0, 218.8, 221.0), messages=1),
    ]
    v = judge_load(pts)
    assert v.status == "warn" and v.reason.startswith("knee at 400 groups")
    # mm1 held: 15.5 (310) to 181.7 (363) is +17 %, but intervals that overlap are no knee
    held = [
        LoadPoint(50, (14.0, 15.5, 17.5), messages=1),
        LoadPoint(500, (160.0, 181.7, 200.0), messages=1),
    ]
    assert judge_load(held).status == "ok"


@needs_native
@two_cpus
def test_check_load_adds_its_verdict_to_the_json() -> None:
    import json

    r = run_cli("check", "--quick", "--load", "--json", timeout=300)
    assert r.returncode in (0, 1), r.stderr  # a loaded box may fail other verdicts
    result = json.loads(r.stdout)
    (load,) = [v for v in result["verdicts"] if v["subject"] == "hackbench by load"]
    assert load["status"] in ("ok", "warn")
    assert "1, 2 groups" in load["reason"] or "knee at 2 groups" in load["reason"]


@needs_native
@two_cpus
def test_a_group_s_senders_are_costed_per_message_of_their_group() -> None:
    import time

    from conftest import wait_for

    from ipctop.engine import procfs
    from ipctop.engine.config import RunConfig
    from ipctop.engine.engine import Engine
    from ipctop.engine.sampler import Sampler
    from ipctop.tui.widgets.detail_panel import detail_lines, summary

    cpus = (0, 1)
    config = RunConfig(workload="hackbench", cpus=cpus, fds=2, placement="cross")
    with Engine(config) as e:
        e.start(1)
        sampler = Sampler(e)
        sampler.detail = True
        sampler.sample()

        def switches() -> list[int]:
            tasks = [procfs.read_task(end.pid, end.tid) for end in e.ends()]
            return [t.voluntary + t.involuntary if t else -1 for t in tasks]

        def messages() -> int:
            return sum(e.counters.rounds(end.slot) for end in e.ends())

        ran, got = switches(), messages()
        time.sleep(0.4)
        # A window in which every end ran and the group passed messages: a loaded
        # box can leave a sender no slice in 0.4 s, and then it costs nothing.
        wait_for(
            lambda: messages() - got >= 1000 and all(a > b for a, b in zip(switches(), ran)),
            timeout=30,
        )
        s = sampler.sample()
    c = s.costs
    assert c is not None and len(c.threads) == 4
    senders = [t for t in c.threads if t.role.startswith("S")]
    assert len(senders) == 2
    # Senders count no rounds of their own; per message of their group they cost CPU.
    assert all(t.cpu_us_per_round is not None and t.cpu_us_per_round > 0 for t in senders)
    # The box-wide figure is every end's CPU over each message once: the sum of
    # the ends' shares of one message (one group, so one divisor).
    per_message = sum(t.cpu_us_per_round for t in c.threads)  # type: ignore[misc]
    assert c.cpu_us_per_round == pytest.approx(per_message, rel=1e-6)
    assert summary(c, "group").startswith("CPU per message ")
    heads = [x.text for x in detail_lines(c, "", "group") if x.style == "heading"]
    # The units are in the column heads ("cpu µs", "rtt µs"), issue 28.
    assert "per thread, per message of its group" in heads


@needs_native
@two_cpus
def test_metrics_serve_a_group_s_ends_and_its_messages_per_second() -> None:
    from test_metrics import start, wait_for

    proc, url = start("run", "-w", "hackbench", "--groups", "2", "--fds", "2", "--seconds", "4",
                      "--interval", "0.2")  # fmt: skip
    try:
        m = wait_for(
            url,
            lambda m: sum(s.value for s in m.get("ipctop_pair_ops_per_second", [])) > 0,
            "a group's messages/s",
        )
        ends = m["ipctop_end_ops_per_second"]
        assert {s.labels["workload"] for s in ends} == {"hackbench"}
        assert sorted({s.labels["role"] for s in ends}) == ["R0", "R1", "S0", "S1"]
        assert {s.labels["pair"] for s in ends} == {"0", "1"}
        # senders count none; the receivers' rounds are the messages delivered
        assert all(s.value == 0 for s in ends if s.labels["role"].startswith("S"))
    finally:
        proc.wait(timeout=60)
        proc.communicate()
    assert proc.returncode == 0
