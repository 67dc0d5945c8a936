"""``meta.k8s.io/v1`` structures and the ``Resource`` base every kind derives from.

A kind is a :class:`Resource` subclass that declares its scheme facts as class
variables (``API_VERSION``, ``KIND``, ``PLURAL``, ``NAMESPACED`` …) and is registered
in :mod:`fleetkeeper.api.scheme`. Kinds we do not model (Deployment, ConfigMap, …)
are :class:`Unstructured`: typed ``metadata``, everything else kept verbatim.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Self

from pydantic import ConfigDict, Field, ValidationError, model_validator

from fleetkeeper.api.base import Model, Time, field_error
from fleetkeeper.api.validation import shown


class OwnerReference(Model):
    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(Model):
    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: Time | None = None
    deletion_timestamp: Time | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
    managed_fields: list[dict[str, Any]] | None = None
    self_link: str | None = None


ConditionStatus = Literal["True", "False", "Unknown"]


class Condition(Model):
    """``metav1.Condition``."""

    type: str
    """Type of the condition, for example Ready."""
    status: ConditionStatus
    """True, False or Unknown."""
    reason: str = ""
    """One CamelCase word saying why the condition is as it is."""
    message: str = ""
    """Details for people about the condition."""
    last_transition_time: Time | None = None
    """When the status last changed."""
    observed_generation: int | None = None
    """The object's generation the condition was computed from."""


class LabelSelectorRequirement(Model):
    key: str
    """Label key the requirement is about."""
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    """How the label's value is compared: In, NotIn, Exists or DoesNotExist."""
    values: list[str] | None = None
    """Values for In and NotIn; must be empty for Exists and DoesNotExist."""


class LabelSelector(Model):
    match_labels: dict[str, str] | None = None
    """Labels that must be present with exactly these values."""
    match_expressions: list[LabelSelectorRequirement] | None = None
    """Requirements on labels, all of which must hold."""


class Resource(Model):
    """Base of every kind: ``apiVersion``, ``kind``, ``metadata``."""

    API_VERSION: ClassVar[str] = ""
    KIND: ClassVar[str] = ""
    PLURAL: ClassVar[str] = ""
    #: the singular resource name, when it is not the lowercase kind (a CRD may say otherwise)
    SINGULAR: ClassVar[str] = ""
    NAMESPACED: ClassVar[bool] = True
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ()
    CATEGORIES: ClassVar[tuple[str, ...]] = ()
    #: whether writes to the main resource ignore ``status`` (a ``/status`` subresource exists)
    HAS_STATUS: ClassVar[bool] = True

    api_version: str = Field(default="", alias="apiVersion")
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    @model_validator(mode="before")
    @classmethod
    def _fill_type_meta(cls, data: Any) -> Any:
        if isinstance(data, dict) and cls.KIND:
            if not data.get("apiVersion") and not data.get("api_version"):
                data = {**data, "apiVersion": cls.API_VERSION}
            if not data.get("kind"):
                data = {**data, "kind": cls.KIND}
        return data

    @model_validator(mode="after")
    def _check_type_meta(self) -> Self:
        if self.KIND and self.kind != self.KIND:
            raise ValueError(f"kind must be {self.KIND!r}, got {self.kind!r}")
        if self.API_VERSION and self.api_version != self.API_VERSION and not self._accepts_version(
            self.api_version
        ):
            raise ValueError(f"apiVersion must be {self.API_VERSION!r}, got {self.api_version!r}")
        return self

    @classmethod
    def _accepts_version(cls, api_version: str) -> bool:
        return False

    # -- convenience -------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.metadata.name or ""

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or ""

    @property
    def key(self) -> str:
        """``namespace/name`` (or ``name`` for cluster-scoped objects)."""
        ns = self.metadata.namespace
        return f"{ns}/{self.metadata.name}" if ns else (self.metadata.name or "")

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0] if "/" in self.api_version else ""

    def labels(self) -> dict[str, str]:
        return self.metadata.labels or {}

    def annotations(self) -> dict[str, str]:
        return self.metadata.annotations or {}

    def deep_copy(self) -> Self:
        """An independent copy (re-validated from a dump: much faster than ``model_copy(deep=True)``)."""
        try:
            return type(self).model_validate(self.model_dump(by_alias=True))
        except ValidationError:  # a value assigned after validation breaks a rule: copy it as it is
            return self.model_copy(deep=True)


