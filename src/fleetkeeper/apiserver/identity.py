"""The control plane's identity, kept in its store so that replicas sharing it are one plane.

A replica of ``fleetkeeper up`` (or ``fleetkeeper apiserver``) takes its CA, its serving
certificate and the admin token from Secrets in ``karmada-system``, and the API server
takes every agent token from there too (:mod:`fleetkeeper.apiserver.credentials`):

* ``fleetkeeper-ca`` (``kubernetes.io/tls``): the CA's certificate and key;
* ``fleetkeeper-apiserver-tls`` (``kubernetes.io/tls``): the serving certificate, valid
  for ``127.0.0.1``, ``::1``, ``localhost``, the stable name :data:`STABLE_NAME` and every
  address a replica asked for (``--advertise-address``, ``--tls-san``, its listen address);
* ``fleetkeeper-admin-token``: the admin's bearer token;
* ``fleetkeeper-agent-token-NAME``: the token of the Pull agent of cluster NAME.

Each is labelled :data:`CREDENTIAL_LABEL` (``ca``, ``serving``, ``admin`` or ``agent``).
The first replica creates them, create-if-absent: a replica that loses the race reads
what the winner wrote, so all end up with the same. A replica whose address the serving
certificate does not cover issues one for the union of both (an update that must match
the version it read, retried on a conflict) and serves it; the others keep serving the
one they loaded, which covers their own addresses. Only the admin may read these Secrets:
an agent's roles grant no Secret at all (:mod:`fleetkeeper.apiserver.agent_rbac`), and
an anonymous caller gets ``401``.

**An earlier single-replica state directory** (``pki/ca.crt`` and ``pki/ca.key``,
``tokens.json``) is adopted by the replica that creates the Secrets, so its kubeconfigs
and agent tokens stay valid; ``tokens.json`` is then removed, since the store is the
truth from there on. What a replica writes into its state directory — the CA certificate,
the serving pair, the kubeconfigs — is output, made again at every start.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from fleetkeeper import errors
from fleetkeeper.api.constants import KARMADA_SYSTEM_NAMESPACE
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.apiserver.auth import new_token
from fleetkeeper.apiserver.certs import KeyPair, certificate_hosts, issue_serving, new_ca, serving_fits
from fleetkeeper.clock import Clock
from fleetkeeper.store.interface import StoreProtocol

NAMESPACE = KARMADA_SYSTEM_NAMESPACE
SECRET = GroupKind("", "Secret")
CA_SECRET = "fleetkeeper-ca"
SERVING_SECRET = "fleetkeeper-apiserver-tls"
ADMIN_SECRET = "fleetkeeper-admin-token"
AGENT_SECRET_PREFIX = "fleetkeeper-agent-token-"
#: what a credential Secret holds: ``ca``, ``serving``, ``admin`` or ``agent``
CREDENTIAL_LABEL = "fleetkeeper.io/credential"
#: on an agent's token Secret: the cluster whose agent it is
CLUSTER_LABEL = "fleetkeeper.io/cluster"
#: a name in every serving certificate, whatever the replicas' addresses
STABLE_NAME = "fleetkeeper-apiserver"
#: at most this many addresses in the serving certificate (the newest asked for are kept)
MAX_HOSTS = 64
#: attempts at replacing the serving certificate while other replicas replace it too
SERVING_ATTEMPTS = 8


def plane_name(ca_cert: bytes) -> str:
    """The default name of this plane's kubeconfig context, cluster and user prefix: the same
    for every replica (one CA), different for another plane, so merged kubeconfigs keep both."""
    der = x509.load_pem_x509_certificate(ca_cert).public_bytes(serialization.Encoding.DER)
    return "fleetkeeper-" + hashlib.sha256(der).hexdigest()[:8]


def agent_secret_name(cluster: str) -> str:
    return AGENT_SECRET_PREFIX + cluster


def secret(name: str, data: dict[str, bytes], *, credential: str, kind: str = "Opaque",
           cluster: str | None = None) -> dict[str, Any]:
    """A credential Secret's wire form."""
    labels = {CREDENTIAL_LABEL: credential, **({CLUSTER_LABEL: cluster} if cluster else {})}
    return {"apiVersion": "v1", "kind": "Secret", "type": kind,
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
            "data": {key: base64.b64encode(value).decode() for key, value in data.items()}}


def agent_token_secret(cluster: str, token: str) -> dict[str, Any]:
    """The Secret holding the token of the Pull agent of ``cluster``."""
    return secret(agent_secret_name(cluster), {"token": token.encode()}, credential="agent", cluster=cluster)


def secret_value(obj: dict[str, Any], key: str) -> bytes | None:
    """One decoded value of a Secret (None when absent or not base64)."""
    data = obj.get("data")
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        return None


def _pair(obj: dict[str, Any] | None) -> KeyPair | None:
    if obj is None:
        return None
    cert, key = secret_value(obj, "tls.crt"), secret_value(obj, "tls.key")
    return KeyPair(cert, key) if cert and key else None


async def _get(store: StoreProtocol, name: str) -> dict[str, Any] | None:
    try:
        return await store.get(SECRET, NAMESPACE, name)
    except errors.NotFound:
        return None


