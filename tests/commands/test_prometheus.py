"""--metrics scraped by a real Prometheus (issue 27): the Debian package's server, a
scrape config of 1 s, its data in a temp dir, asked through its HTTP API.

test_metrics.py parses ipctop's text with prometheus_client; this is the server a
user points at ipctop. It scrapes a real `ipctop run` (the latency histograms) and a
real `ipctop sweep` (the scaling points), then: the total is there and positive; the
p99 Prometheus computes from ipctop's buckets lies within the buckets of ipctop's own
per-window p99s over the same span; and every query of the example dashboard
returns data.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from conftest import ROOT, two_cpus

from ipctop.engine.objects import _native
from ipctop.output.exports.metrics_histograms import EDGES_NS

PROMETHEUS = shutil.which("prometheus")
pytestmark = [
    pytest.mark.skipif(
        PROMETHEUS is None, reason="needs prometheus (Debian package); .ci/run installs it"
    ),
    pytest.mark.skipif(_native is None, reason="the native extension is not built"),
    two_cpus,
]
URL = re.compile(r"metrics on http://([\d.]+:\d+)/metrics")
WAIT = 120.0  # seconds for a loaded box to start three servers and scrape them
RTT = "ipctop_round_trip_latency_seconds"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Ipctop:
    """An ipctop command with --metrics 127.0.0.1:0; its stdout lines kept as they come."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ipctop", *args, "--metrics", "127.0.0.1:0"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        first = self.proc.stderr.readline()
        m = URL.search(first)
        if m is None:
            self.proc.kill()
            raise AssertionError(f"no metrics address in {first!r} {self.proc.communicate()}")
        self.target = m.group(1)
        self.lines: list[tuple[float, str]] = []  # (time.time() when read, line)
        self.err: list[str] = []
        self._readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, True), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, False), daemon=True),
        ]
        for t in self._readers:
            t.start()

    def _read(self, stream, out: bool) -> None:
        for line in stream:
            if out:
                self.lines.append((time.time(), line))
            else:
                self.err.append(line)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            code = self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        for t in self._readers:
            t.join(10)
        return code


