"""`--metrics [HOST:]PORT`: the latest sample as a Prometheus/OpenMetrics endpoint.

The exposition is prometheus_client's own: a custom Collector turns the newest
Sample (and the scaling points measured so far) into metric families on every
scrape, so nothing is kept twice and a scrape never waits for the pairs. The
measuring thread publishes; the HTTP thread only reads a snapshot taken under
a lock. Label values come from the run (host, workload, placement, mode,
engine), so a fleet's boxes land in one dashboard side by side.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    InfoMetricFamily,
    Metric,
)
from prometheus_client.exposition import start_http_server
from prometheus_client.registry import CollectorRegistry

from ... import __version__
from ...analysis.scaling import ScalingPoint, scalability_pct
from ...engine.latency import PairLatency
from ...engine.sample import Sample
from ...errors import UsageError
from .metrics_histograms import LatencyAccumulator, histogram_families

RUN_LABELS = ("host", "workload", "placement", "mode", "engine")


@dataclass(frozen=True)
class MetricsAddress:
    host: str
    port: int  # 0: the kernel picks a free one (the URL printed says which)

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def parse_metrics_address(text: str) -> MetricsAddress:
    """'9464', 'HOST:9464' or '[::1]:9464'; loopback unless a host is named."""
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = "127.0.0.1", text
    elif host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"{text!r}: write an IPv6 host in brackets, e.g. [::1]:9464")
    if not host:
        raise ValueError(f"{text!r}: the host before ':' is empty")
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"{text!r}: the port {port_text!r} is not a number") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"{text!r}: the port {port} is outside 0..65535")
    return MetricsAddress(host, port)


@dataclass(frozen=True)
class RunLabels:
    """What the series of one run are labelled with."""

    workload: str
    placement: str
    mode: str
    engine: str

    def values(self, host: str) -> list[str]:
        return [host, self.workload, self.placement, self.mode, self.engine]


class MetricsBoard:
    """The newest sample and the scaling points per run, shared with the scrapes."""

    def __init__(self, host: str | None = None) -> None:
        self.host = host or socket.gethostname()
        self._lock = threading.Lock()
        self._labels: RunLabels | None = None
        self._sample: Sample | None = None
        self._points: dict[RunLabels, tuple[ScalingPoint, ...]] = {}
        self._hists: dict[int, tuple[bytearray, bytearray]] = {}
        # The last readings of latency: above 256 ends a sample has them every 2 s
        # (engine/latency_pace.py), and a scrape between them still sees them.
        self._latency: tuple[PairLatency, ...] = ()

    def publish(
        self,
        sample: Sample,
        labels: RunLabels,
        points: Sequence[ScalingPoint] | None = None,
        hists: dict[int, tuple[bytearray, bytearray]] | None = None,
    ) -> None:
        """Called by the measuring thread once per sample; points replace that run's,
        hists (pair -> running round-trip and one-way histograms) the last ones."""
        with self._lock:
            if sample.latency or labels != self._labels:
                self._latency = sample.latency
            self._labels, self._sample = labels, sample
            if points is not None:
                self._points[labels] = tuple(points)
            self._hists = hists or {}

    def set_points(self, labels: RunLabels, points: Sequence[ScalingPoint]) -> None:
        with self._lock:
            self._points[labels] = tuple(points)

    def snapshot(
        self,
    ) -> tuple[RunLabels | None, Sample | None, dict[RunLabels, tuple[ScalingPoint, ...]]]:
        with self._lock:
            return self._labels, self._sample, dict(self._points)

    def latency(self) -> tuple[PairLatency, ...]:
        with self._lock:
            return self._latency

    def histograms(self) -> dict[int, tuple[bytearray, bytearray]]:
        with self._lock:
            return self._hists


class RunPublisher:
    """One run's samples and points onto a board: an on_sample callback for measure()."""

    def __init__(self, board: MetricsBoard, labels: RunLabels, engine: Any = None) -> None:
        self.board, self.labels = board, labels
        self.latency = LatencyAccumulator(lambda: self.engine)
        self.engine = engine  # the histograms' source; attach() a sweep's next one

    def attach(self, engine: Any) -> None:
        self.engine = engine

    def __call__(self, sample: Sample) -> None:
        self.latency.feed()
        self.board.publish(sample, self.labels, hists=self.latency.snapshot())

    def points(self, points: Sequence[ScalingPoint]) -> None:
        self.board.set_points(self.labels, points)


