"""What the simulated API server refuses before it stores an object, as kube-apiserver would.

Objects reach a member from Works, and a Work's manifests are whatever its writer put there:
they were not admitted as templates by the control plane. A real cluster refuses a Deployment
whose containers are not objects, a label that is a number or a ``status`` that is a string —
and the simulated workload controllers, which read these fields, rely on it. So every write
through the simulated cluster (the apply of a Work's manifest, the member API server's create,
update and patch) is checked on the result of the apply, before it is stored:

* ``metadata`` has its types (names, labels and annotations of strings, ownerReferences that
  are objects …) and ``status`` is an object, whatever the kind (a workload whose status is not
  is refused for it, before its rules are read, as decoding fails first in kube-apiserver);
* the kinds that describe pods, which the simulated controllers and scheduler act on, pass the
  control plane's admission (:func:`fleetkeeper.api.admission.admit`: pod templates, selectors,
  counts, names, finalizers), whose defaults are not kept — the simulated API server stores what
  was applied. Other kinds are stored as they come, as before.

A refusal is :class:`fleetkeeper.errors.Invalid` naming the field, as from a real cluster.

Full admission decodes and copies the whole object, yet a fleet applies one workload to many
clusters (a Work each, differing in metadata and replica count) and re-applies it whenever it is
rescaled. So what passed is remembered, as a bounded set of digests of the canonical JSON the
rules see (:class:`Remembered`):

* the *body*: all but ``metadata`` and ``status`` (which the kinds' rules never read), with a
  valid ``spec.replicas`` left out, as it is checked alone. A body seen before has only its
  metadata checked (work in proportion to the metadata, not to the pod template);
* the body with the metadata but what the server stamps on each write (``managedFields``,
  ``resourceVersion``, ``generation``, ``uid``, ``creationTimestamp``): seen before, only those
  stamped fields are decoded.

Anything else takes full admission, as does anything that is not plain JSON or a replica count
that is not valid, so no changed field goes unchecked and a refusal is the one full admission gives.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from datetime import datetime
from typing import Any, Final, NamedTuple

import orjson

from fleetkeeper import errors
from fleetkeeper.api import admission
from fleetkeeper.api.builtin import BUILTIN
from fleetkeeper.api.jsoncopy import json_copy
from fleetkeeper.api.meta import ObjectMeta, Unstructured
from fleetkeeper.api.validation import FieldErrors

Obj = dict[str, Any]
#: the kinds fully admitted: the workloads and the pods the simulated cluster runs
WORKLOADS: Final = frozenset(
    {"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Job", "CronJob", "Pod"})
#: the kinds whose ``spec.replicas`` is a count (an integer of at least 0) and read for nothing else
COUNTED: Final = frozenset({"Deployment", "StatefulSet", "ReplicaSet"})
#: the top-level fields a model decodes (the rest is the body the kind's rules read)
_TYPED: Final = frozenset({"apiVersion", "api_version", "kind", "metadata"})
#: metadata the server stamps on every write, in either spelling
_STAMPED: Final = frozenset({"managedFields", "managed_fields", "resourceVersion", "resource_version",
                             "generation", "uid", "creationTimestamp", "creation_timestamp"})
#: what orjson must refuse rather than convert (as ``json_copy`` does), and canonical key order
_CANONICAL: Final = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
                     | orjson.OPT_PASSTHROUGH_SUBCLASS)


class Digests(NamedTuple):
    """What identifies a workload for admission: its ``body``, and the body with the metadata
    but the stamped fields (``whole``)."""

    body: bytes
    whole: bytes


class Remembered:
    """Digests of what full admission accepted: at most ``size``, the least recently used
    forgotten first. ``full``, ``metadata`` and ``stamped`` count the checks taking each way."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.full = 0
        self.metadata = 0
        self.stamped = 0
        self._seen: OrderedDict[bytes, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seen)

    def recall(self, digest: bytes) -> bool:
        """Whether ``digest`` was accepted (and is now the most recently used)."""
        if digest not in self._seen:
            return False
        self._seen.move_to_end(digest)
        return True

    def add(self, *digests: bytes) -> None:
        for digest in digests:
            self._seen[digest] = None
            self._seen.move_to_end(digest)
        while len(self._seen) > self.size:
            self._seen.popitem(last=False)


