"""This API server as a member cluster's: Kubernetes' kinds only, as a kube-apiserver serves them.

:func:`~fleetkeeper.apiserver.member_app.build_member_app` serves a member's store (a simulated
member's, say) the way the plane's store is served — the same verbs, watch, apply, tables,
field selectors, discovery and OpenAPI — with what differs on a member cluster:

* **Kubernetes' kinds only** (:func:`member_scheme`): none of Karmada's groups nor the
  plane's own (``fleetkeeper.io``) is served, so discovery, OpenAPI and the routes show none
  of them; there is no cluster proxy. A ``CustomResourceDefinition`` the member is given is
  stored, and its kind served (:mod:`~fleetkeeper.apiserver.crds`) in the member's own scheme,
  with classes of its own (:class:`~fleetkeeper.api.crd.CustomKinds`): what a member served
  beside the plane defines or drops changes nothing the plane or another member serves;
* **Namespaces**: the member starts with Kubernetes' own (``default``, ``kube-system``,
  ``kube-public``, ``kube-node-lease``), made when missing before the first answer;
* **one identity**: the member's bearer token is its admin (``system:masters``), and no
  other token is accepted. Roles and bindings given to the member are stored but not
  enforced — the plane's default roles and signing key are not written into a member's store;
* **its containers** (:class:`~fleetkeeper.apiserver.pods.ContainerRuntime`): ``pods/NAME/log``
  (:mod:`~fleetkeeper.apiserver.podlogs`), ``exec`` and ``attach``
  (:mod:`~fleetkeeper.apiserver.podexec`);
* **its version** (``/version``) and **its health**: checks the member adds to ``/healthz``,
  ``/livez`` and ``/readyz``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from fleetkeeper.api import constants, kuberesources
from fleetkeeper.api.crd import custom_kind
from fleetkeeper.api.scheme import SCHEME, ResourceInfo, Scheme
from fleetkeeper.apiserver.health import Check
from fleetkeeper.apiserver.pods import SUBRESOURCES, ContainerRuntime
from fleetkeeper.apiserver.request import Target
from fleetkeeper.apiserver.state import ServerConfig

#: the namespaces a member cluster starts with
NAMESPACES = (constants.DEFAULT_NAMESPACE, "kube-system", "kube-public", "kube-node-lease")
#: the groups of the plane's own kinds, which a member does not serve (``*.karmada.io`` too)
PLANE_GROUPS = frozenset({"fleetkeeper.io"})


def is_plane_kind(info: ResourceInfo) -> bool:
    """Whether a kind is Karmada's or the plane's, not Kubernetes'."""
    return info.group in PLANE_GROUPS or info.group == "karmada.io" or info.group.endswith(".karmada.io")


def member_scheme(scheme: Scheme = SCHEME) -> Scheme:
    """A new scheme of what a Kubernetes API server serves (:mod:`~fleetkeeper.api.kuberesources`),
    with the models ``scheme`` has for them first (their versions are the ones stored), and any
    other Kubernetes kind ``scheme`` serves (not Karmada's, not the kinds its CRDs define)."""
    member = Scheme()
    for info in scheme.infos():
        if not is_plane_kind(info) and custom_kind(info.group_kind) is None:
            member.add(info.model)
    for model in kuberesources.models():
        served = member.lookup(model.API_VERSION, model.KIND)
        if served is None or served.api_version != model.API_VERSION:  # lookup answers another version too
            member.add(model)
    return member


def version_info(git_version: str) -> dict[str, str]:
    """``GET /version`` of a member reporting ``git_version`` (``v1.31.0``)."""
    major, _, rest = git_version.lstrip("v").partition(".")
    minor = rest.partition(".")[0]
    return {"major": major, "minor": minor, "gitVersion": git_version, "gitCommit": "",
            "gitTreeState": "clean", "buildDate": "", "goVersion": "", "compiler": "cpython",
            "platform": "linux/amd64"}


@dataclass(frozen=True)
class MemberApi:
    """What a member's API server serves beyond its store (see the module notes)."""

    runtime: ContainerRuntime
    #: the version ``/version`` reports
    kubernetes_version: str = "v1.31.0"
    #: checks added to ``/healthz``, ``/livez`` and ``/readyz`` (a member made unhealthy fails them)
    health: tuple[Check, ...] = ()

    def version(self) -> dict[str, Any]:
        return version_info(self.kubernetes_version)


def pod_target(scheme: Scheme, version: str, rest: str) -> Target | None:
    """The target of ``/api/{version}/namespaces/NS/pods/NAME/{log|exec|attach}`` (None for any
    other path)."""
    segments = rest.split("/")
    if len(segments) != 5 or segments[0] != "namespaces" or segments[2] != "pods" \
            or segments[4] not in SUBRESOURCES or not segments[1] or not segments[3]:
        return None
    info = scheme.by_plural("", version, "pods")
    return Target(info, segments[1], segments[3], segments[4]) if info is not None else None


def member_config(config: ServerConfig | None = None, *,
                  namespaces: Sequence[str] = NAMESPACES) -> ServerConfig:
    """``config`` for a member: its namespaces made at start, RBAC not followed."""
    return replace(config or ServerConfig(), bootstrap_namespaces=tuple(namespaces), follow_rbac=False)


__all__ = ["NAMESPACES", "PLANE_GROUPS", "MemberApi", "is_plane_kind", "member_config", "member_scheme",
           "pod_target", "version_info"]