class SampleCollector:
    """A prometheus_client Collector over a MetricsBoard (collect() per scrape)."""

    def __init__(self, board: MetricsBoard) -> None:
        self.board = board

    def collect(self) -> Iterator[Metric]:
        labels, sample, points = self.board.snapshot()
        host = self.board.host
        info = InfoMetricFamily("ipctop", "ipctop's version and the run being measured")
        info.add_metric([], {"version": __version__, "host": host})
        yield info
        if points:
            yield from _scaling_families(host, points)
        if labels is None or sample is None:
            return
        yield from _sample_families(labels.values(host), sample)
        yield from latency_families(labels.values(host), self.board.latency())
        hists = self.board.histograms()
        if hists:
            yield from histogram_families(labels.values(host), RUN_LABELS, hists)


def _family(name: str, doc: str, extra: Sequence[str] = (), unit: str = "") -> Any:
    return GaugeMetricFamily(name, doc, labels=[*RUN_LABELS, *extra], unit=unit)


def _sample_families(run: list[str], s: Sample) -> Iterable[Metric]:
    pairs = _family("ipctop_pairs", "pairs running")
    pairs.add_metric(run, s.pairs)
    total = _family("ipctop_total_ops_per_second", "sum of every end's rounds per second")
    total.add_metric(run, s.total_ops_per_s)
    end = _family(
        "ipctop_end_ops_per_second", "one end's rounds per second", ("pair", "role", "cpu")
    )
    per_pair = _family("ipctop_pair_ops_per_second", "both ends of a pair", ("pair",))
    rounds = CounterMetricFamily(
        "ipctop_rounds", "rounds of one end since it started", labels=[*RUN_LABELS, "pair", "role"]
    )
    errors = CounterMetricFamily(
        "ipctop_wrong_messages",
        "messages received by the wrong pair (never counted as rounds)",
        labels=[*RUN_LABELS, "pair", "role"],
    )
    by_pair: dict[int, float] = {}
    for t in s.threads:
        cpu = "" if t.last_cpu is None else str(t.last_cpu)
        end.add_metric([*run, str(t.pair), t.role, cpu], t.ops_per_s)
        rounds.add_metric([*run, str(t.pair), t.role], t.rounds)
        errors.add_metric([*run, str(t.pair), t.role], t.errors)
        by_pair[t.pair] = by_pair.get(t.pair, 0.0) + t.ops_per_s
    for p, v in sorted(by_pair.items()):
        per_pair.add_metric([*run, str(p)], v)
    yield from (pairs, total, end, per_pair, rounds, errors)
    yield from _cpu_families(run, s)


def _cpu_families(run: list[str], s: Sample) -> Iterable[Metric]:
    busy = _family("ipctop_cpu_busy_ratio", "one CPU's busy share of the interval", ("cpu",))
    time = _family(
        "ipctop_cpu_time_ratio", "one CPU's share of the interval by kind", ("cpu", "kind")
    )
    for c in s.cpus:
        busy.add_metric([*run, str(c.cpu)], c.busy / 100.0)
        for kind in ("user", "system", "softirq"):
            time.add_metric([*run, str(c.cpu), kind], getattr(c, kind) / 100.0)
    yield from (busy, time)
    if s.ctxt_per_s is not None:
        ctxt = _family("ipctop_context_switches_per_second", "the whole box (/proc/stat ctxt)")
        ctxt.add_metric(run, s.ctxt_per_s)
        yield ctxt
    ipis = _family(
        "ipctop_ipis_per_second", "inter-processor interrupts one CPU received", ("cpu", "kind")
    )
    for i in s.ipis:
        for kind, value in (("resched", i.resched_per_s), ("callfunc", i.callfunc_per_s)):
            if value is not None:
                ipis.add_metric([*run, str(i.cpu), kind], value)
    yield ipis