class Prometheus:
    def __init__(self, tmp: Path, targets: list[str]) -> None:
        self.port = free_port()
        config = tmp / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n"
            "scrape_configs:\n"
            "  - job_name: ipctop\n"
            f"    static_configs: [{{targets: {json.dumps(targets)}}}]\n"
        )
        self.log = (tmp / "prometheus.log").open("w")
        self.proc = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + WAIT
        while not self._ready():
            assert self.proc.poll() is None, (tmp / "prometheus.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "prometheus was not ready in time"
            time.sleep(0.2)

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base}/-/ready", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def query(self, expr: str, at: float) -> list[dict]:
        q = urllib.parse.urlencode({"query": expr, "time": f"{at:.3f}"})
        with urllib.request.urlopen(f"{self.base}/api/v1/query?{q}", timeout=10) as r:
            body = json.load(r)
        assert body["status"] == "success", body
        return body["data"]["result"]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def dashboard_queries() -> list[str]:
    board = json.loads((Path(ROOT) / "dashboards" / "ipctop.json").read_text())
    found: list[str] = []

    def walk(x) -> None:
        if isinstance(x, dict):
            if isinstance(x.get("expr"), str):
                found.append(x["expr"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(board)
    # The dashboard's template variables, as "All" selects them.
    return [e.replace("$host", ".*").replace("$workload", ".*") for e in found]


def bucket_of_seconds(ns: float) -> tuple[float, float]:
    """The exported bucket (lower, upper edge) holding a latency of `ns`, in seconds."""
    lower = 0.0
    for edge in EDGES_NS:
        if ns <= edge:
            return lower / 1e9, edge / 1e9
        lower = edge
    return lower / 1e9, math.inf


def finite_values(result: list[dict]) -> list[float]:
    return [float(r["value"][1]) for r in result if math.isfinite(float(r["value"][1]))]


def test_a_real_prometheus_scrapes_ipctop_and_the_dashboard_queries_return_data(
    tmp_path: Path,
) -> None:
    run = Ipctop("run", "-w", "sysv-msg", "--pairs", "1", "--cpus", "0", "--seconds", "300",
                 "--interval", "0.5", "--jsonl")  # fmt: skip
    sweep = prom = None
    try:
        sweep = Ipctop("sweep", "-w", "sysv-msg", "--max-pairs", "2", "--seconds", "4",
                       "--warmup", "0.2", "--repeat", "1", "-q")  # fmt: skip
        prom = Prometheus(tmp_path, [run.target, sweep.target])
        on_run = f'instance="{run.target}"'

        # 1. Every dashboard query returns data, asked while the sweep (the scaling
        # points) is still scraped: its series go stale when its endpoint closes.
        queries = dashboard_queries()
        assert len(queries) >= 10, queries
        deadline = time.monotonic() + WAIT
        while True:
            at = time.time()
            empty = [q for q in queries if not finite_values(prom.query(q, at))]
            if not empty:
                break
            assert sweep.proc.poll() is None or time.monotonic() < deadline, (
                f"no data for {empty}; the sweep ended with {sweep.proc.poll()}: {sweep.err}"
            )
            assert time.monotonic() < deadline, f"no data in time for {empty}"
            time.sleep(1.0)

        # 2. The total, and the p99 over 10 s, once the run has 12 s of scrapes.
        def scraped_for(seconds: float) -> bool:
            got = prom.query(f"{RTT}_count{{{on_run}}}[{seconds:g}s]", time.time())
            return bool(got) and len(got[0]["values"]) >= seconds - 2

        deadline = time.monotonic() + WAIT
        while not scraped_for(12):
            assert run.proc.poll() is None, run.err
            assert time.monotonic() < deadline, "12 s of scrapes of the run did not come"
            time.sleep(1.0)
        # There, and positive: a loaded box may give a 0.5 s window with no round in it,
        # so the last 10 s of scrapes are read.
        at = time.time()
        (total,) = prom.query(f"ipctop_total_ops_per_second{{{on_run}}}", at)
        (most,) = prom.query(f"max_over_time(ipctop_total_ops_per_second{{{on_run}}}[10s])", at)
        assert float(total["value"][1]) >= 0 and float(most["value"][1]) > 0, (total, most)
        (p99,) = prom.query(
            f"histogram_quantile(0.99, sum by (le) (rate({RTT}_bucket{{{on_run}}}[10s])))", at
        )
        theirs = float(p99["value"][1])
        (raw,) = prom.query(f"{RTT}_count{{{on_run}}}[10s]", at)
        span = (float(raw["values"][0][0]), float(raw["values"][-1][0]))  # scrapes rate used
    finally:
        if prom is not None:
            prom.stop()
        codes = [x.stop() for x in (run, sweep) if x is not None]
    assert codes[0] == 130, run.err  # stopped by SIGINT, after cleaning up
    if len(codes) > 1:
        assert codes[1] in (0, 1), sweep.err  # 1: a step failed on the shared box

    # ipctop's own figures for that span: its JSONL windows (0.5 s) that overlap it,
    # each with its count of timed rounds and its p50, p99, p99.9 and max. They bound
    # the fraction of the span's rounds at or under any latency x (a window whose p99
    # is at most x has at least 99 % of its rounds there; one whose p50 is above x, at
    # most half); a window cut by the span's ends counts as anything from none to all.
    # Prometheus's p99 lies in an exported bucket (lo, hi]: the span's fraction must
    # be able to reach 99 % by hi and not yet be past it at lo.
    samples = [(wall, json.loads(line)) for wall, line in run.lines if line.startswith('{"t"')]
    assert samples, run.err
    # The clock of the run's t: the line read soonest after its window ended.
    offset = min(wall - s["t"] for wall, s in samples)
    inside, cut = [], []
    for _wall, s in samples:
        end = offset + s["t"]
        rtt = s["latency"][0]["rtt"] if s.get("latency") else None
        if end < span[0] or end - s["dt"] > span[1] or not rtt or not rtt["n"]:
            continue
        whole = end - s["dt"] >= span[0] - 0.05 and end <= span[1] + 0.05
        (inside if whole else cut).append(rtt)
    assert len(inside) >= 8, (span, len(samples))
    lo, hi = bucket_of_seconds(theirs * 1e9)
    assert lo < theirs <= hi
    n = sum(w["n"] for w in inside + cut)

    def at_most(x_s: float, w: dict) -> tuple[float, float]:
        """Bounds on the fraction of a window's timed rounds at or under x_s seconds."""
        levels = [(w["p50"], 0.5), (w["p99"], 0.99), (w["p999"], 0.999), (w["max"], 1.0)]
        known = [(ns / 1e9, q) for ns, q in levels if ns is not None]
        low = max([q for v, q in known if v <= x_s], default=0.0)
        high = min([q for v, q in known if v > x_s], default=1.0)
        return low, high

    slack = 1.01  # ipctop's figures are bucket mid-points to 3 significant digits
    under_lo = sum(w["n"] * at_most(lo / slack, w)[0] for w in inside) / n
    by_hi = (sum(w["n"] * at_most(hi * slack, w)[1] for w in inside)
             + sum(w["n"] for w in cut)) / n  # fmt: skip
    figures = (theirs, lo, hi, under_lo, by_hi, [w["p99"] for w in inside])
    assert under_lo <= 0.99 <= by_hi, figures
