"""Customization scripts per operation: Karmada's lua_test.go cases, through the Interpreter."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.interpreter import Interpreter

from .test_interpreter import ric

POD_SPEC = {
    "nodeSelector": {"foo": "foo1"},
    "tolerations": [{"key": "bar", "operator": "Exists"}],
    "containers": [
        {"resources": {"limits": {"cpu": "100m", "memory": "100M"}}},
        {"resources": {"limits": {"cpu": "1.2", "memory": "1.2G"}}},
    ],
}
DEPLOY = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"namespace": "foo", "name": "bar"},
    "spec": {"replicas": 1, "template": {"spec": POD_SPEC}},
}
CLAIM = {"nodeSelector": {"foo": "foo1"}, "tolerations": [{"key": "bar", "operator": "Exists"}]}

ACCURATE = """local kube = require("kube")
function GetReplicas(desiredObj)
  replica = desiredObj.spec.replicas
  requires = kube.accuratePodRequirements(desiredObj.spec.template)
  return replica, requires
end"""
RESOURCE_ADD = """local kube = require("kube")
function GetReplicas(desiredObj)
  replica = desiredObj.spec.replicas
  requires = {
    nodeClaim = {
      nodeSelector = desiredObj.spec.template.spec.nodeSelector,
      tolerations = desiredObj.spec.template.spec.tolerations
    },
    resourceRequest = {},
  }
  for i = 1, #desiredObj.spec.template.spec.containers do
    local limits = desiredObj.spec.template.spec.containers[i].resources.limits
    requires.resourceRequest.cpu = kube.resourceAdd(requires.resourceRequest.cpu, limits.cpu)
    requires.resourceRequest.memory = kube.resourceAdd(requires.resourceRequest.memory, limits.memory)
  end
  return replica, requires
end"""


def use(interp: Interpreter, kind: tuple[str, str], **scripts: str) -> Interpreter:
    interp.set_customizations([ric("test", *kind, **scripts)])
    return interp


@pytest.mark.parametrize(
    "script",
    [
        pytest.param(ACCURATE, id="requirements from kube.accuratePodRequirements"),
        pytest.param(RESOURCE_ADD, id="requirements summed with kube.resourceAdd"),
    ],
)
def test_get_replicas(interp: Interpreter, script: str) -> None:
    use(interp, ("apps/v1", "Deployment"), replicaResource=script)
    # Quantities come back in canonical form, as Go re-marshals the typed requirements.
    assert interp.get_replicas(DEPLOY) == (
        1,
        {"nodeClaim": CLAIM, "resourceRequest": {"cpu": "1300m", "memory": "1300M"}},
    )


@pytest.mark.parametrize(
    ("script", "message"),
    [
        pytest.param(
            "function GetReplicas(o) return 'three' end",
            "result type string is not number",
            id="a replica count that is not a number",
        ),
        pytest.param(
            "function GetReplicas(o) return 1, 'x' end",
            "expect the returned requires type is table",
            id="requirements that are not a table",
        ),
        pytest.param(
            "function GetReplicas(o) return 2^40 end",
            "does not fit a 32-bit integer",
            id="a replica count beyond int32",
        ),
        pytest.param(
            "function GetReplicas(o) return 1, {resourceRequest = {cpu = 'lots'}} end",
            "lots",
            id="a requirement that is not a quantity",
        ),
    ],
)
def test_get_replicas_result_checks(interp: Interpreter, script: str, message: str) -> None:
    use(interp, ("apps/v1", "Deployment"), replicaResource=script)
    with pytest.raises(errors.ScriptError, match=message):
        interp.get_replicas(DEPLOY)


def test_get_replicas_truncates_and_canonicalizes(interp: Interpreter) -> None:
    use(
        interp,
        ("apps/v1", "Deployment"),
        replicaResource=(
            "function GetReplicas(o) return 2.7, {resourceRequest = {cpu = 0.5, memory = '1024Mi'}, "
            "nodeClaim = {}, extra = 1} end"
        ),
    )
    assert interp.get_replicas(DEPLOY) == (2, {"resourceRequest": {"cpu": "500m", "memory": "1Gi"}})


MOCK = {
    "apiVersion": "testing.karmada.io/v1alpha1",
    "kind": "MockMultiPodTemplateWorkload",
    "metadata": {"namespace": "default", "name": "my-mock-app"},
    "spec": {
        "master": {
            "replicas": 1,
            "spec": {
                "nodeSelector": {"foo": "foo1"},
                "tolerations": [{"key": "bar", "operator": "Exists"}],
                "containers": [{"name": "master", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
            },
        },
        "worker": {
            "replicas": 3,
            "spec": {
                "containers": [
                    {"name": "worker", "resources": {"requests": {"cpu": "500m", "memory": "2Gi"}}}
                ]
            },
        },
    },
}
MOCK_KIND = (str(MOCK["apiVersion"]), str(MOCK["kind"]))
COMPONENTS = """function GetComponents(obj)
  local kube = require("kube")
  local components = {}
  table.insert(components, {name = "master", replicas = obj.spec.master.replicas,
                            replicaRequirements = kube.accuratePodRequirements(obj.spec.master)})
  table.insert(components, {name = "worker", replicas = obj.spec.worker.replicas,
                            replicaRequirements = kube.accuratePodRequirements(obj.spec.worker)})
  return components
