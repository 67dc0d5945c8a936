"""What a component has told once: per subject and topic, the value it told.

A controller that explains a lasting state on the timeline or in an Event (a hold, a
wait, a configuration that can never work) reconciles the same object again and again
while the state lasts, and must say it once, not at every pass. The
:class:`~fleetkeeper.runtime.recorder.Recorder` keeps that memory for its component, so
no controller keeps a set of its own: :meth:`Told.tell` answers whether a value is news
for a subject's topic; the topic is cleared when the state it told of is over (said again
if it comes back), and a subject's topics are forgotten when the object is deleted. A
reconcile that read the object before it went may still tell about it afterwards: the
uids of the objects deleted lately (:data:`GONE` of them) are kept so that this is not
remembered. The memory is bounded by the live subjects and their open topics.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import NamedTuple

from fleetkeeper.api import timeline as tl
from fleetkeeper.api.meta import Resource

#: uids of deleted objects kept, so that what is told about them late is not remembered
GONE = 4096


class SubjectKey(NamedTuple):
    """Which object a memory is about: its kind, namespace (empty when cluster-scoped) and name."""

    kind: str
    namespace: str
    name: str

    @classmethod
    def of(cls, obj: Resource | tl.Subject) -> SubjectKey:
        if isinstance(obj, tl.Subject):
            return cls(obj.kind, obj.namespace or "", obj.name)
        return cls(obj.kind, obj.metadata.namespace or "", obj.name)


class Told:
    """Subject → topic → the value told; with the subjects each topic is open for."""

    def __init__(self) -> None:
        self._told: dict[SubjectKey, dict[Hashable, Hashable]] = {}
        self._subjects: dict[Hashable, set[SubjectKey]] = {}
        self._gone: OrderedDict[str, None] = OrderedDict()

    def tell(self, subject: SubjectKey, topic: Hashable, value: Hashable = True, *,
             uid: str | None = None) -> bool:
        """Remember ``value`` as told on ``topic``; whether it is news (not the value last told).
        About an object already deleted (by ``uid``) it is news, and not remembered."""
        if uid and uid in self._gone:
            return True
        topics = self._told.setdefault(subject, {})
        if topic in topics and topics[topic] == value:
            return False
        topics[topic] = value
        self._subjects.setdefault(topic, set()).add(subject)
        return True

    def get(self, subject: SubjectKey, topic: Hashable) -> Hashable | None:
        """The value last told on ``topic`` (None when nothing is)."""
        return self._told.get(subject, {}).get(topic)

    def clear(self, subject: SubjectKey, topic: Hashable) -> bool:
        """The state ``topic`` told of is over for ``subject``; whether something was told of it."""
        topics = self._told.get(subject)
        if topics is None or topic not in topics:
            return False
        del topics[topic]
        if not topics:
            del self._told[subject]
        self._unindex(subject, topic)
        return True

    def clear_topic(self, topic: Hashable) -> None:
        """The state ``topic`` told of is over for every subject."""
        for subject in self._subjects.pop(topic, set()):
            topics = self._told[subject]
            del topics[topic]
            if not topics:
                del self._told[subject]

    def forget(self, subject: SubjectKey, *, uid: str | None = None) -> None:
        """The object (``uid``) is gone: everything told about it is forgotten."""
        for topic in self._told.pop(subject, {}):
            self._unindex(subject, topic)
        if uid:
            self._gone[uid] = None
            if len(self._gone) > GONE:
                self._gone.popitem(last=False)

    def __len__(self) -> int:
        """How many subjects something is remembered about."""
        return len(self._told)

    def _unindex(self, subject: SubjectKey, topic: Hashable) -> None:
        subjects = self._subjects.get(topic)
        if subjects is not None:
            subjects.discard(subject)
            if not subjects:
                del self._subjects[topic]


__all__ = ["GONE", "SubjectKey", "Told"]
