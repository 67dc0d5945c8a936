"""Conformance: the stored-object size limit holds on every write path, and list parameters
at the edges of their range are answered, not failed (see :mod:`.testing`)."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from fleetkeeper import errors
from fleetkeeper.api.limits import MAX_OBJECT_BYTES
from fleetkeeper.store import Store
from fleetkeeper.store._conformance_base import CONFIGMAP, DEPLOY, StoreFixtures, configmap, deployment

#: room left for what a backend adds around a value (etcd's own limit counts the whole request)
MARGIN = 4096


def big_configmap(name: str, size: int) -> dict[str, Any]:
    """A ConfigMap whose ``data`` holds ``size`` bytes."""
    return configmap(name, pad="x" * size)


def forged_token(revision: int, namespace: str, name: str) -> str:
    """A continue token as a client could forge one (the store's encoding: base64 of JSON)."""
    return base64.urlsafe_b64encode(orjson.dumps({"rv": revision, "start": [namespace, name]})).decode()


def assert_too_large(exc: pytest.ExceptionInfo[errors.RequestEntityTooLarge], name: str) -> None:
    assert exc.value.code == 413
    assert str(MAX_OBJECT_BYTES) in exc.value.message and f'"{name}"' in exc.value.message


class LimitsConformance(StoreFixtures):
    async def test_an_object_over_the_limit_is_not_created(self, store: Store) -> None:
        before = store.revision
        with pytest.raises(errors.RequestEntityTooLarge) as exc:
            await store.create(big_configmap("big", MAX_OBJECT_BYTES))
        assert_too_large(exc, "big")
        assert store.revision == before
        with pytest.raises(errors.NotFound):
            await store.get(CONFIGMAP, "default", "big")

    async def test_an_object_just_under_the_limit_is_stored(self, store: Store) -> None:
        created = await store.create(big_configmap("almost", MAX_OBJECT_BYTES - MARGIN))
        assert len(created["data"]["pad"]) == MAX_OBJECT_BYTES - MARGIN

    async def test_an_update_over_the_limit_leaves_the_stored_object_as_it_was(self, store: Store) -> None:
        created = await store.create(deployment("web", status={"replicas": 1}))
        grown = {**created, "spec": {"replicas": 1, "pad": "x" * MAX_OBJECT_BYTES}}
        with pytest.raises(errors.RequestEntityTooLarge) as exc:
            await store.update(grown)
        assert_too_large(exc, "web")
        status = {**created, "status": {"pad": "x" * MAX_OBJECT_BYTES}}
        with pytest.raises(errors.RequestEntityTooLarge):
            await store.update(status, subresource="status")
        with pytest.raises(errors.RequestEntityTooLarge):
            await store.update(status, with_status=True)
        assert await store.get(DEPLOY, "default", "web") == created

    async def test_dry_runs_are_held_to_the_limit(self, store: Store) -> None:
        with pytest.raises(errors.RequestEntityTooLarge):
            await store.create(big_configmap("big", MAX_OBJECT_BYTES), dry_run=True)
        created = await store.create(configmap("small"))
        with pytest.raises(errors.RequestEntityTooLarge):
            await store.update({**created, "data": {"pad": "x" * MAX_OBJECT_BYTES}}, dry_run=True)
        assert await store.get(CONFIGMAP, "default", "small") == created

    async def test_a_batch_holding_an_object_over_the_limit_stores_nothing(self, store: Store) -> None:
        before = store.revision
        with pytest.raises(errors.RequestEntityTooLarge):
            async with store.batch():
                await store.create(configmap("first"))
                await store.create(big_configmap("big", MAX_OBJECT_BYTES))
        assert store.revision == before
        assert (await store.list(CONFIGMAP, "default")).items == []


    async def test_a_page_size_up_to_the_largest_int64_lists_everything(self, store: Store) -> None:
        for i in range(3):
            await store.create(configmap(f"c{i}"))
        for limit in (2**63 - 1, 2**62, 10**12):
            page = await store.list(CONFIGMAP, "default", limit=limit)
            assert [o["metadata"]["name"] for o in page.items] == ["c0", "c1", "c2"]
            assert page.continue_token is None

    async def test_a_continue_token_from_a_revision_not_reached_is_refused(self, store: Store) -> None:
        await store.create(configmap("c0"))
        for revision in (store.revision + 1, 2**63, -1):
            token = forged_token(revision, "default", "c0")
            with pytest.raises(errors.BadRequest, match="continue token"):
                await store.list(CONFIGMAP, "default", limit=1, continue_token=token)


__all__ = ["LimitsConformance"]
