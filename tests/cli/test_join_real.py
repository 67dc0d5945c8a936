"""`fleetkeeper join NAME --cluster-kubeconfig FILE`: a real member's credentials become the
cluster's Secret (Karmada's keys), and the control plane reads them back through secretRef."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from pathlib import Path

import yaml

from fleetkeeper import errors
from fleetkeeper.api.builtin import Secret
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.core import Namespace
from fleetkeeper.cmd.member_pool import ClusterCredentials

from .test_commands import Cli
from .test_commands import cli as cli  # the real-server fixture, shared

CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def member_kubeconfig(
    path: Path, *, server: str = "https://127.0.0.1:7443", token: str | None = "m-token"
) -> Path:
    user = {"token": token} if token else {}
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "edge",
                "clusters": [
                    {
                        "name": "edge",
                        "cluster": {
                            "server": server,
                            "certificate-authority-data": base64.b64encode(CA).decode(),
                        },
                    }
                ],
                "users": [{"name": "edge", "user": user}],
                "contexts": [{"name": "edge", "context": {"cluster": "edge", "user": "edge"}}],
            }
        )
    )
    return path


def test_join_with_a_member_kubeconfig_stores_its_credentials(cli: Cli, tmp_path: Path) -> None:
    out = cli.ok("join", "edge-real", "--cluster-kubeconfig", str(member_kubeconfig(tmp_path / "m.yaml")))
    assert "cluster/edge-real joined (Push, https://127.0.0.1:7443)" in out

    async def check() -> None:
        client = cli.client()
        try:
            cluster = await client.get(Cluster, "edge-real")
            assert cluster.spec.api_endpoint == "https://127.0.0.1:7443"
            assert cluster.spec.secret_ref is not None
            assert (cluster.spec.secret_ref.namespace, cluster.spec.secret_ref.name) == (
                "karmada-cluster",
                "edge-real",
            )
            secret = await client.get(Secret, "edge-real", "karmada-cluster")
            data = secret.to_dict()["data"]
            assert base64.b64decode(data["token"]) == b"m-token" and base64.b64decode(data["caBundle"]) == CA
            reader = ClusterCredentials()
            reader.client = client
            creds = await reader("edge-real")
            assert creds.token == "m-token" and creds.ca_bundle == CA
        finally:
            await client.aclose()

    asyncio.run(check())


def test_a_member_kubeconfig_without_a_token_or_https_is_refused(cli: Cli, tmp_path: Path) -> None:
    no_token = cli.run(
        "join", "edge-x", "--cluster-kubeconfig", str(member_kubeconfig(tmp_path / "a.yaml", token=None))
    )
    assert no_token.exit_code == 2 and "no bearer token" in no_token.output
    plain = cli.run(
        "join",
        "edge-y",
        "--cluster-kubeconfig",
        str(member_kubeconfig(tmp_path / "b.yaml", server="http://127.0.0.1:8080")),
    )
    assert plain.exit_code == 2 and "must be https://" in plain.output
    both = cli.run(
        "join", "edge-z", "--member", "simulated://edge-z", "--cluster-kubeconfig", str(tmp_path / "a.yaml")
    )
    assert both.exit_code == 2 and "either --member or --cluster-kubeconfig" in both.output


def test_join_creates_the_credentials_namespace_when_it_is_gone(cli: Cli, tmp_path: Path) -> None:
    async def drop() -> None:  # deleted, and finalized as the namespace cleanup would (none runs here)
        async with cli.client() as client:
            with contextlib.suppress(errors.NotFound):
                await client.delete(Namespace, "karmada-cluster")
                held = await client.get(Namespace, "karmada-cluster")
                held.spec.finalizers = []
                await client.finalize(held)

    asyncio.run(drop())
    cli.ok("join", "edge-again", "--cluster-kubeconfig", str(member_kubeconfig(tmp_path / "m.yaml")))

    async def check() -> None:
        async with cli.client() as client:
            assert (await client.get(Namespace, "karmada-cluster")).name == "karmada-cluster"
            assert (await client.get(Secret, "edge-again", "karmada-cluster")).name == "edge-again"

    asyncio.run(check())