end"""


def test_get_components_of_a_multi_template_workload(interp: Interpreter) -> None:
    use(interp, MOCK_KIND, componentResource=COMPONENTS)
    assert interp.get_components(MOCK) == [
        {
            "name": "master",
            "replicas": 1,
            "replicaRequirements": {"nodeClaim": CLAIM, "resourceRequest": {"cpu": "1", "memory": "1Gi"}},
        },
        {
            "name": "worker",
            "replicas": 3,
            "replicaRequirements": {"resourceRequest": {"cpu": "500m", "memory": "2Gi"}},
        },
    ]


@pytest.mark.parametrize(
    ("script", "error"),
    [
        pytest.param("function GetComponents(obj) return nil end", None, id="nil means no components"),
        pytest.param(
            'function GetComponents(obj) return "this is not a table" end',
            "expected result type 'table'",
            id="a string is refused",
        ),
        pytest.param(
            "function GetReplicas(obj) return 1 end",
            "not found function GetComponents",
            id="a script without GetComponents is refused",
        ),
    ],
)
def test_get_components_result_checks(interp: Interpreter, script: str, error: str | None) -> None:
    use(interp, MOCK_KIND, componentResource=script)
    if error is None:
        assert interp.get_components(MOCK) is None
    else:
        with pytest.raises(errors.ScriptError, match=error):
            interp.get_components(MOCK)


def test_a_components_script_with_a_syntax_error_is_refused(interp: Interpreter) -> None:
    with pytest.raises(errors.ScriptError):
        use(
            interp,
            MOCK_KIND,
            componentResource="function GetComponents(obj)\n local x = {\n return x\nend",
        )


def test_revise_replica(interp: Interpreter) -> None:
    use(
        interp,
        ("apps/v1", "Deployment"),
        replicaRevision=(
            "function ReviseReplica(desiredObj, desiredReplica) desiredObj.spec.replicas = desiredReplica "
            "return desiredObj end"
        ),
    )
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "fake-deployment"},
        "spec": {"replicas": 1, "selector": {}, "template": {"metadata": {"labels": {}}}},
    }
    assert interp.revise_replica(obj, 3) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "fake-deployment"},
        "spec": {"replicas": 3, "selector": {}, "template": {"metadata": {"labels": {}}}},
    }


def test_aggregate_status(interp: Interpreter) -> None:
    use(
        interp,
        ("apps/v1", "Deployment"),
        statusAggregation="""function AggregateStatus(desiredObj, statusItems)
  for i = 1, #statusItems do
    desiredObj.status.readyReplicas = desiredObj.status.readyReplicas + statusItems[i].status.readyReplicas
  end
  return desiredObj
end""",
    )
    obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {}, "status": {"readyReplicas": 1}}
    member = {"replicas": 0, "readyReplicas": 1}
    items = [
        {"clusterName": "member1", "status": member, "applied": True},
        {"clusterName": "member2", "status": member, "applied": True},
    ]
    assert interp.aggregate_status(obj, items)["status"] == {"readyReplicas": 3}


def test_status_items_reach_lua_as_karmada_serializes_them(interp: Interpreter) -> None:
    use(
        interp,
        ("v1", "ConfigMap"),
        statusAggregation="""function AggregateStatus(obj, items)
  obj.status = {seen = {}}
  for i, item in ipairs(items) do
    obj.status.seen[i] = item.clusterName .. ":" .. tostring(item.applied) .. ":" .. tostring(item.health)
      .. ":" .. tostring(item.appliedMessage) .. ":" .. tostring(item.status)
  end
  return obj
