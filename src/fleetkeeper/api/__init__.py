"""fleetkeeper's API types: every kind, registered in :data:`~fleetkeeper.api.scheme.SCHEME`.

Importing this package imports every kind module so that the scheme knows them all.
Callers import modules, not names: ``from fleetkeeper.api import work`` then
``work.ResourceBinding``.

* kinds: :mod:`cluster`, :mod:`policy` (+ :mod:`placement`, :mod:`override`,
  :mod:`taintpolicy`), :mod:`work`, :mod:`apps` (WorkloadRebalancer), :mod:`remedy`,
  :mod:`networking`, :mod:`config`,
  :mod:`coordination`, :mod:`core`, :mod:`builtin` (Unstructured Kubernetes kinds),
  :mod:`crd` (the kinds CustomResourceDefinitions define, registered at run time);
* wire facts: :mod:`constants` (keys, reasons, name rules), :mod:`scheme`;
* pure rules: :mod:`conditions`, :mod:`taints`, :mod:`matching` (gathered in
  :mod:`rules`), :mod:`selectors`, :mod:`quantity`;
* :mod:`admission`: the defaulting + validation every write goes through.
"""

from __future__ import annotations

from fleetkeeper.api import (
    admission,
    apps,
    base,
    builtin,
    cluster,
    conditions,
    config,
    constants,
    coordination,
    core,
    crd,
    matching,
    meta,
    networking,
    override,
    placement,
    policy,
    quantity,
    remedy,
    rules,
    scheme,
    selectors,
    taintpolicy,
    taints,
    timeline,
    validation,
    work,
)
from fleetkeeper.api.base import Model
from fleetkeeper.api.meta import Resource, Unstructured
from fleetkeeper.api.scheme import SCHEME

__all__ = [
    "SCHEME", "Model", "Resource", "Unstructured", "admission", "apps", "base", "builtin", "cluster",
    "conditions",
    "config", "constants", "coordination", "core", "crd", "matching", "meta", "networking", "override",
    "placement", "policy", "quantity", "remedy", "rules", "scheme", "selectors", "taintpolicy", "taints",
    "timeline", "validation",
    "work",
]
