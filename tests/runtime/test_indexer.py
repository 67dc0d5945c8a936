"""The informer's store: objects by key and secondary indices kept in step."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fleetkeeper.api import builtin
from fleetkeeper.api.meta import Resource
from fleetkeeper.runtime.indexer import Indexer


def cm(name: str, namespace: str = "default", **labels: str) -> Resource:
    return builtin.ConfigMap.model_validate(
        {"metadata": {"name": name, "namespace": namespace, "labels": labels}, "data": {}}
    )


def by_app(obj: Resource) -> list[str]:
    app = obj.labels().get("app")
    return [app] if app else []


def names(objs: list[Resource]) -> list[str]:
    return [obj.key for obj in objs]


def test_objects_are_kept_by_key_and_listed_in_key_order() -> None:
    store: Indexer[Resource] = Indexer()
    for obj in [cm("b"), cm("a", "other"), cm("a")]:
        store.put(obj)
    assert store.keys() == ["default/a", "default/b", "other/a"]
    assert names(store.list()) == store.keys()
    assert store.get("other/a") is not None and store.get("missing") is None


def test_put_returns_the_replaced_object_and_remove_the_removed_one() -> None:
    store: Indexer[Resource] = Indexer()
    first, second = cm("a", app="x"), cm("a", app="y")
    assert store.put(first) is None
    assert store.put(second) is first
    assert store.remove("default/a") is second
    assert store.remove("default/a") is None
    assert len(store) == 0


def test_an_index_follows_puts_updates_and_removes() -> None:
    store: Indexer[Resource] = Indexer()
    store.add_indexer("app", by_app)
    store.put(cm("a", app="web"))
    store.put(cm("b", app="web"))
    store.put(cm("c", app="db"))
    assert names(store.by_index("app", "web")) == ["default/a", "default/b"]
    store.put(cm("a", app="db"))  # moved from web to db
    assert names(store.by_index("app", "web")) == ["default/b"]
    assert names(store.by_index("app", "db")) == ["default/a", "default/c"]
    store.remove("default/b")
    assert store.by_index("app", "web") == []


def test_an_index_added_late_covers_what_is_already_stored() -> None:
    store: Indexer[Resource] = Indexer()
    store.put(cm("a", app="web"))
    store.add_indexer("app", by_app)
    assert names(store.by_index("app", "web")) == ["default/a"]


@pytest.mark.parametrize(
    "action",
    [
        pytest.param("lookup", id="asking an unknown index is an error"),
        pytest.param("duplicate", id="adding an index twice is an error"),
    ],
)
def test_index_misuse_is_reported(action: str) -> None:
    store: Indexer[Resource] = Indexer()
    store.add_indexer("app", by_app)
    if action == "lookup":
        with pytest.raises(KeyError):
            store.by_index("nope", "x")
    else:
        with pytest.raises(ValueError):
            store.add_indexer("app", by_app)


def by_tiers(obj: Resource) -> list[str]:
    """Several values per object, some repeated: what a multi-valued index yields."""
    return [t for t in obj.labels().get("tiers", "").split(".") if t]


@given(st.lists(st.tuples(st.sampled_from("abcd"), st.one_of(st.none(), st.lists(st.sampled_from("xyz"),
                                                                               max_size=3))),
                max_size=40))
def test_indices_always_match_a_recomputation_from_the_stored_objects(
        steps: list[tuple[str, list[str] | None]]) -> None:
    """Puts (replacing or not, moving values or keeping them) and removes, in any order."""
    store: Indexer[Resource] = Indexer()
    store.add_indexer("tiers", by_tiers)
    for name, tiers in steps:
        if tiers is None:
            store.remove(f"default/{name}")
        else:
            store.put(cm(name, tiers=".".join(tiers)) if tiers else cm(name))
        for value in "xyz":
            expected = sorted(o.key for o in store.list() if value in by_tiers(o))
            assert store.index_keys("tiers", value) == expected
