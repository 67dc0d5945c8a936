"""Naming kinds on the command line."""

from __future__ import annotations

import pytest

from fleetkeeper.cli.kinds import UnknownKind, resolve


@pytest.mark.parametrize(("name", "kind"), [
    ("clusters", "Cluster"), ("cluster", "Cluster"), ("Cluster", "Cluster"), ("rb", "ResourceBinding"),
    ("bindings", "ResourceBinding"), ("resourcebindings.work.karmada.io", "ResourceBinding"),
    ("crb", "ClusterResourceBinding"), ("works", "Work"), ("wk", "Work"), ("pp", "PropagationPolicy"),
    ("deploy", "Deployment"), ("timeline", "TimelineEntry"), ("tl", "TimelineEntry"), ("leases", "Lease"),
], ids=lambda v: v)
def test_kinds_by_plural_singular_kind_short_name_or_alias(name: str, kind: str) -> None:
    assert resolve(name).kind == kind


def test_an_unknown_kind_lists_the_known_ones() -> None:
    with pytest.raises(UnknownKind) as caught:
        resolve("clustrs")
    assert "'clustrs'" in str(caught.value) and "clusters" in str(caught.value)
    assert "resourcebindings" in str(caught.value)
