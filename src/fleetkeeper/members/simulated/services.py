"""Services as kube-apiserver stores them: its defaults, and cluster IPs from the service range.

kube-apiserver fills in what a Service leaves out before storing it, and a member does the
same on every apply (a Work's manifest, its API server's writes), so kubectl, the cluster DNS
and the plane read back what a real cluster shows:

* ``type: ClusterIP``, ``sessionAffinity: None`` (``ClientIP`` gets its 3-hour timeout), each
  port's ``protocol: TCP`` and ``targetPort`` (the port itself);
* for every type but ExternalName: ``internalTrafficPolicy: Cluster``, ``ipFamilies: [IPv4]``,
  ``ipFamilyPolicy: SingleStack`` (``RequireDualStack`` for a headless Service without a
  selector) and an address of the member's service range as ``clusterIP`` and ``clusterIPs``
  (``None`` stays: a headless Service gets none); NodePort and LoadBalancer Services also get
  ``externalTrafficPolicy: Cluster``, LoadBalancer ones ``allocateLoadBalancerNodePorts: true``.

Addresses (:class:`ServiceRange`, ``10.96.0.0/16`` as in kind and kubeadm): the network and
broadcast addresses and the first one (the ``kubernetes`` Service's ``10.96.0.1``) are never
handed out. As kube-apiserver does, an address is taken from the upper part of the range first,
leaving the lowest 1/16 (16 to 256 addresses) to Services that ask for one (kube-dns's
``10.96.0.10``); within a part the next free address after the last one given, so the same
applies give the same addresses. An address asked for must be in the range and free (``422``
naming ``spec.clusterIPs``); a full range is kube-apiserver's ``500`` *failed to allocate a
serviceIP: range is full*. An address comes back when its Service is deleted or becomes an
ExternalName Service. An update keeps the address: left out, it is carried over from the stored
Service; another one is refused (it may not change once set).
"""

from __future__ import annotations

import ipaddress
from typing import Any, Final

from fleetkeeper import errors
from fleetkeeper.api.validation import FieldErrors
from fleetkeeper.members.simulated.objects import Change, Obj

#: the service range of a member unless told otherwise (kind's and kubeadm's)
SERVICE_CIDR: Final = "10.96.0.0/16"
TYPES: Final = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
#: the fields that go with a cluster IP (none of them is set on an ExternalName Service)
_ADDRESSED: Final = ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy")
NONE: Final = "None"
#: ``sessionAffinityConfig.clientIP.timeoutSeconds`` of a ``ClientIP`` Service (three hours)
CLIENT_IP_TIMEOUT: Final = 10_800


