"""A fieldSelector names only the fields Kubernetes selects on, for lists, watches and deletecollection."""

from __future__ import annotations

import pytest

from .helpers import Api

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
RBS = "/apis/work.karmada.io/v1alpha2/resourcebindings"
PODS = "/api/v1/namespaces/default/pods"


@pytest.mark.parametrize(("path", "selector"), [
    (RBS, "spec.foo=bar"),
    (CONFIGMAPS, "metadata.name=a,data.key=b"),
    (PODS, "spec.nodname=node-1"),
], ids=["a Karmada kind: only metadata", "one bad term of two", "a misspelt Pod field"])
@pytest.mark.parametrize("how", ["list", "watch", "deletecollection"])
async def test_an_unsupported_field_is_refused_naming_it(api: Api, path: str, selector: str,
                                                         how: str) -> None:
    params = {"fieldSelector": selector, **({"watch": "true"} if how == "watch" else {})}
    answer = await (api.http.delete(path, params=params) if how == "deletecollection"
                    else api.http.get(path, params=params))
    assert answer.status_code == 400, answer.text
    bad = selector.split(",")[-1].split("=")[0]
    assert answer.json()["message"] == f"field label not supported: {bad}"


@pytest.mark.parametrize(("path", "selector"), [
    (RBS, "metadata.name=x"),
    (CONFIGMAPS, "metadata.namespace=default,metadata.name!=a"),
    (PODS, "spec.nodeName=node-1,status.phase=Running"),
    ("/api/v1/namespaces/default/events", "involvedObject.kind=Deployment,reason=ScheduleBindingSucceed"),
    ("/api/v1/namespaces", "status.phase=Active"),
], ids=["metadata.name anywhere", "metadata.namespace anywhere", "a Pod's indexed fields",
        "an Event's involved object", "a Namespace's phase"])
async def test_supported_fields_select(api: Api, path: str, selector: str) -> None:
    answer = await api.http.get(path, params={"fieldSelector": selector})
    assert answer.status_code == 200, answer.text


async def test_selection_by_a_supported_field_still_filters(api: Api) -> None:
    for name in ("a", "b"):
        await api.http.post(CONFIGMAPS, json={"metadata": {"name": name}})
    listed = (await api.http.get(CONFIGMAPS, params={"fieldSelector": "metadata.name!=a"})).json()
    assert [i["metadata"]["name"] for i in listed["items"]] == ["b"]
