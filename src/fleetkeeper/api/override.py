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
    operator: OverriderOperator
    value: Any = None


class ImagePredicate(Model):
    path: str


class ImageOverrider(Model):
    predicate: ImagePredicate | None = None
    component: Literal["Registry", "Repository", "Tag"]
    operator: OverriderOperator
    value: str | None = None


class CommandArgsOverrider(Model):
    container_name: str
    operator: Literal["add", "remove"]
    value: list[str] | None = None


class LabelAnnotationOverrider(Model):
    operator: OverriderOperator
    value: dict[str, str] | None = None


class PatchOperation(Model):
    sub_path: str
    operator: OverriderOperator
    value: Any = None


class FieldOverrider(Model):
    field_path: str
    json_: list[PatchOperation] | None = Field(default=None, alias="json")
    yaml: list[PatchOperation] | None = None


class Overriders(Model):
    plaintext: list[PlaintextOverrider] | None = None
    image_overrider: list[ImageOverrider] | None = None
    command_overrider: list[CommandArgsOverrider] | None = None
    args_overrider: list[CommandArgsOverrider] | None = None
    labels_overrider: list[LabelAnnotationOverrider] | None = None
    annotations_overrider: list[LabelAnnotationOverrider] | None = None
    field_overrider: list[FieldOverrider] | None = None


class RuleWithCluster(Model):
    target_cluster: ClusterAffinity | None = None
    overriders: Overriders = Field(default_factory=Overriders)


class OverrideSpec(Model):
    resource_selectors: list[ResourceSelector] | None = None
    override_rules: list[RuleWithCluster] | None = None
    target_cluster: ClusterAffinity | None = None
    overriders: Overriders = Field(default_factory=Overriders)


@register
class OverridePolicy(Resource):
    API_VERSION: ClassVar[str] = constants.POLICY_API_VERSION
    KIND: ClassVar[str] = "OverridePolicy"
    PLURAL: ClassVar[str] = "overridepolicies"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("op",)
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)
    HAS_STATUS: ClassVar[bool] = False

    spec: OverrideSpec = Field(default_factory=OverrideSpec)


@register
class ClusterOverridePolicy(Resource):
    API_VERSION: ClassVar[str] = constants.POLICY_API_VERSION
    KIND: ClassVar[str] = "ClusterOverridePolicy"
    PLURAL: ClassVar[str] = "clusteroverridepolicies"
    NAMESPACED: ClassVar[bool] = False
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("cop",)
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)
    HAS_STATUS: ClassVar[bool] = False

    spec: OverrideSpec = Field(default_factory=OverrideSpec)


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