class ServiceRange:
    """The cluster IPs of one member: which are taken, which comes next (see the module notes)."""

    def __init__(self, cidr: str = SERVICE_CIDR) -> None:
        network = ipaddress.IPv4Network(cidr)
        self.cidr = str(network)
        self._network = int(network.network_address)
        size = self._size = network.num_addresses
        # kube-apiserver keeps the lowest 1/16 (16 to 256 addresses) for addresses asked for
        reserved = 0 if size < 16 else min(max(size // 16, 16), 256)
        #: offsets handed out in this order: the upper part, then the lower (never .0, .1, broadcast)
        self._order = [*range(max(reserved, 2), size - 1), *range(2, min(reserved, size - 1))]
        self._position = {offset: index for index, offset in enumerate(self._order)}
        self._used: set[int] = set()
        self._cursor = 0

    @property
    def free(self) -> int:
        return len(self._order) - len(self._used)

    def take(self) -> str:
        """The next free address (``500`` when the range is full)."""
        if not self.free:
            raise errors.InternalError(
                "Internal error occurred: failed to allocate a serviceIP: range is full")
        count = len(self._order)
        for step in range(count):
            offset = self._order[(self._cursor + step) % count]
            if offset not in self._used:
                self._used.add(offset)
                self._cursor = (self._cursor + step + 1) % count
                return str(ipaddress.IPv4Address(self._network + offset))
        raise AssertionError("a free address was counted but not found")

    def claim(self, address: str) -> str | None:
        """Take ``address`` as asked for: None, or why it cannot be taken."""
        offset = self._offset(address)
        if offset is None or offset in (0, self._size - 1):
            return (f"the provided IP ({address}) is not in the valid range. "
                    f"The range of valid IPs is {self.cidr}")
        if offset in self._used or offset not in self._position:  # .1 is the kubernetes Service's
            return "provided IP is already allocated"
        self._used.add(offset)
        return None

    def give(self, address: str) -> None:
        """``address`` is free again (anything not taken from this range is ignored)."""
        offset = self._offset(address)
        if offset is not None:
            self._used.discard(offset)

    def _offset(self, address: str) -> int | None:
        try:
            offset = int(ipaddress.IPv4Address(address)) - self._network
        except ValueError:
            return None
        return offset if 0 <= offset < self._size else None

    # -- the store's hooks -------------------------------------------------------------------
    def default(self, live: Obj | None, obj: Obj) -> Obj:
        """``obj`` (an applied Service, ``live`` its stored version) as kube-apiserver stores it;
        other kinds as they are."""
        if obj.get("kind") != "Service" or obj.get("apiVersion") != "v1":
            return obj
        spec = obj.get("spec")
        if spec is not None and not isinstance(spec, dict):
            return obj  # not a Service spec: left to what reads it, as other kinds' are
        name = str((obj.get("metadata") or {}).get("name") or "")
        spec = _defaulted(dict(spec or {}), name=name)
        old_spec = (live or {}).get("spec") or {}
        if spec["type"] == "ExternalName":
            spec = _external(spec, old_spec, name=name)
            address = _addressed(live)
            if address:
                self.give(address)
        else:
            held = old_spec.get("clusterIP") if old_spec.get("type") != "ExternalName" else None
            self._address(spec, held if isinstance(held, str) and held else None, name=name)
        return {**obj, "spec": spec}

    def on_change(self, change: Change) -> None:
        """A deleted Service's address is free again."""
        if change.deleted and change.key.kind == "Service" and change.key.group == "":
            address = _addressed(change.old)
            if address:
                self.give(address)

    def _address(self, spec: dict[str, Any], old: str | None, *, name: str) -> None:
        """Set ``clusterIP``/``clusterIPs`` and the families: the stored one (``old``, which may be
        ``None``), the one asked for, or the next free address."""
        ips = spec.get("clusterIPs")
        asked = spec.get("clusterIP") or (ips[0] if isinstance(ips, list) and ips else None)
        errs = FieldErrors()
        if asked is not None and not isinstance(asked, str):
            errs.wrong_type("spec.clusterIP", asked, "a string")
            errs.raise_if_any(kind="Service", name=name)
        if old is not None and asked not in (None, "", old):
            errs.invalid("spec.clusterIPs[0]", asked[:64], "may not change once set")
        elif asked not in (None, "", NONE, old):
            assert isinstance(asked, str)
            problem = self._check(asked) or self.claim(asked)
            if problem is not None:
                errs.invalid("spec.clusterIPs", asked[:64], f"failed to allocate IP {asked[:64]}: {problem}")
        errs.raise_if_any(kind="Service", name=name)
        address = old or asked or self.take()
        spec["clusterIP"], spec["clusterIPs"] = address, [address]
        _default(spec, "ipFamilies", ["IPv4"])
        headless_without_selector = address == NONE and not spec.get("selector")
        _default(spec, "ipFamilyPolicy", "RequireDualStack" if headless_without_selector else "SingleStack")

    @staticmethod
    def _check(address: str) -> str | None:
        try:
            ipaddress.ip_address(address)
        except ValueError:
            return "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
        return None


def _addressed(obj: Obj | None) -> str | None:
    """The address a stored Service holds (None for none, headless or ExternalName)."""
    spec = (obj or {}).get("spec") or {}
    address = spec.get("clusterIP") if spec.get("type") != "ExternalName" else None
    return address if isinstance(address, str) and address not in ("", NONE) else None


def _default(fields: dict[str, Any], key: str, value: Any) -> Any:
    """``fields[key]``, set to ``value`` when absent, null or empty (as Go's zero values are defaulted)."""
    if fields.get(key) in (None, "", []):
        fields[key] = value
    return fields[key]


def _defaulted(spec: dict[str, Any], *, name: str) -> dict[str, Any]:
    """The defaults every type gets, and those of its type (see the module notes)."""
    kind = _default(spec, "type", "ClusterIP")
    if kind not in TYPES:
        errs = FieldErrors()
        errs.not_supported("spec.type", str(kind)[:64], TYPES)
        errs.raise_if_any(kind="Service", name=name)
    _default(spec, "sessionAffinity", "None")
    if spec["sessionAffinity"] == "ClientIP" and not spec.get("sessionAffinityConfig"):
        spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": CLIENT_IP_TIMEOUT}}
    ports = spec.get("ports")
    if isinstance(ports, list):
        spec["ports"] = [_port(port) for port in ports]
    if kind != "ExternalName":
        _default(spec, "internalTrafficPolicy", "Cluster")
    if kind in ("NodePort", "LoadBalancer"):
        _default(spec, "externalTrafficPolicy", "Cluster")
    if kind == "LoadBalancer":
        _default(spec, "allocateLoadBalancerNodePorts", True)
    return spec


def _port(port: Any) -> Any:
    if not isinstance(port, dict):
        return port
    out = {**port}
    _default(out, "protocol", "TCP")
    if out.get("targetPort") in (None, 0, "") and isinstance(out.get("port"), int):
        out["targetPort"] = out["port"]
    return out


def _external(spec: dict[str, Any], old: dict[str, Any], *, name: str) -> dict[str, Any]:
    """An ExternalName Service: what an earlier type left unchanged is dropped, anything else set refused."""
    refused: list[str] = []
    for field in _ADDRESSED:
        value = spec.get(field)
        if value in (None, "", []):
            spec.pop(field, None)
        elif old.get("type") not in (None, "ExternalName") and value == old.get(field):
            spec.pop(field)
        else:  # a clusterIP is refused as the clusterIPs it stands for
            path = "spec.clusterIPs" if field == "clusterIP" else f"spec.{field}"
            refused += [path] if path not in refused else []
    errs = FieldErrors()
    for path in refused:
        errs.forbidden(path, "may not be set for ExternalName services")
    errs.raise_if_any(kind="Service", name=name)
    return spec


__all__ = ["SERVICE_CIDR", "ServiceRange"]
