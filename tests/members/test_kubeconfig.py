"""A ``kube://`` member's kubeconfig: read within bounds; each context turned into what the cluster
proxy needs (a server, a TLS context, an ``Authorization`` header or the token file giving it, a
proxy) by lightkube's rules, credentials only a program gives refused saying why; and the cluster's
``proxy-url`` used by the plane's own connection to the member too."""

from __future__ import annotations

import asyncio
import base64
import ssl
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleetkeeper import errors
from fleetkeeper.apiserver.certs import issue_serving, new_ca
from fleetkeeper.clock import SystemClock
from fleetkeeper.members import open_member
from fleetkeeper.members.kubeconfig import MAX_KUBECONFIG_BYTES, MAX_TOKEN_BYTES, read_kubeconfig
from fleetkeeper.members.kubernetes import read_context
from fleetkeeper.members.kubernetes_http import Reach, reach


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _write(directory: Path) -> Path:
    ca = new_ca(SystemClock())
    client = issue_serving(ca, ["client"], clock=SystemClock())
    (directory / "token").write_text("from-a-file\n")
    users: dict[str, dict[str, Any]] = {
        "token": {"token": "t0k3n"},
        "file": {"tokenFile": "token"},
        "basic": {"username": "ann", "password": "secret"},
        "cert": {"client-certificate-data": _b64(client.cert), "client-key-data": _b64(client.key)},
        "provider": {"auth-provider": {"name": "oidc"}},
    }
    doc = {
        "clusters": [
            {"name": "ca", "cluster": {"server": "https://ca.example:6443/", "certificate-authority-data":
                                       _b64(ca.cert)}},
            {"name": "open", "cluster": {"server": "https://open.example", "insecure-skip-tls-verify": True,
                                         "proxy-url": "http://127.0.0.1:3128"}},
            {"name": "broken", "cluster": {"server": "https://b.example", "certificate-authority-data":
                                           _b64(b"not a certificate")}},
        ],
        "users": [{"name": name, "user": user} for name, user in users.items()],
        "contexts": [{"name": f"{user}@{cluster}", "context": {"cluster": cluster, "user": user}}
                     for user in users for cluster in ("ca", "open", "broken")],
        "current-context": "token@ca",
    }
    path = directory / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


def _reach(path: Path, context: str) -> Reach:
    return reach(*read_context(path, context))


def test_a_context_is_reached_as_lightkube_reads_it(tmp_path: Path) -> None:
    path = _write(tmp_path)
    verified = _reach(path, "token@ca")
    assert (verified.server, verified.header(), verified.proxy_url) == ("https://ca.example:6443",
                                                                        "Bearer t0k3n", None)
    assert verified.tls.verify_mode == ssl.CERT_REQUIRED and verified.tls.check_hostname
    assert len(verified.tls.get_ca_certs()) == 1  # the context's CA only
    skipped = _reach(path, "basic@open")
    assert skipped.tls.verify_mode == ssl.CERT_NONE and skipped.proxy_url == "http://127.0.0.1:3128"
    assert skipped.header() == "Basic " + _b64(b"ann:secret")
    assert _reach(path, "cert@ca").header() is None  # the client certificate is in the TLS context


def test_a_token_file_is_read_at_each_use(tmp_path: Path) -> None:
    by_file = _reach(_write(tmp_path), "file@ca")
    assert by_file.token_file == tmp_path / "token" and by_file.header() == "Bearer from-a-file"
    (tmp_path / "token").write_text("rotated")
    assert by_file.header() == "Bearer rotated"
    (tmp_path / "token").write_bytes(b"x" * (MAX_TOKEN_BYTES + 1))
    with pytest.raises(ValueError, match="is larger than"):
        by_file.header()


@pytest.mark.parametrize(("context", "why"), [
    ("provider@ca", "gets its credentials from an auth-provider, which the cluster proxy does not run"),
    ("token@broken", "its certificates cannot be used"),
])
def test_a_context_the_proxy_cannot_use_says_why(tmp_path: Path, context: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        _reach(_write(tmp_path), context)


@pytest.mark.parametrize(("content", "why"), [
    (b"- a list", "not a mapping"),
    (b"clusters: [", "not YAML"),
    (b"#" * (MAX_KUBECONFIG_BYTES + 1), f"is larger than {MAX_KUBECONFIG_BYTES} bytes"),
])
def test_a_kubeconfig_is_read_within_bounds(tmp_path: Path, content: bytes, why: str) -> None:
    path = tmp_path / "kubeconfig"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=why):
        read_kubeconfig(path)
    with pytest.raises(ValueError, match="not found"):
        read_kubeconfig(tmp_path / "missing")


def test_the_planes_member_goes_through_its_clusters_proxy_url(tmp_path: Path) -> None:
    """The plane's own connection to a ``kube://`` member asks the context's proxy to reach the
    server (a recording proxy: it reads the request line and hangs up)."""
    asked: list[bytes] = []

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        asked.append(await reader.readline())
        writer.close()

    async def main() -> None:
        server = await asyncio.start_server(proxy, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        path = tmp_path / "kubeconfig"
        path.write_text(yaml.safe_dump({
            "clusters": [{"name": "c", "cluster": {"server": "https://member.example:6443",
                                                   "proxy-url": f"http://127.0.0.1:{port}"}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}]}))
        member = open_member(f"kube://{path}#ctx", clock=SystemClock())
        try:
            with pytest.raises(errors.MemberUnreachable):
                await member.probe("/readyz")
        finally:
            await member.close()
            server.close()

    asyncio.run(main())
    assert asked == [b"CONNECT member.example:6443 HTTP/1.1\r\n"]
