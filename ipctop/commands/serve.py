"""`ipctop serve [--port 8000] [--host 127.0.0.1]`: the monitor in a browser (textual-serve).

For a projector or a remote box. Each browser gets its own process running
`python -m ipctop.served` with the monitor options given here; only one
of them runs a live benchmark at a time (see live/live_lock.py). With
--replay FILE every browser gets its own read-only replay instead.
Loopback only unless --host says otherwise: the page drives a benchmark.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import os
import shlex
import signal
import socket
import sys

from ..errors import IpctopError, UsageError
from ..signals import Interrupted
from . import tui
from .common import count, positive_float

SHUTDOWN_GRACE = 1.0  # seconds a signalled server gives open connections


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument("--port", type=count(1, 65535), default=8000, help="port (8000)")
    p.add_argument("--replay", metavar="FILE", help="serve a replay of this record, no benchmark")
    p.add_argument("--speed", type=positive_float, default=1.0, help="replay speed (1)")
    tui.add_monitor_arguments(p)


def _monitor_options(args: argparse.Namespace) -> list[str]:
    """The monitor options given on this command line, as arguments for the served one."""
    probe = argparse.ArgumentParser(add_help=False)
    tui.add_monitor_arguments(probe)
    out: list[str] = []
    for action in probe._actions:
        if not action.option_strings:
            continue
        value = getattr(args, action.dest, action.default)
        if value == action.default or value is None:
            continue
        flag = (
            action.option_strings[-1]
            if action.option_strings[-1].startswith("--")
            else (action.option_strings[0])
        )
        if isinstance(action, argparse._StoreTrueAction):
            out.append(flag)
            continue
        if action.dest in ("record", "baseline", "screenshot_dir"):
            value = os.path.abspath(value)
        out += [flag, str(value)]
    return out


def served_command(args: argparse.Namespace) -> list[str]:
    """What textual-serve starts for each browser."""
    if args.replay:
        cmd = [sys.executable, "-m", "ipctop", "replay", os.path.abspath(args.replay)]
        cmd += ["--speed", str(args.speed)]
        if args.theme:
            cmd += ["--theme", args.theme]
        if args.baseline:
            cmd += ["--baseline", os.path.abspath(args.baseline)]
        return cmd
    return [sys.executable, "-m", "ipctop.served", *_monitor_options(args)]


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything is printed; a usage error (2) as --metrics."""
    sock = None
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp; not a busy port
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        if sock is not None:
            sock.close()
        reason = exc.strerror or str(exc)
        raise UsageError(f"--host {host} --port {port}: cannot listen: {reason}") from None
    return sock


def run(args: argparse.Namespace) -> int:
    from textual_serve.server import Server

    from ..live.baseline import load_baseline
    from ..output.records.record_io import read_record

    # A bad file fails here, in one line, not in every browser.
    if args.replay:
        read_record(args.replay)
    if args.baseline:
        load_baseline(args.baseline)
    if args.record and not os.path.isdir(os.path.dirname(os.path.abspath(args.record))):
        raise UsageError(f"--record {args.record}: no such directory")
    # exec: textual-serve runs it through a shell; the monitor must be the server's own
    # child for PR_SET_PDEATHSIG to fire when the server dies.
    command = "exec " + shlex.join(served_command(args))
    sock = _listen(args.host, args.port)  # before any line of its own: a busy port is 2
    if not _loopback(args.host):
        print(
            f"ipctop: warning: serving on {args.host}, not loopback: anyone who can reach "
            "this port can start and stop benchmarks on this box",
            file=sys.stderr,
        )
    # An IPv6 literal needs brackets in a URL (http://[::1]:8000).
    shown_host = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{shown_host}:{args.port}"

    class QuietServer(Server):
        signalled: int | None = None
        sock: socket.socket  # bound by _listen before the server starts

        async def on_startup(self, app: object) -> None:
            print(f"ipctop: serving the monitor on {url} (Ctrl-C stops)", file=sys.stderr)

        def serve(self, debug: bool = False) -> None:
            # textual-serve's own serve() waits up to 60 s for each browser to
            # leave and then exits 0; a signal must stop it at once, as 128+N.
            # The served monitors die with it (PR_SET_PDEATHSIG in ipctop.served).
            from aiohttp import web
            from aiohttp.web_runner import GracefulExit

            self.debug = debug
            self.initialize_logging()
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)

            def stop(signum: int) -> None:
                self.signalled = signum
                raise GracefulExit()

            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                loop.add_signal_handler(sig, stop, sig)
            web.run_app(self._make_app(), sock=self.sock, handle_signals=False,
                        loop=loop, print=lambda *a: None, shutdown_timeout=SHUTDOWN_GRACE)  # fmt: skip

    server = QuietServer(command, host=args.host, port=args.port, title="ipctop")
    server.sock = sock
    try:
        server.serve()
    except OSError as exc:
        raise IpctopError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}"
        ) from None
    finally:
        server.sock.close()
    if server.signalled is not None:
        raise Interrupted(server.signalled)
    return 0
