"""The API server's side of ``fleetkeeper up`` and ``fleetkeeper apiserver``.

What a serving process takes from the store — the plane's CA, serving certificate, admin
token and agent tokens (:mod:`fleetkeeper.apiserver.identity`), shared by every replica —
and writes into its state directory (the certificates it loads, the kubeconfigs); and the
readiness check that keeps ``/readyz`` failing until the rest of the control plane is up. The commands
themselves are in :mod:`fleetkeeper.cmd.up`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fleetkeeper.api import constants
from fleetkeeper.apiserver import ApiServerApp, TLSFiles, health, write_kubeconfig
from fleetkeeper.apiserver.certs import write_tls
from fleetkeeper.apiserver.credentials import StoreTokens
from fleetkeeper.apiserver.identity import load_identity
from fleetkeeper.apiserver.state import ServerState
from fleetkeeper.cli import paths
from fleetkeeper.clock import Clock
from fleetkeeper.store.interface import StoreProtocol


class GatedApp(ApiServerApp):
    """The API server, whose ``/readyz`` also waits for the rest of the control plane: its
    ``control-plane`` check fails, saying what it waits for, until :attr:`pending` is empty."""

    def __init__(self, state: ServerState) -> None:
        super().__init__(state)
        #: what readiness still waits for ("" once ready)
        self.pending = "starting"
        self.ready_checks.append(health.Check("control-plane", self._waiting))

    async def _waiting(self, state: ServerState) -> str | None:
        return f"waiting: {self.pending}" if self.pending else None


@dataclass(frozen=True)
class ServerFiles:
    """What an API server serves with (the plane's identity, from the store) and writes into its
    state directory: the CA certificate and serving pair it loads, and the kubeconfigs."""

    directory: Path
    tls: TLSFiles
    tokens: StoreTokens
    #: the default name of the kubeconfig context and cluster (the plane's)
    name: str

    @property
    def kubeconfig(self) -> Path:
        return self.directory / paths.KUBECONFIG_FILE

    def write_admin_kubeconfig(self, url: str) -> Path:
        return write_kubeconfig(self.kubeconfig, url, self.tls.ca_pem(), self.tokens.admin, name=self.name,
                                user=f"{self.name}-admin")

    def write_agent_kubeconfig(self, cluster: str, url: str, token: str) -> Path:
        return write_kubeconfig(self.directory / paths.agent_kubeconfig_name(cluster), url, self.tls.ca_pem(),
                                token, name=self.name, namespace=constants.LEASE_NAMESPACE,
                                user=f"{self.name}-agent-{cluster}")


def serving_hosts(host: str, advertise: str, tls_sans: Sequence[str]) -> list[str]:
    """What the serving certificate must cover for this replica: the address it listens on (unless
    a wildcard), the address it advertises and the extra names asked for."""
    listen = [] if host in ("", "0.0.0.0", "::") else [host]
    return list(dict.fromkeys([*listen, advertise, *tls_sans]))


async def server_files(store: StoreProtocol, directory: Path, *, hosts: Sequence[str],
                       clock: Clock, name: str | None = None) -> ServerFiles:
    """Take the plane's identity from the store (the first replica creates it), write what this
    replica serves with into ``directory`` and start following the tokens; ``name`` names the
    kubeconfigs' context and cluster (default: the plane's name)."""
    plane = await load_identity(store, clock=clock, hosts=hosts, state_dir=directory)
    tls = write_tls(directory / paths.PKI_DIR, plane.ca_cert, plane.serving)
    tokens = StoreTokens(store, admin=plane.admin_token, clock=clock)
    await tokens.start()
    return ServerFiles(directory, tls, tokens, name or plane.name)


__all__ = ["GatedApp", "ServerFiles", "server_files", "serving_hosts"]
