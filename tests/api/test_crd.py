"""The kinds CustomResourceDefinitions define: read from the CRD, registered in a scheme with the
declared plural and scope, replaced when the CRD changes, dropped when it goes; the status
kube-apiserver gives a served CRD."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fleetkeeper.api.builtin import BUILTIN
from fleetkeeper.api.crd import CustomKinds, NameConflict, definition, desired_status, parse
from fleetkeeper.api.meta import Unstructured
from fleetkeeper.api.scheme import GroupKind, Scheme

NOW = "2026-01-01T00:00:00Z"
LATER = "2026-01-01T00:05:00Z"
SCHEMA = {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}}


def crd(group: str, kind: str, *, plural: str | None = None, scope: str = "Namespaced",
        versions: list[dict[str, Any]] | None = None, **names: Any) -> dict[str, Any]:
    plural = plural or kind.lower() + "s"
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": scope, "names": {"kind": kind, "plural": plural, **names},
                 "versions": versions or [version("v1")]},
    }


def version(name: str, *, served: bool = True, storage: bool = True, **extra: Any) -> dict[str, Any]:
    return {"name": name, "served": served, "storage": storage, "schema": SCHEMA, **extra}


@pytest.fixture
def kinds() -> Iterator[CustomKinds]:
    """A scheme of its own, with one built-in kind, so registrations leave the process's scheme alone."""
    scheme = Scheme()
    scheme.add(BUILTIN["Deployment"])
    yield CustomKinds(scheme)


def test_a_crd_is_read_with_kubernetes_defaults() -> None:
    found = parse(crd("webapp.test.io", "Guestbook", shortNames=["gb"], categories=["all"],
                      versions=[version("v1", subresources={"status": {}, "scale": {
                          "specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size"}},
                          additionalPrinterColumns=[{"name": "Size", "type": "integer",
                                                     "jsonPath": ".spec.size"}])]))
    assert (found.name, found.group, found.kind, found.plural) == \
        ("guestbooks.webapp.test.io", "webapp.test.io", "Guestbook", "guestbooks")
    assert (found.singular, found.list_kind) == ("guestbook", "GuestbookList")
    assert found.short_names == ("gb",) and found.categories == ("all",) and found.namespaced
    v1 = found.version("v1")
    assert v1 is not None and v1.status and v1.storage and v1.served
    assert v1.scale is not None and v1.scale.spec_replicas == ".spec.size"
    assert [c.name for c in v1.printer_columns] == ["Size"]
    assert found.accepted_names() == {
        "plural": "guestbooks", "singular": "guestbook", "kind": "Guestbook", "listKind": "GuestbookList",
        "shortNames": ["gb"], "categories": ["all"]}


def test_a_crd_without_a_kind_is_not_read() -> None:
    with pytest.raises(ValueError, match=r"spec\.names\.kind"):
        parse({"metadata": {"name": "x"}, "spec": {"group": "a.io", "names": {"plural": "xs"}}})


def test_served_versions_are_registered_with_the_declared_plural_and_scope(kinds: CustomKinds) -> None:
    scheme = kinds.scheme
    before = scheme.generation
    assert kinds.register(crd("reg.test.io", "Widget", plural="widgetz", scope="Cluster", shortNames=["wz"],
                              versions=[version("v1", storage=False, subresources={"status": {}}),
                                        version("v2"), version("v0", served=False, storage=False)])) is None
    infos = {i.version: i for i in scheme.infos() if i.group == "reg.test.io"}
    assert set(infos) == {"v1", "v2"}, "an unserved version is not registered"
    assert all(not i.namespaced and i.plural == "widgetz" and i.short_names == ("wz",)
               for i in infos.values())
    assert infos["v1"].has_status and not infos["v2"].has_status
    assert scheme.by_plural("reg.test.io", "v1", "widgetz") is infos["v1"]
    stored = scheme.by_group_kind(GroupKind("reg.test.io", "Widget"))
    assert stored is not None and stored.version == "v2", "objects are stored at the storage version"
    assert scheme.generation > before
    obj = scheme.decode({"apiVersion": "reg.test.io/v2", "kind": "Widget", "metadata": {"name": "w"}})
    assert isinstance(obj, Unstructured) and not type(obj).NAMESPACED


def test_a_class_made_before_the_crd_was_known_takes_the_declared_scope() -> None:
    kinds = CustomKinds(Scheme(), shared=True)  # the process's classes, as SCHEME's CRDs have them
    guessed = Unstructured.for_kind("early.test.io/v1", "Lamp")
    assert guessed.NAMESPACED and guessed.PLURAL == "lamps"
    kinds.register(crd("early.test.io", "Lamp", plural="lampen", scope="Cluster"))
    assert Unstructured.for_kind("early.test.io/v1", "Lamp") is guessed
    assert not guessed.NAMESPACED and guessed.PLURAL == "lampen"


def test_an_updated_crd_replaces_what_it_defined(kinds: CustomKinds) -> None:
    scheme = kinds.scheme
    kinds.register(crd("upd.test.io", "Gear", versions=[version("v1")]))
    generation = scheme.generation
    assert kinds.register(crd("upd.test.io", "Gear", versions=[version("v1")])) is None
    assert scheme.generation == generation, "registering the same CRD again changes nothing"
    kinds.register(crd("upd.test.io", "Gear", versions=[version("v1", storage=False), version("v2")]))
    assert sorted(i.version for i in scheme.infos() if i.group == "upd.test.io") == ["v1", "v2"]
    stored = scheme.by_group_kind(GroupKind("upd.test.io", "Gear"))
    assert stored is not None and stored.version == "v2"
    kinds.register(crd("upd.test.io", "Gear", versions=[version("v2")]))
    assert [i.version for i in scheme.infos() if i.group == "upd.test.io"] == ["v2"]
    assert scheme.by_plural("upd.test.io", "v1", "gears") is None


