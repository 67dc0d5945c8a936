"""Well-known names of the Karmada wire contract, and the pure name rules.

Everything here is part of compatibility: taint keys, labels, annotations, finalizers,
condition types and reasons, event reasons, reserved namespaces and the way binding,
Work and execution-namespace names are derived. Values are quoted exactly as Karmada
writes them, so objects produced by fleetkeeper and by Karmada are interchangeable.

The name functions are pure and deterministic (``work_name`` hashes with 32-bit FNV-1a
and spells the decimal digits with Karmada's 27-letter alphabet), so any component can
recompute the name of the object another component wrote.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

# --- groups / versions ----------------------------------------------------------------------------
CLUSTER_API_VERSION: Final = "cluster.karmada.io/v1alpha1"
POLICY_API_VERSION: Final = "policy.karmada.io/v1alpha1"
WORK_V1ALPHA1: Final = "work.karmada.io/v1alpha1"
WORK_V1ALPHA2: Final = "work.karmada.io/v1alpha2"
REMEDY_API_VERSION: Final = "remedy.karmada.io/v1alpha1"
APPS_API_VERSION: Final = "apps.karmada.io/v1alpha1"
NETWORKING_API_VERSION: Final = "networking.karmada.io/v1alpha1"
CONFIG_API_VERSION: Final = "config.karmada.io/v1alpha1"

# --- taints ---------------------------------------------------------------------------------------
TAINT_CLUSTER_NOT_READY: Final = "cluster.karmada.io/not-ready"
TAINT_CLUSTER_UNREACHABLE: Final = "cluster.karmada.io/unreachable"
TAINT_CLUSTER_UNSCHEDULABLE: Final = "cluster.karmada.io/unschedulable"

EFFECT_NO_SCHEDULE: Final = "NoSchedule"
EFFECT_PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
EFFECT_NO_EXECUTE: Final = "NoExecute"
#: effects a Cluster taint may carry (validation)
CLUSTER_TAINT_EFFECTS: Final = frozenset({EFFECT_NO_SCHEDULE, EFFECT_NO_EXECUTE})

TOLERATION_OP_EQUAL: Final = "Equal"
TOLERATION_OP_EXISTS: Final = "Exists"

# --- labels ---------------------------------------------------------------------------------------
PP_PERMANENT_ID_LABEL: Final = "propagationpolicy.karmada.io/permanent-id"
CPP_PERMANENT_ID_LABEL: Final = "clusterpropagationpolicy.karmada.io/permanent-id"
RB_PERMANENT_ID_LABEL: Final = "resourcebinding.karmada.io/permanent-id"
CRB_PERMANENT_ID_LABEL: Final = "clusterresourcebinding.karmada.io/permanent-id"
WORK_PERMANENT_ID_LABEL: Final = "work.karmada.io/permanent-id"
MANAGED_BY_KARMADA_LABEL: Final = "karmada.io/managed"
MANAGED_BY_KARMADA_LABEL_VALUE: Final = "true"
KARMADA_SYSTEM_LABEL: Final = "karmada.io/system"
KARMADA_SYSTEM_LABEL_VALUE: Final = "true"
#: the label selector of Karmada's system namespaces (the execution namespaces among them)
KARMADA_SYSTEM_SELECTOR: Final = f"{KARMADA_SYSTEM_LABEL}={KARMADA_SYSTEM_LABEL_VALUE}"
BINDING_MANAGED_BY_LABEL: Final = "binding.karmada.io/managed-by"
DEPENDED_BY_LABEL_PREFIX: Final = "resourcebinding.karmada.io/depended-by-"
DELETION_PROTECTION_LABEL: Final = "resourcetemplate.karmada.io/deletion-protected"
DELETION_PROTECTION_ALWAYS: Final = "Always"
RETAIN_REPLICAS_LABEL: Final = "resourcetemplate.karmada.io/retain-replicas"
#: a Namespace labelled with it (value ``"true"``) is not propagated to the members
NAMESPACE_SKIP_AUTO_PROPAGATION_LABEL: Final = "namespace.karmada.io/skip-auto-propagation"

# --- annotations ----------------------------------------------------------------------------------
PP_NAMESPACE_ANNOTATION: Final = "propagationpolicy.karmada.io/namespace"
PP_NAME_ANNOTATION: Final = "propagationpolicy.karmada.io/name"
CPP_NAME_ANNOTATION: Final = "clusterpropagationpolicy.karmada.io/name"
RB_NAMESPACE_ANNOTATION: Final = "resourcebinding.karmada.io/namespace"
RB_NAME_ANNOTATION: Final = "resourcebinding.karmada.io/name"
CRB_NAME_ANNOTATION: Final = "clusterresourcebinding.karmada.io/name"
WORK_NAMESPACE_ANNOTATION: Final = "work.karmada.io/namespace"
WORK_NAME_ANNOTATION: Final = "work.karmada.io/name"
CONFLICT_RESOLUTION_ANNOTATION: Final = "work.karmada.io/conflict-resolution"
CONFLICT_RESOLUTION_OVERWRITE: Final = "overwrite"
CONFLICT_RESOLUTION_ABORT: Final = "abort"
APPLIED_PLACEMENT_ANNOTATION: Final = "policy.karmada.io/applied-placement"
APPLIED_OVERRIDES_ANNOTATION: Final = "policy.karmada.io/applied-overrides"
APPLIED_CLUSTER_OVERRIDES_ANNOTATION: Final = "policy.karmada.io/applied-cluster-overrides"
RESOURCE_TEMPLATE_UID_ANNOTATION: Final = "resourcetemplate.karmada.io/uid"
RESOURCE_TEMPLATE_GENERATION_ANNOTATION: Final = "resourcetemplate.karmada.io/generation"
MANAGED_LABELS_ANNOTATION: Final = "resourcetemplate.karmada.io/managed-labels"
MANAGED_ANNOTATIONS_ANNOTATION: Final = "resourcetemplate.karmada.io/managed-annotations"
DEPENDENCIES_ANNOTATION: Final = "resourcebinding.karmada.io/dependencies"
#: fleetkeeper's fault drills on simulated members (``fleetkeeper fault``): annotations on a Cluster
FAULT_ANNOTATION_PREFIX: Final = "faults.fleetkeeper.io/"

# --- finalizers -----------------------------------------------------------------------------------
CLUSTER_CONTROLLER_FINALIZER: Final = "karmada.io/cluster-controller"
EXECUTION_CONTROLLER_FINALIZER: Final = "karmada.io/execution-controller"
BINDING_CONTROLLER_FINALIZER: Final = "karmada.io/binding-controller"
CLUSTER_RESOURCE_BINDING_CONTROLLER_FINALIZER: Final = "karmada.io/cluster-resource-binding-controller"
BINDING_DEPENDENCIES_DISTRIBUTOR_FINALIZER: Final = "karmada.io/binding-dependencies-distributor"
PROPAGATION_POLICY_CONTROLLER_FINALIZER: Final = "karmada.io/propagation-policy-controller"
CLUSTER_PROPAGATION_POLICY_CONTROLLER_FINALIZER: Final = "karmada.io/cluster-propagation-policy-controller"
#: Kubernetes' finalizer of an object deleted with ``propagationPolicy: Foreground``: it stays,
#: deleting, until the dependents that block their owner's deletion are gone
FOREGROUND_DELETION_FINALIZER: Final = "foregroundDeletion"

# --- condition types ------------------------------------------------------------------------------
COND_READY: Final = "Ready"
#: fleetkeeper's (additive) early warning: the latest probe verdict *before* the success/failure
#: thresholds; the partition circuit breaker counts clusters whose probes already fail
COND_REACHABLE: Final = "fleetkeeper.io/Reachable"
COND_COMPLETE_API_ENABLEMENTS: Final = "CompleteAPIEnablements"
COND_SERVICE_DOMAIN_NAME_RESOLUTION_READY: Final = "ServiceDomainNameResolutionReady"
COND_SCHEDULED: Final = "Scheduled"
COND_FULLY_APPLIED: Final = "FullyApplied"
COND_WORK_APPLIED: Final = "Applied"
COND_WORK_PROGRESSING: Final = "Progressing"
COND_WORK_AVAILABLE: Final = "Available"
COND_WORK_DEGRADED: Final = "Degraded"
COND_WORK_DISPATCHING: Final = "Dispatching"

# --- condition reasons and messages ---------------------------------------------------------------
REASON_CLUSTER_READY: Final = "ClusterReady"
REASON_CLUSTER_NOT_READY: Final = "ClusterNotReady"
REASON_CLUSTER_NOT_REACHABLE: Final = "ClusterNotReachable"
REASON_STATUS_COLLECTION_FAILED: Final = "StatusCollectionFailed"
REASON_CLUSTER_STATUS_NEVER_UPDATED: Final = "ClusterStatusNeverUpdated"
REASON_CLUSTER_STATUS_UNKNOWN: Final = "ClusterStatusUnknown"
REASON_API_ENABLEMENTS_COMPLETE: Final = "Complete"
REASON_API_ENABLEMENTS_PARTIAL: Final = "Partial"
REASON_API_ENABLEMENTS_EMPTY: Final = "Empty"
REASON_SERVICE_DOMAIN_NAME_RESOLUTION_READY: Final = "ServiceDomainNameResolutionReady"
REASON_SERVICE_DOMAIN_NAME_RESOLUTION_FAILED: Final = "ServiceDomainNameResolutionFailed"

MSG_CLUSTER_READY: Final = "cluster is healthy and ready to accept workloads"
MSG_CLUSTER_NOT_READY: Final = "cluster is reachable but health endpoint responded without ok"
MSG_CLUSTER_NOT_REACHABLE: Final = "cluster is not reachable"
MSG_CLUSTER_STATUS_NEVER_UPDATED: Final = "Cluster status controller never posted cluster status."
MSG_CLUSTER_STATUS_UNKNOWN: Final = "Cluster status controller stopped posting cluster status."
MSG_API_ENABLEMENTS_COMPLETE: Final = "collected complete APIEnablements from the cluster"
MSG_API_ENABLEMENTS_EMPTY: Final = "collected empty APIEnablements from the cluster"
MSG_SERVICE_DOMAIN_NAME_RESOLUTION_READY: Final = "service domain name resolution is ready"
MSG_SERVICE_DOMAIN_NAME_RESOLUTION_FAILED: Final = "service domain name resolution is unready"

REASON_BINDING_SCHEDULED: Final = "Success"
REASON_NO_CLUSTER_FIT: Final = "NoClusterFit"
REASON_UNSCHEDULABLE: Final = "Unschedulable"
REASON_QUOTA_EXCEEDED: Final = "QuotaExceeded"
REASON_SCHEDULER_ERROR: Final = "SchedulerError"
MSG_BINDING_SCHEDULED: Final = "Binding has been scheduled successfully."
REASON_FULLY_APPLIED_SUCCESS: Final = "FullyAppliedSuccess"
REASON_FULLY_APPLIED_FAILED: Final = "FullyAppliedFailed"
MSG_FULLY_APPLIED_SUCCESS: Final = "All works have been successfully applied"
MSG_FULLY_APPLIED_FAILED: Final = "Failed to apply all works, see status.aggregatedStatus for details"

REASON_WORK_APPLIED_SUCCESSFUL: Final = "AppliedSuccessful"
REASON_WORK_APPLIED_FAILED: Final = "AppliedFailed"
MSG_WORK_APPLIED_SUCCESSFUL: Final = "Manifest has been successfully applied"
REASON_WORK_DISPATCHING: Final = "Dispatching"
REASON_WORK_SUSPEND_DISPATCHING: Final = "SuspendDispatching"
MSG_WORK_DISPATCHING: Final = "Work is being dispatched to member clusters."
MSG_WORK_SUSPEND_DISPATCHING: Final = "Work dispatching is in a suspended state."

# --- resource health ------------------------------------------------------------------------------
HEALTHY: Final = "Healthy"
UNHEALTHY: Final = "Unhealthy"
UNKNOWN: Final = "Unknown"

# --- event reasons --------------------------------------------------------------------------------
EVENT_TYPE_NORMAL: Final = "Normal"
EVENT_TYPE_WARNING: Final = "Warning"

EVENT_CREATE_EXECUTION_SPACE_SUCCEED: Final = "CreateExecutionSpaceSucceed"
EVENT_CREATE_EXECUTION_SPACE_FAILED: Final = "CreateExecutionSpaceFailed"
EVENT_REMOVE_EXECUTION_SPACE_SUCCEED: Final = "RemoveExecutionSpaceSucceed"
EVENT_REMOVE_EXECUTION_SPACE_FAILED: Final = "RemoveExecutionSpaceFailed"
EVENT_TAINT_CLUSTER_SUCCEED: Final = "TaintClusterSucceed"
EVENT_TAINT_CLUSTER_FAILED: Final = "TaintClusterFailed"
EVENT_EVICT_WORKLOAD_SUCCEED: Final = "EvictWorkloadFromClusterSucceed"
EVENT_EVICT_WORKLOAD_FAILED: Final = "EvictWorkloadFromClusterFailed"
EVENT_SCHEDULE_BINDING_SUCCEED: Final = "ScheduleBindingSucceed"
EVENT_SCHEDULE_BINDING_FAILED: Final = "ScheduleBindingFailed"
EVENT_SYNC_WORK_SUCCEED: Final = "SyncWorkSucceed"
EVENT_SYNC_WORK_FAILED: Final = "SyncWorkFailed"
EVENT_APPLY_POLICY_SUCCEED: Final = "ApplyPolicySucceed"
EVENT_APPLY_POLICY_FAILED: Final = "ApplyPolicyFailed"
EVENT_APPLY_OVERRIDE_POLICY_SUCCEED: Final = "ApplyOverridePolicySucceed"
EVENT_APPLY_OVERRIDE_POLICY_FAILED: Final = "ApplyOverridePolicyFailed"
EVENT_CLEANUP_WORK_FAILED: Final = "CleanupWorkFailed"
EVENT_SYNC_SUCCEED: Final = "SyncSucceed"
EVENT_SYNC_FAILED: Final = "SyncFailed"
EVENT_WORK_DISPATCHING: Final = "WorkDispatching"
EVENT_REFLECT_STATUS_SUCCEED: Final = "ReflectStatusSucceed"
EVENT_REFLECT_STATUS_FAILED: Final = "ReflectStatusFailed"
EVENT_INTERPRET_HEALTH_SUCCEED: Final = "InterpretHealthSucceed"
EVENT_INTERPRET_HEALTH_FAILED: Final = "InterpretHealthFailed"
EVENT_AGGREGATE_STATUS_SUCCEED: Final = "AggregateStatusSucceed"
EVENT_AGGREGATE_STATUS_FAILED: Final = "AggregateStatusFailed"
EVENT_GET_DEPENDENCIES_SUCCEED: Final = "GetDependenciesSucceed"
EVENT_GET_DEPENDENCIES_FAILED: Final = "GetDependenciesFailed"
EVENT_SYNC_SCHEDULE_RESULT_TO_DEPENDENCIES_SUCCEED: Final = "SyncScheduleResultToDependenciesSucceed"
EVENT_SYNC_SCHEDULE_RESULT_TO_DEPENDENCIES_FAILED: Final = "SyncScheduleResultToDependenciesFailed"
EVENT_DEPENDENCY_POLICY_CONFLICT: Final = "DependencyPolicyConflict"
EVENT_LOAD_COREDNS_CONDITION_FAILED: Final = "LoadCorednsConditionFailed"
EVENT_STORE_COREDNS_CONDITION_FAILED: Final = "StoreCorednsConditionFailed"

# --- eviction producers and reasons ---------------------------------------------------------------
PRODUCER_TAINT_MANAGER: Final = "TaintManager"
PRODUCER_RB_APPLICATION_FAILOVER: Final = "resource-binding-application-failover-controller"
PRODUCER_CRB_APPLICATION_FAILOVER: Final = "cluster-resource-binding-application-failover-controller"
EVICTION_REASON_TAINT_UNTOLERATED: Final = "TaintUntolerated"
EVICTION_REASON_APPLICATION_FAILURE: Final = "ApplicationFailure"

# --- purge modes and other enum values ------------------------------------------------------------
PURGE_DIRECTLY: Final = "Directly"
PURGE_GRACEFULLY: Final = "Gracefully"
PURGE_NEVER: Final = "Never"
#: seed/pre-v1.19 spellings accepted on input and normalised
LEGACY_PURGE_MODES: Final = MappingProxyType({"Immediately": PURGE_DIRECTLY, "Graciously": PURGE_GRACEFULLY})

SYNC_MODE_PUSH: Final = "Push"
SYNC_MODE_PULL: Final = "Pull"
REPLICA_SCHEDULING_DUPLICATED: Final = "Duplicated"
REPLICA_SCHEDULING_DIVIDED: Final = "Divided"
DIVISION_AGGREGATED: Final = "Aggregated"
DIVISION_WEIGHTED: Final = "Weighted"
DYNAMIC_WEIGHT_AVAILABLE_REPLICAS: Final = "AvailableReplicas"
SPREAD_BY_CLUSTER: Final = "cluster"
SPREAD_BY_REGION: Final = "region"
SPREAD_BY_ZONE: Final = "zone"
SPREAD_BY_PROVIDER: Final = "provider"
REMEDY_ACTION_TRAFFIC_CONTROL: Final = "TrafficControl"

# --- defaults and timings -------------------------------------------------------------------------
DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"
DEFAULT_TOLERATION_SECONDS: Final = 300
DEFAULT_GRACE_PERIOD_SECONDS: Final = 600
#: fleetkeeper additive: how long an application-failover source cluster stays unschedulable
DEFAULT_BLOCK_PREDECESSOR_SECONDS: Final = 600
DEFAULT_LEASE_DURATION_SECONDS: Final = 40
CLUSTER_NAME_MAX_LENGTH: Final = 48

# --- feature gates: name → default ----------------------------------------------------------------
FEATURE_GATE_DEFAULTS: Final = MappingProxyType({
    "Failover": False,
    "GracefulEviction": True,
    "PropagateDeps": True,
    "StatefulFailoverInjection": False,
    "PropagationPolicyPreemption": False,
    "CustomizedClusterResourceModeling": True,
    "MultiClusterService": False,
    "ResourceQuotaEstimate": False,
    "PriorityBasedScheduling": True,
    "FederatedQuotaEnforcement": False,
    "MultiplePodTemplatesScheduling": False,
    "ControllerPriorityQueue": True,
    "WorkloadAffinity": False,
    "SchedulingOvercommitProtection": False,
})

# --- namespaces -----------------------------------------------------------------------------------
EXECUTION_SPACE_PREFIX: Final = "karmada-es-"
KARMADA_SYSTEM_NAMESPACE: Final = "karmada-system"
KARMADA_CLUSTER_NAMESPACE: Final = "karmada-cluster"
#: namespace of the per-cluster Leases renewed by pull agents
LEASE_NAMESPACE: Final = KARMADA_CLUSTER_NAMESPACE
DEFAULT_NAMESPACE: Final = "default"
#: the ``spec.finalizers`` entry that holds a deleted Namespace until the namespace cleanup has emptied it
NAMESPACE_FINALIZER: Final = "kubernetes"
#: the label every Namespace carries with its own name (Kubernetes sets it on every write)
LABEL_NAMESPACE_NAME: Final = "kubernetes.io/metadata.name"
#: namespaces a Karmada control plane has from the start (Kubernetes' own, then Karmada's)
SYSTEM_NAMESPACES: Final = (DEFAULT_NAMESPACE, "kube-system", "kube-public", "kube-node-lease",
                            KARMADA_SYSTEM_NAMESPACE, KARMADA_CLUSTER_NAMESPACE)
RESERVED_NAMESPACES: Final = frozenset({KARMADA_SYSTEM_NAMESPACE, KARMADA_CLUSTER_NAMESPACE})


def is_reserved_namespace(namespace: str) -> bool:
    """``karmada-system``, ``karmada-cluster`` and every execution namespace."""
    return namespace in RESERVED_NAMESPACES or namespace.startswith(EXECUTION_SPACE_PREFIX)


def execution_namespace(cluster: str) -> str:
    """The namespace holding the Works of one member cluster (``karmada-es-<cluster>``)."""
    return EXECUTION_SPACE_PREFIX + cluster


def cluster_of_space(namespace: str) -> str | None:
    """The cluster an execution namespace belongs to; None for any other namespace."""
    return namespace[len(EXECUTION_SPACE_PREFIX):] if namespace.startswith(EXECUTION_SPACE_PREFIX) else None


def cluster_of_execution_namespace(namespace: str) -> str:
    """The cluster an execution namespace belongs to; ``ValueError`` when it is not one."""
    if not namespace.startswith(EXECUTION_SPACE_PREFIX) or len(namespace) == len(EXECUTION_SPACE_PREFIX):
        raise ValueError(f"the namespace {namespace!r} is not an execution namespace "
                         f"(expected prefix {EXECUTION_SPACE_PREFIX!r})")
    return namespace[len(EXECUTION_SPACE_PREFIX):]


def binding_name(kind: str, name: str) -> str:
    """``lower(name' + '-' + kind)`` with every ``:`` of the name replaced by ``.``."""
    return f"{name.replace(':', '.')}-{kind}".lower()


_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
_FNV_OFFSET: Final = 0x811C9DC5
_FNV_PRIME: Final = 0x01000193


def fnv1a_32(data: bytes) -> int:
    """32-bit FNV-1a hash."""
    h = _FNV_OFFSET
    for b in data:
        h = ((h ^ b) * _FNV_PRIME) & 0xFFFFFFFF
    return h


def safe_encode(digits: str) -> str:
    """Spell each character with Karmada's vowel-free alphabet (``rand.SafeEncodeString``)."""
    return "".join(_ALPHABET[ord(c) % len(_ALPHABET)] for c in digits)


def work_name(kind: str, name: str, namespace: str) -> str:
    """The Work name for a template: ``name'' + '-' + encode(fnv1a(key))``.

    ``work_name("Deployment", "nginx", "default") == "nginx-687f7fb96f"``.
    """
    lowered = name.replace(":", ".").lower()
    key = (f"{namespace}-{lowered}-{kind}" if namespace else f"{lowered}-{kind}").lower()
    return f"{lowered}-{safe_encode(str(fnv1a_32(key.encode())))}"