class Unstructured(Resource):
    """Any kind we do not model: ``metadata`` is typed, the rest (``spec``, ``status``,
    ``data`` …) is kept as given. Subclasses per group/version/kind come from
    :meth:`for_kind` so the typed client API works for them too.

    ``status`` is an object, as every Kubernetes kind's is, and :meth:`to_dict` refuses to
    render one that is not. Encoding is the step every write takes on its way to the store
    (the API server's create, update, patch and ``/status``, the local client's writes), so
    no path stores such a status; decoding stays lenient, so an object stored before the
    rule is still read — the reader that encodes it meets the error for that object alone."""

    model_config = ConfigDict(extra="allow")

    _subclasses: ClassVar[dict[tuple[str, str], type[Unstructured]]] = {}

    def to_dict(self) -> dict[str, Any]:
        """The wire form; ``errors.Invalid`` naming ``status`` when it is not an object."""
        status = (self.model_extra or {}).get("status")
        if status is not None and not isinstance(status, dict):
            raise field_error("status", f"Invalid value: {shown(status)}: must be an object",
                              kind=self.kind, name=self.name or None)
        return super().to_dict()

    @classmethod
    def for_kind(
        cls, api_version: str, kind: str, *, plural: str | None = None, namespaced: bool = True,
        short_names: tuple[str, ...] = (), has_status: bool = True, categories: tuple[str, ...] = (),
    ) -> type[Unstructured]:
        """The (cached) Unstructured subclass for one group/version/kind."""
        key = (api_version, kind)
        sub = cls._subclasses.get(key)
        if sub is None:
            sub = cls._subclasses[key] = _subclass(api_version, kind, {
                "PLURAL": plural or default_plural(kind), "NAMESPACED": namespaced,
                "SHORT_NAMES": short_names, "HAS_STATUS": has_status, "CATEGORIES": categories})
        return sub

    @classmethod
    def define(
        cls, api_version: str, kind: str, *, plural: str, namespaced: bool, singular: str = "",
        short_names: tuple[str, ...] = (), has_status: bool = True, categories: tuple[str, ...] = (),
        shared: bool = True,
    ) -> type[Unstructured]:
        """The subclass of a kind whose scheme facts are declared (by a CustomResourceDefinition).

        ``shared``: the process's class of the kind (:meth:`for_kind`'s). An existing one — made
        with guessed facts before the kind was declared — is updated in place, so every holder of
        the class (an informer, a cache) sees the declared plural and scope from now on. Otherwise
        a new class of its own, which no other scheme serves (a member cluster's, beside the plane's).
        """
        sub = cls.for_kind(api_version, kind) if shared else _subclass(api_version, kind, {})
        sub.PLURAL = plural
        sub.SINGULAR = "" if singular == kind.lower() else singular
        sub.NAMESPACED = namespaced
        sub.SHORT_NAMES = short_names
        sub.HAS_STATUS = has_status
        sub.CATEGORIES = categories
        return sub

    @classmethod
    def undeclare(cls, api_version: str, kind: str) -> None:
        """The reverse of :meth:`define`: the kind's facts go back to :meth:`for_kind`'s guesses."""
        sub = cls._subclasses.get((api_version, kind))
        if sub is not None:
            cls.define(api_version, kind, plural=default_plural(kind), namespaced=True)

    @classmethod
    def _accepts_version(cls, api_version: str) -> bool:
        return api_version.rpartition("/")[0] == cls.API_VERSION.rpartition("/")[0]

    @property
    def body(self) -> dict[str, Any]:
        """Everything but apiVersion/kind/metadata (the raw fields)."""
        return dict(self.model_extra or {})

    def field(self, name: str, default: Any = None) -> Any:
        return (self.model_extra or {}).get(name, default)

    def set_field(self, name: str, value: Any) -> None:
        extra = self.model_extra
        assert extra is not None
        if value is None:
            extra.pop(name, None)
        else:
            extra[name] = value


def _subclass(api_version: str, kind: str, facts: dict[str, Any]) -> type[Unstructured]:
    """A new Unstructured subclass of one group/version/kind with ``facts`` (``PLURAL`` …)."""
    attrs = {
        "API_VERSION": api_version, "KIND": kind, **facts, "__module__": __name__,
        # no fields of its own to describe; looking for its source (it has none) would walk
        # every frame of the caller's stack, a second at an import
        "model_config": ConfigDict(use_attribute_docstrings=False),
    }
    return type(f"Unstructured_{kind}", (Unstructured,), attrs)


_IRREGULAR = {"endpoints": "endpoints", "ingress": "ingresses", "networkpolicy": "networkpolicies"}


def default_plural(kind: str) -> str:
    """Kubernetes' guess of a plural for a kind (``Policy`` → ``policies``)."""
    lower = kind.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if lower.endswith("s") or lower.endswith("x") or lower.endswith("ch") or lower.endswith("sh"):
        return lower + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + "s"


__all__ = [
    "Condition", "ConditionStatus", "LabelSelector", "LabelSelectorRequirement", "ObjectMeta",
    "OwnerReference", "Resource", "Unstructured", "default_plural",
]