def _scaling_families(
    host: str, points: dict[RunLabels, tuple[ScalingPoint, ...]]
) -> Iterable[Metric]:
    # The monitor's curve has provisional points until a reading settles; they
    # are shown (a noisy box may never settle) but say so in their label.
    total = _family(
        "ipctop_scaling_ops_per_second", "total at each pair count", ("pairs", "settled")
    )
    scal = _family(
        "ipctop_scalability_ratio",
        "total(N) / total(1): linear on 2 CPUs is 2",
        ("pairs", "settled"),
    )
    for labels, pts in points.items():
        run = labels.values(host)
        for p in pts:
            key = [*run, str(p.pairs), "true" if p.settled else "false"]
            total.add_metric(key, p.total_ops_per_s)
            ratio = scalability_pct(pts, p.pairs)
            if ratio is not None:
                scal.add_metric(key, ratio / 100.0)
    yield from (total, scal)


def latency_families(run: list[str], readings: Sequence[PairLatency]) -> Iterable[Metric]:
    """Round-trip and wake-up latency, when the engine timed rounds.

    The native ends time their rounds (engine/latency.py) and the sampler puts
    each pair's interval summary in Sample.latency (PairLatency, in ns). They
    are exposed as gauges per quantile, in seconds, over the sampler's last
    reading of them: its last interval, or the last 2 s above 256 ends. Engines
    without round timing carry none and expose nothing.
    """
    if readings:
        yield from _latency_quantiles(run, readings)


_QUANTILES = (("0.5", "p50"), ("0.99", "p99"), ("0.999", "p999"), ("1", "max"))


def _latency_quantiles(run: list[str], pairs: Iterable[PairLatency]) -> Iterable[Metric]:
    rtt = _family(
        "ipctop_round_trip_seconds",
        "A's post to its next wake-up, over the last reading (2 s above 256 ends)",
        ("pair", "quantile"),
    )
    wake = _family(
        "ipctop_wakeup_seconds",
        "one end's post to its peer's wake-up, both directions, over the last reading",
        ("pair", "quantile"),
    )
    timed = _family(
        "ipctop_timed_rounds", "rounds timed since the reading before", ("pair", "what")
    )
    for p in pairs:
        pair = str(p.pair)
        for fam, key in ((rtt, "rtt"), (wake, "oneway")):
            summary = getattr(p, key)
            timed.add_metric([*run, pair, key], float(summary.n))
            for q, name in _QUANTILES:
                v = getattr(summary, name)
                if v is not None:
                    fam.add_metric([*run, pair, q], float(v) / 1e9)
    yield from (rtt, wake, timed)


class MetricsEndpoint:
    """The HTTP endpoint: opened before any pair starts, closed on every exit path."""

    def __init__(self, address: MetricsAddress, board: MetricsBoard | None = None) -> None:
        self.address = address
        self.board = board if board is not None else MetricsBoard()
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(SampleCollector(self.board))
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def open(self) -> MetricsEndpoint:
        a = self.address
        try:
            self._server, self._thread = start_http_server(a.port, a.host, self.registry)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise UsageError(f"--metrics {a.host}:{a.port}: cannot listen: {reason}") from None
        return self

    @property
    def url(self) -> str:
        host = self.address.host
        host = f"[{host}]" if ":" in host else host
        port = self._server.server_port if self._server is not None else self.address.port
        return f"http://{host}:{port}/metrics"

    def publisher(self, labels: RunLabels, engine: Any = None) -> RunPublisher:
        return RunPublisher(self.board, labels, engine)

    def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None

    def __enter__(self) -> MetricsEndpoint:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()