async def ensure_secret(store: StoreProtocol, name: str, make: Callable[[], dict[str, Any]]
                        ) -> tuple[dict[str, Any], bool]:
    """The Secret ``name``, created from ``make()`` when absent; (it, whether this call created it).
    A concurrent creator wins the race and its Secret is returned."""
    found = await _get(store, name)
    if found is not None:
        return found, False
    try:
        return await store.create(make()), True
    except errors.AlreadyExists:
        again = await _get(store, name)
        if again is None:
            raise errors.Conflict(f"secret {NAMESPACE}/{name} was created and deleted meanwhile") from None
        return again, False


@dataclass(frozen=True)
class Identity:
    """What a replica serves with and writes into its kubeconfigs."""

    ca_cert: bytes
    serving: KeyPair
    admin_token: str

    @property
    def name(self) -> str:
        return plane_name(self.ca_cert)


def _local_seed(state_dir: Path | None) -> tuple[KeyPair | None, dict[str, Any]]:
    """What an earlier single-replica start left in ``state_dir``: its CA, its tokens file."""
    if state_dir is None:
        return None, {}
    cert, key = state_dir / "pki" / "ca.crt", state_dir / "pki" / "ca.key"
    ca = KeyPair(cert.read_bytes(), key.read_bytes()) if cert.is_file() and key.is_file() else None
    tokens = state_dir / "tokens.json"
    try:
        loaded = json.loads(tokens.read_text()) if tokens.is_file() else {}
    except (OSError, ValueError):
        loaded = {}
    return ca, loaded if isinstance(loaded, dict) else {}


async def load_identity(store: StoreProtocol, *, clock: Clock, hosts: Sequence[str],
                        state_dir: Path | None = None) -> Identity:
    """Create (first replica) or read (the others) the plane's identity; make sure the serving
    certificate covers ``hosts`` (see the module notes)."""
    seed_ca, seed_tokens = _local_seed(state_dir)

    def make_ca() -> dict[str, Any]:
        pair = seed_ca or new_ca(clock)
        return secret(CA_SECRET, {"tls.crt": pair.cert, "tls.key": pair.key}, credential="ca",
                      kind="kubernetes.io/tls")

    ca_obj, _ = await ensure_secret(store, CA_SECRET, make_ca)
    ca = _pair(ca_obj)
    if ca is None:
        raise ValueError(f"secret {NAMESPACE}/{CA_SECRET} holds no tls.crt and tls.key")
    seeded_admin = seed_tokens.get("admin")
    admin_obj, created = await ensure_secret(store, ADMIN_SECRET, lambda: secret(
        ADMIN_SECRET, {"token": (seeded_admin if isinstance(seeded_admin, str) else new_token()).encode()},
        credential="admin"))
    if created and state_dir is not None:
        await _adopt_agents(store, seed_tokens)
        (state_dir / "tokens.json").unlink(missing_ok=True)
    admin = secret_value(admin_obj, "token")
    if not admin:
        raise ValueError(f"secret {NAMESPACE}/{ADMIN_SECRET} holds no token")
    serving = await _serving(store, ca, [*hosts, STABLE_NAME], clock=clock)
    return Identity(ca.cert, serving, admin.decode())


async def _adopt_agents(store: StoreProtocol, seed: dict[str, Any]) -> None:
    agents = seed.get("agents")
    for cluster, token in (agents.items() if isinstance(agents, dict) else ()):
        if isinstance(cluster, str) and isinstance(token, str) and cluster and token:
            make = functools.partial(agent_token_secret, cluster, token)
            await ensure_secret(store, agent_secret_name(cluster), make)


async def _serving(store: StoreProtocol, ca: KeyPair, hosts: Sequence[str], *, clock: Clock) -> KeyPair:
    """The shared serving certificate, re-issued for the union of its addresses and ``hosts`` when
    it does not cover them (or is due for renewal, or was signed by another CA)."""
    for _ in range(SERVING_ATTEMPTS):
        current = await _get(store, SERVING_SECRET)
        pair = _pair(current)
        if pair is not None and serving_fits(pair, ca, hosts, clock=clock):
            return pair
        kept = certificate_hosts(pair.cert) if pair is not None else []
        wanted = list(dict.fromkeys([*hosts, *reversed(kept)]))[:MAX_HOSTS]
        fresh = issue_serving(ca, wanted, clock=clock)
        obj = secret(SERVING_SECRET, {"tls.crt": fresh.cert, "tls.key": fresh.key}, credential="serving",
                     kind="kubernetes.io/tls")
        try:
            if current is None:
                await store.create(obj)
            else:
                obj["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                await store.update(obj)
        except (errors.AlreadyExists, errors.Conflict, errors.NotFound):
            continue  # another replica replaced it meanwhile: look again
        return fresh
    raise errors.Conflict(f"secret {NAMESPACE}/{SERVING_SECRET} kept changing; start the replica again")


__all__ = [
    "ADMIN_SECRET", "AGENT_SECRET_PREFIX", "CA_SECRET", "CLUSTER_LABEL", "CREDENTIAL_LABEL", "NAMESPACE",
    "SECRET", "SERVING_SECRET", "STABLE_NAME", "Identity", "agent_secret_name", "agent_token_secret",
    "ensure_secret", "load_identity", "plane_name", "secret", "secret_value",
]
