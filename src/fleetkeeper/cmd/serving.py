"""The API server's side of ``fleetkeeper up`` and ``fleetkeeper apiserver``.

What a serving process keeps in its state directory — the PKI and the tokens, re-read
when ``fleetkeeper token create-agent`` or ``token revoke`` changes them — and the readiness gate that
keeps ``/readyz`` at 503 until the rest of the control plane is up. The commands
themselves are in :mod:`fleetkeeper.cmd.up`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import structlog
from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from fleetkeeper.apiserver import ApiServerApp, TLSFiles, Tokens, auth, ensure_certificates, write_kubeconfig
from fleetkeeper.apiserver.state import ServerState
from fleetkeeper.cli import paths
from fleetkeeper.clock import Clock

_log = structlog.get_logger("fleetkeeper.apiserver")


class GatedApp(ApiServerApp):
    """The API server, whose ``/readyz`` also waits for the rest of the control plane."""

    def __init__(self, state: ServerState) -> None:
        super().__init__(state)
        #: what readiness still waits for ("" once ready)
        self.pending = "starting"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.pending and scope["type"] == "http" and scope["path"].rstrip("/") == "/readyz":
            await PlainTextResponse(f"not ready: {self.pending}\n", status_code=503)(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


class ReloadingTokens(Tokens):
    """The server's tokens, kept in step with their file: an agent token minted by ``fleetkeeper
    token create-agent`` works, and one revoked by ``fleetkeeper token revoke``, from the next
    request on (the file's modification time is looked at on every authentication). A token
    revoked by the server itself (its Cluster deleted) is removed from the file too."""

    def __init__(self, path: Path, clock: Clock) -> None:
        loaded = Tokens.load_or_create(path)
        super().__init__(admin=loaded.admin, agents=loaded.agents)
        self.path = path
        self._clock = clock
        self._stamp = self._mtime()

    def _mtime(self) -> int:
        try:
            return self.path.stat().st_mtime_ns
        except OSError:
            return 0

    def _reload(self) -> None:
        stamp = self._mtime()
        if stamp == self._stamp or stamp == 0:
            return
        fresh = Tokens.load(self.path)
        self.admin = fresh.admin
        for cluster in set(self.agents) - set(fresh.agents):
            super().revoke_agent(cluster)
        for cluster, token in fresh.agents.items():
            self.add_agent(cluster, token)
        self._stamp = stamp

    def revoke_agent(self, cluster: str) -> None:
        self._reload()
        if cluster not in self.agents:
            return
        super().revoke_agent(cluster)
        fresh = Tokens.load(self.path)
        fresh.revoke_agent(cluster)
        fresh.save(self.path)
        self._stamp = self._mtime()
        _log.info("agent token revoked", cluster=cluster)

    def authenticate(self, authorization: str | None) -> auth.User:
        self._reload()
        return super().authenticate(authorization)


@dataclass(frozen=True)
class ServerFiles:
    """What an API server keeps in its state directory."""

    directory: Path
    tls: TLSFiles
    tokens: ReloadingTokens

    @property
    def kubeconfig(self) -> Path:
        return self.directory / paths.KUBECONFIG_FILE

    def write_admin_kubeconfig(self, url: str) -> Path:
        return write_kubeconfig(self.kubeconfig, url, self.tls.ca_pem(), self.tokens.admin)


def server_files(directory: Path, *, host: str, clock: Clock) -> ServerFiles:
    """Create (first start) or reuse the PKI and tokens in ``directory``."""
    tls = ensure_certificates(directory / paths.PKI_DIR, clock=clock, hosts=(host,))
    tokens = ReloadingTokens(directory / paths.TOKENS_FILE, clock)
    return ServerFiles(directory, tls, tokens)


__all__ = ["GatedApp", "ReloadingTokens", "ServerFiles", "server_files"]
