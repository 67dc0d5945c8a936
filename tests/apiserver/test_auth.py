"""Who may do what: tokens, anonymous callers, pull agents."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetkeeper import errors
from fleetkeeper.apiserver.auth import ADMIN, ANONYMOUS, Attributes, Tokens, authorize

TOKENS = Tokens(admin="root")
TOKENS.add_agent("member1", "agent1")
AGENT = TOKENS.authenticate("Bearer agent1")


def test_tokens_identify_callers() -> None:
    assert TOKENS.authenticate("Bearer root") is ADMIN
    assert TOKENS.authenticate(None) is ANONYMOUS
    assert AGENT.cluster == "member1" and not AGENT.is_admin
    for header in ("Bearer nope", "Basic cm9vdA==", "Bearer "):
        with pytest.raises(errors.Unauthorized):
            TOKENS.authenticate(header)


def test_tokens_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    created = Tokens.load_or_create(path)
    created.add_agent("m2")
    created.save(path)
    again = Tokens.load_or_create(path)
    assert again.admin == created.admin and again.agents == created.agents
    assert path.stat().st_mode & 0o777 == 0o600


CLUSTER, LEASE, WORK = ("cluster.karmada.io", "clusters"), ("coordination.k8s.io", "leases"), \
    ("work.karmada.io", "works")


@pytest.mark.parametrize(("verb", "what", "namespace", "name", "sub", "selector", "allowed"), [
    ("get", CLUSTER, "", "member1", None, None, True),
    ("get", CLUSTER, "", "member2", None, None, False),
    ("patch", CLUSTER, "", "member1", "status", None, True),
    ("update", CLUSTER, "", "member1", None, None, True),
    ("update", CLUSTER, "", "member2", None, None, False),
    ("delete", CLUSTER, "", "member1", None, None, False),
    ("watch", CLUSTER, "", "", None, "metadata.name=member1", True),
    ("list", CLUSTER, "", "", None, None, False),
    ("create", LEASE, "karmada-cluster", "member1", None, None, True),
    ("update", LEASE, "karmada-cluster", "member2", None, None, False),
    ("get", LEASE, "kube-system", "member1", None, None, False),
    ("create", WORK, "karmada-es-member1", "w", None, None, True),
    ("list", WORK, "karmada-es-member1", "", None, None, True),
    ("patch", WORK, "karmada-es-member1", "w", "status", None, True),
    ("create", WORK, "karmada-es-member2", "w", None, None, False),
    ("list", ("policy.karmada.io", "propagationpolicies"), "default", "", None, None, False),
    ("create", CLUSTER, "", "member1", None, None, True),
    ("create", CLUSTER, "", "member2", None, None, False),
    ("create", ("", "events"), "default", "e1", None, None, True),
    ("patch", ("", "events"), "default", "e1", None, None, True),
    ("create", ("", "events"), "karmada-es-member1", "e1", None, None, True),
    ("create", ("events.k8s.io", "events"), "karmada-es-member1", "e1", None, None, True),
    ("create", ("", "events"), "kube-system", "e1", None, None, False),
    ("create", ("", "events"), "karmada-es-member2", "e1", None, None, False),
    ("delete", ("", "events"), "default", "e1", None, None, False),
    ("create", ("fleetkeeper.io", "timelineentries"), "default", "tl-1", None, None, False),
    ("delete", ("fleetkeeper.io", "timelineentries"), "default", "tl-1", None, None, False),
    ("get", ("", "secrets"), "karmada-cluster", "member1", None, None, False),
    ("list", ("", "secrets"), "karmada-es-member1", "", None, None, False),
], ids=["reads its cluster", "not another cluster", "writes its cluster status", "updates its cluster spec",
        "not another cluster's spec",
        "cannot delete its cluster", "watches its cluster by name", "cannot list every cluster",
        "creates its lease", "not another lease", "not a lease elsewhere", "creates works in its namespace",
        "lists works in its namespace", "writes work status", "not works of another cluster",
        "not policies", "registers its own cluster", "cannot register another cluster",
        "records events about its cluster", "counts repeats of its events", "records events about its works",
        "records events.k8s.io events", "no events elsewhere", "no events in another cluster's namespace",
        "cannot delete events", "never writes the timeline", "cannot delete timeline entries",
        "cannot read its cluster's secret", "cannot read secrets in its namespace"])
def test_a_pull_agent_is_confined(verb: str, what: tuple[str, str], namespace: str, name: str,
                                  sub: str | None, selector: str | None, allowed: bool) -> None:
    attrs = Attributes(verb, what[0], what[1], namespace, name, sub, selector)
    if allowed:
        authorize(AGENT, attrs)
    else:
        with pytest.raises(errors.Forbidden) as caught:
            authorize(AGENT, attrs)
        assert "karmada-es-member1" in caught.value.message and AGENT.name in caught.value.message


def test_anonymous_callers_need_a_token_and_admins_may_do_anything() -> None:
    attrs = Attributes("get", "cluster.karmada.io", "clusters", "", "member1")
    with pytest.raises(errors.Unauthorized):
        authorize(ANONYMOUS, attrs)
    authorize(ADMIN, Attributes("deletecollection", "work.karmada.io", "works", "x", ""))
