"""The cluster proxy's connection to a ``kube://`` member: only ``kube://`` endpoints, the context's
credentials as headers, its cluster's ``proxy-url`` as the proxy, and a 503 naming the cluster when
the context cannot be used."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from fleetkeeper import errors
from fleetkeeper.cmd.kube_proxy import KubeconfigMembers


def _cluster(endpoint: str) -> dict[str, object]:
    return {"metadata": {"name": "member1"}, "spec": {"syncMode": "Push", "apiEndpoint": endpoint}}


def _kubeconfig(directory: Path, proxy: str) -> Path:
    path = directory / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "clusters": [{"name": "c", "cluster": {"server": "https://m.example:6443",
                                               "insecure-skip-tls-verify": True, "proxy-url": proxy}}],
        "users": [{"name": "u", "user": {"token": "t0k3n"}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}]}))
    return path


def test_a_kube_member_is_reached_through_its_clusters_proxy_url(tmp_path: Path) -> None:
    members = KubeconfigMembers()
    found = asyncio.run(members.connect(_cluster(f"kube://{_kubeconfig(tmp_path, 'http://127.0.0.1:3128')}#ctx")))
    assert found is not None and found.proxy is not None
    assert (found.url, str(found.proxy.url), found.headers) == (
        "https://m.example:6443", "http://127.0.0.1:3128", (("Authorization", "Bearer t0k3n"),))
    assert asyncio.run(members.connect(_cluster("https://m.example:6443"))) is None


def test_a_proxy_url_httpx_cannot_use_is_503_naming_the_cluster(tmp_path: Path) -> None:
    endpoint = f"kube://{_kubeconfig(tmp_path, 'ftp://127.0.0.1:21')}#ctx"
    with pytest.raises(errors.ServiceUnavailable, match=r'^cluster "member1": Unknown scheme for proxy URL'):
        asyncio.run(KubeconfigMembers().connect(_cluster(endpoint)))
