"""The HAProxy provider: an HAProxy process driven through its runtime API.

For users who run HAProxy (Debian ``haproxy``, 2.6 or newer). The provider owns one
HAProxy process with an admin socket in its work directory. Each route table is split
by :mod:`~fleetkeeper.traffic.haproxy_config` into a layout and server states:

* a new **layout** (routes or clusters changed) writes ``haproxy.cfg`` and starts
  HAProxy — the first time plainly, later as a seamless reload: the new process gets the
  listening socket from the old one (``-x`` over the admin socket) and tells it to finish
  (``-sf``), so no connection is refused meanwhile;
* changed **server states** — a cluster blocked or unblocked, a backend address moved —
  are runtime API commands on the running process: ``set server … state maint`` /
  ``ready`` and ``set server … addr``. No reload: :attr:`HAProxyProvider.reloads` counts
  the reloads, and the tests hold it still while clusters are blocked and restored.

``apply`` returns after HAProxy acknowledged every command, so a request sent after it
returns never reaches a blocked server. Stopping the provider stops HAProxy (SIGUSR1,
the graceful stop; SIGKILL if it lingers).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from pathlib import Path

import structlog

from fleetkeeper.traffic import haproxy_config as config
from fleetkeeper.traffic.routes import RouteTable

CONFIG_FILE = "haproxy.cfg"
ADMIN_SOCKET = "admin.sock"
LOG_FILE = "haproxy.log"
#: how long HAProxy may take to start, answer a command, or stop
STARTUP_TIMEOUT = 10.0
COMMAND_TIMEOUT = 5.0
_log = structlog.get_logger("fleetkeeper.traffic.haproxy")


class HAProxyError(Exception):
    """HAProxy refused a configuration or a command, or did not start."""


class HAProxyProvider:
    """Routes through an HAProxy process (see the module notes)."""

    name = "traffic-haproxy"

    def __init__(self, host: str, port: int, *, workdir: Path, binary: str = "haproxy") -> None:
        if port <= 0:
            raise ValueError("the HAProxy provider needs a fixed listening port")
        self._bind = f"{host}:{port}"
        self.workdir = workdir
        self._binary = binary
        self._process: asyncio.subprocess.Process | None = None
        self._layout: tuple[config.BackendLayout, ...] | None = None
        self._states: config.States = {}
        self._lock = asyncio.Lock()
        self._ready = asyncio.Event()
        self._reaping: set[asyncio.Task[None]] = set()
        #: configuration reloads after the first start
        self.reloads = 0

    @property
    def admin_socket(self) -> Path:
        return self.workdir / ADMIN_SOCKET

    @property
    def _log_path(self) -> Path:
        return self.workdir / LOG_FILE

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def wait_ready(self) -> None:
        await self._ready.wait()

    async def run(self) -> None:
        """Keep HAProxy until cancelled (``apply`` starts it), then stop it."""
        try:
            await asyncio.Event().wait()
        finally:
            await self._stop(self._process)

    async def apply(self, table: RouteTable) -> None:
        async with self._lock:
            layout, states = config.layout(table), config.states(table)
            if layout != self._layout or self._process is None or self._process.returncode is not None:
                await self._start(table)
                self._layout, self._states = layout, states
                return
            for command in config.commands(self._states, states):
                await self.command(command)
            self._states = states

    async def command(self, text: str) -> str:
        """Send one runtime API command; its answer (``HAProxyError`` when refused)."""
        async with asyncio.timeout(COMMAND_TIMEOUT):
            reader, writer = await asyncio.open_unix_connection(str(self.admin_socket))
            try:
                writer.write(text.encode() + b"\n")
                await writer.drain()
                answer = (await reader.read()).decode(errors="replace").strip()
            finally:
                writer.close()
                with contextlib.suppress(ConnectionError):
                    await writer.wait_closed()
        if answer.startswith(("No such", "Unknown command", "Require", "Invalid")):
            raise HAProxyError(f"haproxy refused {text!r}: {answer}")
        return answer

    # ------------------------------------------------------------------ process
    async def _start(self, table: RouteTable) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        path = self.workdir / CONFIG_FILE
        path.write_text(config.render(table, bind=self._bind, admin_socket=str(self.admin_socket)))
        await self._check(path)
        previous = self._process if self._process is not None and self._process.returncode is None else None
        args = ["-db", "-f", str(path)]
        if previous is not None:
            args += ["-x", str(self.admin_socket), "-sf", str(previous.pid)]
        with self._log_path.open("ab") as log:
            process = await asyncio.create_subprocess_exec(
                self._binary, *args, stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log)
        try:
            await self._await_pid(process)
        except BaseException:
            await self._stop(process)
            raise
        self._process = process
        if previous is not None:
            self.reloads += 1
            reaping = asyncio.get_running_loop().create_task(self._reap(previous))
            self._reaping.add(reaping)
            reaping.add_done_callback(self._reaping.discard)
        self._ready.set()
        _log.info("haproxy serving", pid=process.pid, bind=self._bind, reloads=self.reloads)

    async def _check(self, path: Path) -> None:
        checker = await asyncio.create_subprocess_exec(self._binary, "-c", "-q", "-f", str(path),
                                                       stdout=asyncio.subprocess.PIPE,
                                                       stderr=asyncio.subprocess.STDOUT)
        output, _ = await checker.communicate()
        if checker.returncode != 0:
            raise HAProxyError(f"haproxy rejected {path}: {output.decode(errors='replace').strip()}")

    async def _await_pid(self, process: asyncio.subprocess.Process) -> None:
        """Wait until the admin socket is answered by ``process`` itself."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STARTUP_TIMEOUT
        while loop.time() < deadline:
            if process.returncode is not None:
                raise HAProxyError(f"haproxy exited with {process.returncode} (see {self._log_path})")
            with contextlib.suppress(OSError, HAProxyError, TimeoutError):
                info = await self.command("show info")
                if f"\nPid: {process.pid}\n" in f"\n{info}\n":
                    return
            await asyncio.sleep(0.05)
        raise HAProxyError(f"haproxy did not start within {STARTUP_TIMEOUT:g}s (see {self._log_path})")

    async def _reap(self, process: asyncio.subprocess.Process) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(60):
                await process.wait()

    async def _stop(self, process: asyncio.subprocess.Process | None) -> None:
        self._ready.clear()
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGUSR1)
        try:
            async with asyncio.timeout(STARTUP_TIMEOUT):
                await process.wait()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()


__all__ = ["ADMIN_SOCKET", "CONFIG_FILE", "HAProxyError", "HAProxyProvider"]