def test_an_unregistered_crd_is_no_longer_served(kinds: CustomKinds) -> None:
    scheme = kinds.scheme
    kinds.register(crd("gone.test.io", "Ghost"))
    removed = kinds.unregister("ghosts.gone.test.io")
    assert removed is not None and removed.kind == "Ghost"
    assert not [i for i in scheme.infos() if i.group == "gone.test.io"]
    assert scheme.by_group_kind(GroupKind("gone.test.io", "Ghost")) is None
    assert kinds.unregister("ghosts.gone.test.io") is None


@pytest.mark.parametrize(("kind", "plural", "reason"), [
    ("Deployment", "things", "KindConflict"),
    ("Thing", "deployments", "PluralConflict"),
], ids=["a built-in kind", "a built-in plural"])
def test_a_built_in_kind_is_never_replaced(kinds: CustomKinds, kind: str, plural: str, reason: str) -> None:
    conflict = kinds.register(crd("apps", kind, plural=plural))
    assert conflict is not None and conflict.reason == reason and "built-in" in conflict.message
    info = kinds.scheme.by_group_kind(GroupKind("apps", "Deployment"))
    assert info is not None and info.model is BUILTIN["Deployment"] and info.namespaced


def test_two_crds_naming_one_kind_conflict_until_the_first_goes(kinds: CustomKinds) -> None:
    first = crd("twin.test.io", "Twin", plural="twins")
    second = crd("twin.test.io", "Twin", plural="twinnies")
    assert kinds.register(first) is None
    conflict = kinds.register(second)
    assert conflict is not None and conflict.reason == "KindConflict"
    assert "twins.twin.test.io" in conflict.message
    info = kinds.scheme.by_group_kind(GroupKind("twin.test.io", "Twin"))
    assert info is not None and info.plural == "twins"
    kinds.unregister("twins.twin.test.io")
    assert kinds.register(second) is None
    info = kinds.scheme.by_group_kind(GroupKind("twin.test.io", "Twin"))
    assert info is not None and info.plural == "twinnies"


def test_a_served_crd_is_established_with_its_names_and_stored_versions() -> None:
    created = crd("st.test.io", "Book", versions=[version("v1")])
    status = desired_status(created, conflict=None, now=NOW)
    assert status["acceptedNames"] == {"plural": "books", "singular": "book", "kind": "Book",
                                       "listKind": "BookList"}
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
        ("NamesAccepted", "True", "NoConflicts"), ("Established", "True", "InitialNamesAccepted")]
    assert status["storedVersions"] == ["v1"]
    assert {c["lastTransitionTime"] for c in status["conditions"]} == {NOW}

    updated = crd("st.test.io", "Book", versions=[version("v1", storage=False), version("v2")])
    updated["status"] = status
    again = desired_status(updated, conflict=None, now=LATER)
    assert again["storedVersions"] == ["v1", "v2"], "a version once stored stays listed"
    assert {c["lastTransitionTime"] for c in again["conditions"]} == {NOW}, \
        "an unchanged condition keeps its time"


def test_a_crd_whose_names_conflict_is_not_established() -> None:
    taken = NameConflict("KindConflict", "taken")
    status = desired_status(crd("st.test.io", "Book"), conflict=taken, now=NOW)
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
        ("NamesAccepted", "False", "KindConflict"), ("Established", "False", "NotAccepted")]
    assert status["acceptedNames"] == {"plural": "", "kind": ""}


def test_unregistering_puts_the_guessed_facts_back() -> None:
    kinds = CustomKinds(Scheme(), shared=True)
    kinds.register(crd("back.test.io", "Shelf", plural="shelves", scope="Cluster"))
    model = Unstructured.for_kind("back.test.io/v1", "Shelf")
    assert not model.NAMESPACED and model.PLURAL == "shelves"
    kinds.unregister("shelves.back.test.io")
    assert model.NAMESPACED and model.PLURAL == "shelfs", "Kubernetes' guess of a plural"


def test_a_scheme_other_than_the_process_s_gets_classes_of_its_own() -> None:
    guessed = Unstructured.for_kind("own.test.io/v1", "Kite")
    one, two = CustomKinds(Scheme()), CustomKinds(Scheme())
    one.register(crd("own.test.io", "Kite", plural="kites", scope="Cluster"))
    two.register(crd("own.test.io", "Kite", plural="drachen"))
    ones = one.scheme.by_plural("own.test.io", "v1", "kites")
    twos = two.scheme.by_plural("own.test.io", "v1", "drachen")
    assert ones is not None and twos is not None
    assert not ones.model.NAMESPACED and twos.model.NAMESPACED and ones.model is not twos.model
    assert guessed.NAMESPACED and guessed.PLURAL == "kites", "the process's class is left alone"
    assert Unstructured.for_kind("own.test.io/v1", "Kite") is guessed
    assert definition(ones) is one.get(GroupKind("own.test.io", "Kite"))
    assert definition(twos) is two.get(GroupKind("own.test.io", "Kite"))
    one.unregister("kites.own.test.io")
    assert definition(ones) is None and twos.model.PLURAL == "drachen"