end""",
    )
    items = [
        {"clusterName": "a", "status": None, "applied": False, "appliedMessage": "", "health": "Healthy"},
        {"clusterName": "b", "applied": True, "appliedMessage": "boom"},
    ]
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}
    assert interp.aggregate_status(obj, items)["status"] == {
        "seen": ["a:nil:Healthy:nil:nil", "b:true:nil:boom:nil"]
    }


def test_interpret_health(interp: Interpreter) -> None:
    use(
        interp,
        ("apps/v1", "Deployment"),
        healthInterpretation=(
            "function InterpretHealth(observedObj) return (observedObj.status.updatedReplicas == "
            "observedObj.spec.replicas) and "
            "(observedObj.metadata.generation == observedObj.status.observedGeneration) end"
        ),
    )
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"generation": 1},
        "spec": {"replicas": 2},
        "status": {
            "observedGeneration": 1,
            "replicas": 2,
            "readyReplicas": 2,
            "updatedReplicas": 2,
            "availableReplicas": 2,
        },
    }
    assert interp.interpret_health(obj) is True


RETAIN_OBSERVED = (
    "function Retain(desiredObj, observedObj)\n  desiredObj = observedObj\n  return desiredObj\nend"
)


def test_retain(interp: Interpreter) -> None:
    use(interp, ("apps/v1", "Deployment"), retention=RETAIN_OBSERVED)
    desired = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "fake-deployment"},
        "spec": {"replicas": 1},
    }
    observed = {**desired, "spec": {"replicas": 1, "paused": False, "strategy": {}}}
    assert interp.retain(desired, observed) == observed


def test_retain_refuses_a_result_without_kind(interp: Interpreter) -> None:
    use(interp, ("apps/v1", "Deployment"), retention="function Retain(d, o) return {spec = d.spec} end")
    with pytest.raises(errors.ScriptError, match="Object 'Kind' is missing"):
        interp.retain(DEPLOY, DEPLOY)


REFLECT = """function ReflectStatus(observedObj)
  if observedObj.status == nil then
    return nil
  end
  return observedObj.status
end"""


def test_reflect_status(interp: Interpreter) -> None:
    use(interp, ("v1", "ConfigMap"), statusReflection=REFLECT)
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}, "status": {"key": "value"}}
    assert interp.reflect_status(obj) == {"key": "value"}


def test_reflect_status_returning_nil_is_an_error(interp: Interpreter) -> None:
    use(interp, ("v1", "ConfigMap"), statusReflection=REFLECT)
    with pytest.raises(errors.ScriptError, match="expect the returned replica type is table but got nil"):
        interp.reflect_status({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})


def test_an_empty_reflected_status_is_an_empty_object(interp: Interpreter) -> None:
    use(interp, ("v1", "ConfigMap"), statusReflection="function ReflectStatus(o) return {} end")
    assert interp.reflect_status({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}) == {}


SA_BY_LOOP = """function GetDependencies(desiredObj)
  dependentSas = {}
  refs = {}
  if desiredObj.spec.template.spec.serviceAccountName ~= nil
      and desiredObj.spec.template.spec.serviceAccountName ~= 'default' then
    dependentSas[desiredObj.spec.template.spec.serviceAccountName] = true
  end
  local idx = 1
  for key, value in pairs(dependentSas) do
    dependObj = {}
    dependObj.apiVersion = 'v1'
    dependObj.kind = 'ServiceAccount'
    dependObj.name = key
    dependObj.namespace = desiredObj.metadata.namespace
    refs[idx] = dependObj
    idx = idx + 1
  end
  return refs
end"""
SA_BY_KUBE = """local kube = require("kube")
function GetDependencies(desiredObj)
  dependencies = kube.getPodDependencies(desiredObj.spec.template, desiredObj.metadata.namespace)
  return dependencies
end"""


@pytest.mark.parametrize(
    ("script", "namespace", "expected"),
    [
        pytest.param(SA_BY_LOOP, "test", "test", id="a script that builds references itself"),
        pytest.param(SA_BY_KUBE, "test", "test", id="a script that uses kube.getPodDependencies"),
        pytest.param(SA_BY_KUBE, None, "default", id="kube.getPodDependencies in the default namespace"),
    ],
)
def test_get_dependencies(interp: Interpreter, script: str, namespace: str | None, expected: str) -> None:
    use(interp, ("apps/v1", "Deployment"), dependencyInterpretation=script)
    meta: dict[str, Any] = {"name": "test", **({"namespace": namespace} if namespace else {})}
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {"template": {"spec": {"serviceAccountName": "test"}}},
    }
    assert interp.get_dependencies(obj) == [
        {"apiVersion": "v1", "kind": "ServiceAccount", "namespace": expected, "name": "test"}
    ]