#: shared by every simulated cluster of the process (admission of a body does not depend on the cluster)
ADMITTED: Final = Remembered(32_768)


def check(obj: Obj, *, now: datetime) -> None:
    """Raise ``errors.Invalid`` when a real API server would refuse to store ``obj``."""
    api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
    model = BUILTIN.get(kind) if kind in WORKLOADS else None
    status = obj.get("status")
    status_ok = status is None or isinstance(status, dict)
    group = api_version.rpartition("/")[0]
    if status_ok and model is not None and model.API_VERSION.rpartition("/")[0] == group:
        _admit_workload(model, obj, now=now)
        return
    meta = obj.get("metadata")
    errs = FieldErrors()
    try:
        ObjectMeta.from_dict(meta, path="metadata")
    except errors.Invalid as exc:
        errs.causes.extend(exc.causes)
    if not status_ok:  # a workload's too: its status does not decode, whatever its spec says
        errs.wrong_type("status", status, "an object")
    name = str(meta.get("name") or "") if isinstance(meta, dict) else ""
    errs.raise_if_any(kind=kind, name=name, group=group)


def _admit_workload(model: type[Unstructured], obj: Obj, *, now: datetime) -> None:
    """Full admission, or only what differs from what passed before (see the module notes)."""
    seen = digests(obj)
    if seen is not None and ADMITTED.recall(seen.whole) and _stamped_decode(obj):
        ADMITTED.stamped += 1
        return
    if seen is not None and ADMITTED.recall(seen.body):
        ADMITTED.metadata += 1
        typed = model.from_dict(json_copy({key: obj[key] for key in _TYPED if key in obj}))
        admission.admit_metadata(typed)
        ADMITTED.add(seen.whole)
        return
    ADMITTED.full += 1
    admission.admit(model.from_dict(json_copy(obj)), None, operation="CREATE", now=now)
    if seen is not None:
        ADMITTED.add(seen.body, seen.whole)


def _stamped_decode(obj: Obj) -> bool:
    """Whether the metadata the server stamps decodes (the rest of the metadata passed before)."""
    meta = obj.get("metadata")
    stamped = {key: value for key, value in meta.items() if key in _STAMPED} if isinstance(meta, dict) else {}
    try:
        ObjectMeta.from_dict(json_copy(stamped), path="metadata")
    except errors.Invalid:
        return False  # full admission says what is wrong
    return True


def digests(obj: Obj) -> Digests | None:
    """What identifies a workload for its admission; ``None`` when it must be admitted in full
    (not plain JSON, or a ``spec.replicas`` that is not a valid count)."""
    body = {key: value for key, value in obj.items() if key not in ("metadata", "status")}
    spec = body.get("spec")
    if obj.get("kind") in COUNTED and isinstance(spec, dict) and "replicas" in spec:
        replicas = spec["replicas"]
        if replicas is not None and (type(replicas) is not int or replicas < 0):
            return None
        body["spec"] = {key: value for key, value in spec.items() if key != "replicas"}
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta = {key: value for key, value in meta.items() if key not in _STAMPED}
    try:
        encoded_body = orjson.dumps(body, option=_CANONICAL)
        encoded_meta = orjson.dumps(meta, option=_CANONICAL)
    except TypeError:  # orjson.JSONEncodeError: not plain JSON
        return None
    whole = hashlib.blake2b(len(encoded_body).to_bytes(8, "big"), digest_size=32, person=b"whole")
    whole.update(encoded_body)
    whole.update(encoded_meta)
    return Digests(hashlib.blake2b(encoded_body, digest_size=32, person=b"body").digest(), whole.digest())


__all__ = ["ADMITTED", "COUNTED", "WORKLOADS", "Digests", "Remembered", "check", "digests"]
