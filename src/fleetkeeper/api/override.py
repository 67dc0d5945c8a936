"""OverridePolicy / ClusterOverridePolicy (``policy.karmada.io/v1alpha1``): per-cluster edits.

Each rule names the clusters it applies to (``targetCluster``, ``None`` = all) and its
``overriders``, applied in the order image, command, args, labels, annotations, field,
plaintext. Values written into templates (``plaintext``, ``fieldOverrider``) are raw
JSON. The deprecated top-level ``targetCluster`` / ``overriders`` are still accepted.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from fleetkeeper.api import constants
from fleetkeeper.api.base import Model
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.placement import ClusterAffinity, ResourceSelector
from fleetkeeper.api.scheme import register

OverriderOperator = Literal["add", "remove", "replace"]


class PlaintextOverrider(Model):
    path: str
    """JSON pointer to the field to change, for example /spec/replicas."""
    operator: OverriderOperator
    """add, remove or replace."""
    value: Any = None
    """Value to add or replace with; ignored for remove."""


class ImagePredicate(Model):
    path: str
    """JSON pointer to the image field to change, for example /spec/template/spec/containers/0/image."""


class ImageOverrider(Model):
    predicate: ImagePredicate | None = None
    """Which image field to change. Without it, the image of every container of the workload is changed."""
    component: Literal["Registry", "Repository", "Tag"]
    """Part of the image to change: Registry, Repository or Tag."""
    operator: OverriderOperator
    """add, remove or replace."""
    value: str | None = None
    """Text appended to the component (add) or put in its place (replace); ignored for remove."""


class CommandArgsOverrider(Model):
    container_name: str
    """Name of the container whose command or arguments change."""
    operator: Literal["add", "remove"]
    """add appends the values; remove deletes them."""
    value: list[str] | None = None
    """The command or argument items to add or remove."""


class LabelAnnotationOverrider(Model):
    operator: OverriderOperator
    """add, remove or replace."""
    value: dict[str, str] | None = None
    """Keys and values to add, remove or replace. Label keys and values must be valid label keys and values.
    """


class PatchOperation(Model):
    sub_path: str
    """JSON pointer inside the embedded document, for example /data/port."""
    operator: OverriderOperator
    """add, remove or replace."""
    value: Any = None
    """Value to add or replace with. Required for add and replace, not allowed for remove."""


class FieldOverrider(Model):
    field_path: str
    """JSON pointer to a string field holding JSON or YAML, for example /data/config.yaml."""
    json_: list[PatchOperation] | None = Field(default=None, alias="json")
    """Changes to make when the field holds JSON. Exactly one of json and yaml must be set."""
    yaml: list[PatchOperation] | None = None
    """Changes to make when the field holds YAML. Exactly one of json and yaml must be set."""


class Overriders(Model):
    plaintext: list[PlaintextOverrider] | None = None
    """Changes to any field by JSON pointer."""
    image_overrider: list[ImageOverrider] | None = None
    """Changes to container images."""
    command_overrider: list[CommandArgsOverrider] | None = None
    """Changes to container commands."""
    args_overrider: list[CommandArgsOverrider] | None = None
    """Changes to container arguments."""
    labels_overrider: list[LabelAnnotationOverrider] | None = None
    """Changes to the resource's labels."""
    annotations_overrider: list[LabelAnnotationOverrider] | None = None
    """Changes to the resource's annotations."""
    field_overrider: list[FieldOverrider] | None = None
    """Changes inside a string field that holds JSON or YAML."""


class RuleWithCluster(Model):
    target_cluster: ClusterAffinity | None = None
    """The member clusters the rule applies to. Without it, the rule applies to every cluster."""
    overriders: Overriders = Field(default_factory=Overriders)
    """The changes made to the resource for those clusters. They apply in the order image, command, args,
    labels, annotations, field, plaintext."""


class OverrideSpec(Model):
    resource_selectors: list[ResourceSelector] | None = None
    """The resource templates the policy changes. Without it, every template in scope."""
    override_rules: list[RuleWithCluster] | None = None
    """Rules, each naming clusters and the changes for them, applied in order. Cannot be set together with
    targetCluster or overriders."""
    target_cluster: ClusterAffinity | None = None
    """Deprecated: the clusters the top-level overriders apply to. Use overrideRules."""
    overriders: Overriders = Field(default_factory=Overriders)
    """Deprecated: changes applied to the clusters of targetCluster. Use overrideRules."""


@register
class OverridePolicy(Resource):
    """Namespaced policy: changes the templates of its own namespace for some member clusters."""

    API_VERSION: ClassVar[str] = constants.POLICY_API_VERSION
    KIND: ClassVar[str] = "OverridePolicy"
    PLURAL: ClassVar[str] = "overridepolicies"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("op",)
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)
    HAS_STATUS: ClassVar[bool] = False

    spec: OverrideSpec = Field(default_factory=OverrideSpec)
    """Which templates change, and how, for which member clusters."""


@register
class ClusterOverridePolicy(Resource):
    """Cluster-scoped policy: changes cluster-scoped templates and templates in any namespace for some
    member clusters."""

    API_VERSION: ClassVar[str] = constants.POLICY_API_VERSION
    KIND: ClassVar[str] = "ClusterOverridePolicy"
    PLURAL: ClassVar[str] = "clusteroverridepolicies"
    NAMESPACED: ClassVar[bool] = False
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("cop",)
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)
    HAS_STATUS: ClassVar[bool] = False

    spec: OverrideSpec = Field(default_factory=OverrideSpec)
    """Which templates change, and how, for which member clusters."""


__all__ = [
    "ClusterOverridePolicy",
    "CommandArgsOverrider",
    "FieldOverrider",
    "ImageOverrider",
    "ImagePredicate",
    "LabelAnnotationOverrider",
    "OverridePolicy",
    "OverrideSpec",
    "OverriderOperator",
    "Overriders",
    "PatchOperation",
    "PlaintextOverrider",
    "RuleWithCluster",
]
