"""The dashboard in a real browser: headless Chromium (Debian's ``chromium`` and ``chromium-driver``)
driven through Selenium against ``fleetkeeper up``, as an on-call engineer would use it.

One plane for the module: anonymous first (only the sign-in page; every data request 401), then the
admin (three Ready cards, nginx member1:1 / member2:2; ``fleetkeeper fault clusterDown member1``
turns the card NotReady and the bars member2:3 without a reload, the timeline lists the eviction; a
drill through the page), then a Pull agent's token (its lists refused in words, no drills), then a
ServiceAccount with ``view`` in team-a (team-a's workloads only, read namespace by namespace). All
along: no console errors beyond the refusals asked for, no request outside the plane's origin, no
horizontal overflow at 1280×800 or 390×844. A screenshot of each view, at both sizes, before and
after the failover, is written to ``$FLEETKEEPER_TEST_ARTIFACTS/dashboard/`` when that variable is set,
else to the pytest temporary directory (``dashboard-screenshots*`` under pytest's basetemp,
``/tmp/pytest-of-$USER/pytest-current/``: pytest keeps the last three runs); the path is printed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleetkeeper.cli import chart

from .test_up import FLEETKEEPER, PROCESS, SEED, Fleet, healthy, wait_for, workload

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium missing: pip install -e '.[dev]'")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
    reason="headless browser tests need Debian's chromium and chromium-driver (apt-get install chromium "
    "chromium-driver; ./run test installs them when run as root)",
)

FAILOVER = ["--cluster-failure-threshold", "2s", "--cluster-success-threshold", "2s", "--failover-readiness"]
SIZES = {"laptop": (1280, 800), "phone": (390, 844)}
VIEWS = ("fleet", "workloads", "workload", "timeline", "whatif", "drills")
#: the data the page reads, and its own endpoint (each must be 401 without a token)
DATA = [
    "/apis/cluster.karmada.io/v1alpha1/clusters",
    "/apis/work.karmada.io/v1alpha2/resourcebindings",
    "/apis/work.karmada.io/v1alpha2/clusterresourcebindings",
    "/apis/fleetkeeper.io/v1alpha1/timelineentries",
    "/apis/cluster.karmada.io/v1alpha1/clusters?watch=1&resourceVersion=0",
]


def token_of(kubeconfig: Path) -> str:
    return str(yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"])


def spki_pin(certificate: Path) -> str:
    """The serving certificate's public-key pin, for Chromium to trust that one certificate."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    cert = x509.load_pem_x509_certificate(certificate.read_bytes())
    der = cert.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


class Browser:
    """A headless Chromium on the dashboard, with its console and network logs gathered."""

    def __init__(self, base: str, profile: Path, pin: str, shots: Path) -> None:
        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for flag in (
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            f"--ignore-certificate-errors-spki-list={pin}",
        ):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        service = webdriver.ChromeService(executable_path=str(CHROMEDRIVER))
        self.driver = webdriver.Chrome(service=service, options=options)
        self.base = base
        self.shots = shots
        self.console: list[dict[str, Any]] = []
        self.urls: list[str] = []
        self.size("laptop")

    def quit(self) -> None:
        self.driver.quit()

    def size(self, name: str) -> None:
        width, height = SIZES[name]
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": name == "phone"},
        )

    def logs(self) -> list[dict[str, Any]]:
        """The console entries since the last call (the requests made go to :attr:`urls`)."""
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message["method"] == "Network.requestWillBeSent":
                self.urls.append(message["params"]["request"]["url"])
        fresh = self.driver.get_log("browser")
        self.console += fresh
        return [e for e in fresh if e["level"] == "SEVERE"]

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def fetch(
        self,
        path: str,
        *,
        method: str = "GET",
        token: str | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> int:
        """The status of a request the page itself makes."""
        return int(
            self.driver.execute_async_script(
                """
            const [path, method, token, body, type, done] = arguments;
            const headers = {"Content-Type": type};
            if (token) headers.Authorization = "Bearer " + token;
            const init = {method, headers};
            if (body !== null) init.body = JSON.stringify(body);
            fetch(path, init).then((r) => { done(r.status); r.body && r.body.cancel(); }, () => done(-1));
        """,
                path,
                method,
                token,
                body,
                content_type,
            )
        )

    def until(self, check: Callable[[], Any], what: str, timeout: float = 40.0) -> Any:
        return wait_for(check, what, timeout)

    def sign_in(self, token: str) -> None:
        self.driver.get(self.base + "/dashboard/")
        field = self.driver.find_element("id", "token")
        field.send_keys(token)
        field.submit()
        self.until(lambda: self.js("return !document.getElementById('app').hidden"), "the signed-in page")

    def show(self, view: str) -> None:
        if view == "workload":  # from the list to its page, or by its address for a token that may not list
            self.show("workloads")
            self.until(lambda: self.js("return document.getElementById('view').children.length"), "workloads")
            if self.js("return !document.querySelector('#view .notice[data-status]')"):
                self.until(
                    lambda: self.js("return document.querySelector('[data-binding] a')"), "a workload link"
                )
                self.js("document.querySelector('[data-binding=\"default/nginx-deployment\"] a').click()")
            else:
                self.js("location.hash = '#workload/default/nginx-deployment'")
        else:
            self.js("document.querySelector(`nav a[data-view='${arguments[0]}']`).click()", view)
        self.until(
            lambda: self.js("return document.body.dataset.view === arguments[0]", view), f"#{view} shown"
        )

    def overflow(self) -> int:
        """How far the page is wider than the viewport (0: no horizontal scrolling)."""
        return int(
            self.js(
                "return Math.max(document.documentElement.scrollWidth, "
                "document.body.scrollWidth) - window.innerWidth"
            )
        )

    def screenshots(self, label: str) -> None:
        """Each view at each size: a screenshot, and no horizontal overflow."""
        for size in SIZES:
            self.size(size)
            for view in VIEWS:
                self.show(view)
                self.until(lambda: self.js("return document.getElementById('view').children.length"), view)
                self.driver.save_screenshot(str(self.shots / f"{label}-{view}-{size}.png"))
                assert self.overflow() <= 0, f"{view} overflows horizontally at {SIZES[size]}"
        self.size("laptop")

    def cards(self) -> dict[str, str]:
        return dict(
            self.js(
                "return Array.from(document.querySelectorAll('article.cluster'))"
                ".map((e) => [e.dataset.cluster, e.dataset.ready])"
            )
        )

    def bars(self, binding: str) -> dict[str, int]:
        found = self.js(
            """
            const card = document.querySelector(`[data-binding="${arguments[0]}"]`);
            return card ? Array.from(card.querySelectorAll('.replicas'))
              .map((e) => [e.dataset.cluster, Number(e.dataset.replicas)]) : null;""",
            binding,
        )
        return dict(found or [])


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Fleet, str]]:
    """``fleetkeeper up`` with the seed applied and Healthy, and a Pull agent's token."""
    fleet = Fleet(tmp_path_factory.mktemp("dashboard-plane"))
    try:
        up = fleet.up("--clusters", "3", *FAILOVER)
        assert f"dashboard    {fleet.server}/dashboard/ (sign in" in up.stdout
        fleet.kubectl_ok("apply", "-f", "-", stdin=SEED)
        wait_for(lambda: healthy(fleet, "nginx-deployment", {"member1": 1, "member2": 2}), "nginx Healthy")
        minted = subprocess.run(
            [*FLEETKEEPER, "token", "create-agent", "edge9", "--state-dir", str(fleet.state)],
            capture_output=True,
            text=True,
            timeout=PROCESS,
            env=fleet.env,
            check=False,
        )
        assert minted.returncode == 0, minted.stderr
        yield fleet, token_of(fleet.state / "agent-edge9.kubeconfig")
    finally:
        fleet.stop_all()


@pytest.fixture(scope="module")
def browser(plane: tuple[Fleet, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    fleet, _ = plane
    kept = os.environ.get("FLEETKEEPER_TEST_ARTIFACTS")
    shots = Path(kept) / "dashboard" if kept else tmp_path_factory.mktemp("dashboard-screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    profile = tmp_path_factory.mktemp("chromium-profile")
    opened = Browser(fleet.server, profile, spki_pin(fleet.state / "pki" / "apiserver.crt"), shots)
    try:
        yield opened
    finally:
        opened.quit()
        shutil.rmtree(profile, ignore_errors=True)
        print(f"dashboard screenshots: {shots}")


def test_anonymous_callers_get_the_sign_in_page_and_no_data(browser: Browser) -> None:
    browser.driver.get(browser.base + "/dashboard/")
    assert browser.driver.find_element("id", "token").is_displayed()
    assert browser.js("return document.getElementById('app').hidden") is True
    statuses = {path: browser.fetch(path) for path in DATA}
    statuses["whatif"] = browser.fetch("/dashboard/api/whatif", method="POST", body={"each": "cluster"})
    assert set(statuses.values()) == {401}, statuses
    field = browser.driver.find_element("id", "token")
    field.send_keys("not-a-token-of-this-plane")
    field.submit()
    said = browser.until(lambda: browser.js("return document.getElementById('signin-error').textContent"),
                         "the refused token, in words")
    assert "not accepted (401)" in said and browser.js("return sessionStorage.length") == 0
    refused = browser.logs()
    assert all(e["source"] == "network" and " 401 " in e["message"] for e in refused), refused
    requested = {u.removeprefix(browser.base) for u in browser.urls}
    assert {"/dashboard/", "/dashboard/app.js", "/dashboard/style.css"} <= requested
    browser.urls.clear()


def test_the_admin_watches_a_failover_live(plane: tuple[Fleet, str], browser: Browser) -> None:
    fleet, _ = plane
    browser.sign_in(token_of(fleet.kubeconfig))
    browser.js("window.__signedIn = 'this page'")  # gone if anything reloads it
    browser.show("fleet")
    browser.until(lambda: browser.cards() == {f"member{i}": "Ready" for i in (1, 2, 3)}, "three Ready cards")
    browser.until(
        lambda: browser.js("return document.querySelector('[data-cluster=member1] .whatif[data-moved]')"),
        "the what-if numbers on the cards",
    )
    browser.show("workloads")
    browser.until(
        lambda: browser.bars("default/nginx-deployment") == {"member1": 1, "member2": 2},
        "nginx member1:1 / member2:2",
    )
    browser.show("whatif")
    browser.until(
        lambda: browser.js("return document.querySelector('input[name=down][value=member1]')"), "picks"
    )
    browser.js("document.querySelector('input[name=down][value=member1]').click()")
    browser.js("document.querySelector('button[name=ask]').click()")
    row = browser.until(
        lambda: browser.js(
            "const r = document.querySelector('.result tr[data-binding=\"default/nginx-deployment\"]');"
            "return r && Array.from(r.cells).map((c) => c.textContent)"
        ),
        "the what-if of member1",
    )
    assert row[1:3] == ["member1:1, member2:2", "member2:3"]
    browser.screenshots("before")

    said = fleet.cli("fault", "clusterDown", "member1")
    assert said.returncode == 0, said.stderr
    browser.show("fleet")
    browser.until(lambda: browser.cards().get("member1") == "NotReady", "member1 NotReady")
    browser.show("workloads")
    browser.until(lambda: browser.bars("default/nginx-deployment") == {"member2": 3}, "nginx member2:3")
    browser.show("timeline")
    evictions = browser.until(
        lambda: browser.js(
            "return Array.from(document.querySelectorAll('.timeline li[data-action=EvictionStarted]'))"
            ".map((e) => e.textContent).filter((t) => t.includes('member1'))"
        ),
        "the eviction on the timeline",
    )
    assert "nginx-deployment" in evictions[0]
    browser.show("workload")
    browser.until(
        lambda: browser.js("return document.querySelector('svg.chart .mark[data-kind=evicted]')"),
        "the eviction marked on the workload's chart",
    )
    entries = fleet.json("get", "timelineentries")["items"]
    drawn = chart.from_entries(entries, title="all")
    in_page = browser.js("return FK.buildChart(arguments[0]).series", entries)
    expected = {s.cluster: [(round(t), v) for t, v in s.points] for s in drawn.series}
    assert expected["member1"][-1][1] == 0 and expected["member2"][-1][1] == 3
    assert {c: [(round(t), v) for t, v in p] for c, p in in_page.items()} == expected, "as --chart draws it"

    browser.show("timeline")
    browser.js("const s = document.querySelector('select[name=action]');"
               "s.value = 'EvictionStarted'; s.dispatchEvent(new Event('change'));")
    browser.until(lambda: browser.js(
        "const a = Array.from(document.querySelectorAll('.timeline li')).map((e) => e.dataset.action);"
        "return a.length && a.every((x) => x === 'EvictionStarted')"), "the timeline filtered by action")
    browser.show("workloads")
    search = browser.driver.find_element("css selector", "input[type=search]")
    search.send_keys("no-such-workload")
    browser.until(lambda: browser.bars("default/nginx-deployment") == {}, "the search filtering nginx out")
    search.clear()
    search.send_keys("member2")
    browser.until(lambda: browser.bars("default/nginx-deployment") == {"member2": 3}, "a search by cluster")
    browser.screenshots("after")

    browser.show("drills")
    browser.until(
        lambda: browser.js("return document.querySelector('.drill[data-cluster=member1] select')"),
        "the drills",
    )
    browser.js(
        "const s = document.querySelector('.drill[data-cluster=member1] select');"
        "s.value = 'clusterUp'; s.dispatchEvent(new Event('change'));"
    )
    browser.js("document.querySelector('.drill[data-cluster=member1] button[name=run]').click()")
    browser.until(
        lambda: browser.js("return document.querySelector('.confirm button[name=confirm]')"),
        "the confirmation",
    )
    before = fleet.json("get", "cluster", "member1")["metadata"].get("annotations") or {}
    assert before.get("faults.fleetkeeper.io/api") == "down", "nothing is written before the confirmation"
    browser.js("document.querySelector('.confirm button[name=confirm]').click()")
    browser.until(
        lambda: browser.js("return (document.querySelector('[data-result=drill].ok') || {}).textContent"),
        "the drill's result",
    )
    annotations = fleet.json("get", "cluster", "member1")["metadata"].get("annotations") or {}
    assert "faults.fleetkeeper.io/api" not in annotations, "clusterUp removes the fault, as the command does"
    crashed = drill(browser, fleet, "member2", "crashWorkload", workload="deployment/nginx")
    assert crashed["metadata"]["annotations"]["faults.fleetkeeper.io/crashed-workloads"] == (
        '[{"apiVersion":"apps/v1","kind":"Deployment","namespace":"default","name":"nginx"}]'
    ), "the annotation fleetkeeper fault crashWorkload member2 deployment/nginx writes"
    healed = drill(browser, fleet, "member2", "healWorkload", workload="deployment/nginx")
    assert "faults.fleetkeeper.io/crashed-workloads" not in (healed["metadata"].get("annotations") or {})
    assert browser.js("return window.__signedIn") == "this page", "the page was reloaded"
    assert browser.logs() == [], "the console shows errors"
    outside = [u for u in browser.urls if not (u.startswith(browser.base + "/") or u.startswith("data:"))]
    assert outside == [], "requests outside the plane's origin"


def entry(time: str, kind: str, name: str, action: str, message: str) -> dict[str, Any]:
    subject = {"kind": kind, "name": name} | ({} if kind == "Cluster" else {"namespace": "default"})
    return {"time": time, "subject": subject, "action": action, "message": message}


def test_the_page_draws_what_chart_draws_to_the_microsecond(browser: Browser) -> None:
    # one millisecond holds the start (member3) and the first result; a later result brings in a
    # cluster nothing named before; and b's result lands 1.499999 s after the start, which
    # milliseconds alone would make 1.5 s (and round to 2 where --chart's rounds to 1)
    entries = [
        entry("2026-01-01T10:00:00.000900Z", "ResourceBinding", "a", "Scheduled",
              "scheduled to {member1:1, member2:2}"),
        entry("2026-01-01T10:00:00.000100Z", "Cluster", "member3", "ConditionChanged", "Ready=True"),
        entry("2026-01-01T10:00:01.500099Z", "ResourceBinding", "b", "Scheduled",
              "scheduled to {member2:1}"),
        entry("2026-01-01T10:00:01.999999Z", "Cluster", "member1", "ConditionChanged", "Ready=False"),
        entry("2026-01-01T10:00:03.000001Z", "ResourceBinding", "a", "Scheduled",
              "scheduled to {member2:1, member4:2} (was {member1:1, member2:2})"),
        entry("2026-01-01T10:00:03+00:00", "Cluster", "member4", "TaintAdded", "x:NoExecute"),
    ]
    drawn = chart.from_entries(entries, title="crafted")
    in_page = browser.js("return FK.buildChart(arguments[0])", entries)
    expected = {s.cluster: [[t, v] for t, v in s.points] for s in drawn.series}
    assert expected["member4"] == [[0.0, 0], [pytest.approx(2.999901), 2]]
    assert set(in_page["series"]) == set(expected)
    for cluster, points in expected.items():
        page = in_page["series"][cluster]
        assert [v for _, v in page] == [v for _, v in points], cluster
        assert all(abs(a[0] - b[0]) < 1e-5 for a, b in zip(page, points, strict=True)), cluster
    assert [(m["kind"], m["cluster"]) for m in in_page["marks"]] == [(m.kind, m.cluster) for m in drawn.marks]
    assert all(abs(m["t"] - n.t) < 1e-5 for m, n in zip(in_page["marks"], drawn.marks, strict=True))


def drill(browser: Browser, fleet: Fleet, cluster: str, action: str, *, workload: str) -> Any:
    """Run a workload drill through the page (with its confirmation); the Cluster after it."""
    row = f".drill[data-cluster={cluster}]"
    browser.js(f"const s = document.querySelector('{row} select'); s.value = arguments[0];"
               "s.dispatchEvent(new Event('change'));", action)
    browser.js(f"const w = document.querySelector('{row} input[name=workload]'); w.value = arguments[0];"
               "w.dispatchEvent(new Event('input'));", workload)
    browser.js(f"document.querySelector('{row} button[name=run]').click()")
    confirm = ".confirm button[name=confirm]"
    browser.until(lambda: browser.js(f"return document.querySelector('{confirm}')"), "the confirmation")
    browser.js(f"document.querySelector('{confirm}').click()")
    said = browser.until(lambda: browser.js(
        "return (document.querySelector('[data-result=drill].ok') || {}).textContent"), f"{action} done")
    assert action in said
    return fleet.json("get", "cluster", cluster)


#: a collection watched from a version the server has let go: answered 410 before the stream
#: starts (``status``), or with an ERROR event on it (``event``); the page lists again either way
GONE = """
    const [how, done] = arguments;
    const real = window.fetch, calls = [];
    let answered = false;
    window.fetch = (url, init) => {
      calls.push(String(url));
      if (!answered && String(url).includes("watch=1")) {
        answered = true;
        const status = '{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410}';
        return Promise.resolve(how === "status" ? new Response(status, {status: 410})
          : new Response('{"type":"ERROR","object":' + status + '}\\n', {status: 200}));
      }
      return real(url, init);
    };
    const c = new FK.Collection("gone", FK.PATHS.clusters, () => {});
    c.version = "1";
    c.start();
    const started = Date.now();
    (function wait() {
      const again = calls.slice(1).findIndex((u) => !u.includes("watch=1"));
      if ((again >= 0 && calls.length > again + 2) || Date.now() - started > 10000) {
        c.stop();
        window.fetch = real;
        done({calls: calls.map((u) => u.replace(location.origin, "")), items: c.items.size});
      } else setTimeout(wait, 50);
    })();
"""


@pytest.mark.parametrize("how", ["status", "event"])
def test_a_watch_the_server_let_go_lists_again(browser: Browser, how: str) -> None:
    found = browser.driver.execute_async_script(GONE, how)
    path = "/apis/cluster.karmada.io/v1alpha1/clusters"
    calls = found["calls"]
    assert calls[0].startswith(path + "?watch=1") and "resourceVersion=1" in calls[0]
    assert calls[1] == path, "listed again after the 410"
    assert calls[2].startswith(path + "?watch=1") and "resourceVersion=1&" not in calls[2] + "&", calls
    assert found["items"] == 3


def test_an_agent_token_sees_only_refusals_and_no_drills(plane: tuple[Fleet, str], browser: Browser) -> None:
    _, agent = plane
    browser.js("document.getElementById('signout').click()")
    browser.sign_in(agent)
    browser.show("fleet")
    notice = browser.until(
        lambda: browser.js(
            "return (document.querySelector('#view .notice[data-status=\"403\"]') || {}).textContent"
        ),
        "the refused list, in words",
    )
    assert "may not list clusters" in notice
    browser.show("drills")
    browser.until(
        lambda: browser.js("return document.querySelector('[data-refused=drills]')"), "drills refused"
    )
    assert browser.js("return document.querySelectorAll('.drill').length") == 0
    patch = {"metadata": {"annotations": {"faults.fleetkeeper.io/api": "down"}}}
    assert (
        browser.fetch(
            "/apis/cluster.karmada.io/v1alpha1/clusters/member2",
            method="PATCH",
            token=agent,
            body=patch,
            content_type="application/merge-patch+json",
        )
        == 403
    )
    for view in VIEWS:
        browser.show(view)
        browser.until(lambda: browser.js("return document.getElementById('view').children.length"), view)
        assert browser.overflow() <= 0
    refused = browser.logs()
    assert all(
        e["source"] == "network" and (" 403 " in e["message"] or " 404 " in e["message"]) for e in refused
    ), refused
    outside = [u for u in browser.urls if not (u.startswith(browser.base + "/") or u.startswith("data:"))]
    assert outside == []


SHOWN = "return Array.from(document.querySelectorAll('[data-binding]')).map((e) => e.dataset.binding)"
NOTICE = "return (document.querySelector('#view .notice[data-status=\"403\"]') || {}).textContent"


def test_a_namespaced_token_sees_its_namespaces_workloads_and_the_rest_refused(
    plane: tuple[Fleet, str], browser: Browser
) -> None:
    """A ServiceAccount bound to ``view`` in team-a: the Workloads view lists team-a's binding (read in
    team-a, the only namespace it may read them in) and not team-b's; the Fleet view says in one line
    that the token may not list clusters; no drills; nothing in the console."""
    fleet, _ = plane
    web = workload("web", 2, {"member2": 1, "member3": 1})
    for team in ("team-a", "team-b"):
        fleet.kubectl_ok("create", "namespace", team)
        fleet.kubectl_ok("apply", "-n", team, "-f", "-", stdin=web)
    fleet.kubectl_ok("create", "serviceaccount", "viewer", "-n", "team-a")
    fleet.kubectl_ok("create", "rolebinding", "viewer", "--clusterrole", "view",
                     "--serviceaccount", "team-a:viewer", "-n", "team-a")
    token = fleet.kubectl_ok("create", "token", "viewer", "-n", "team-a", "--duration", "1h").strip()
    teams = ("team-a", "team-b")
    wait_for(lambda: all(fleet.json("get", "rb", "-n", t)["items"] for t in teams), "each team's binding")
    browser.js("const out = document.getElementById('signout'); if (out) out.click();")
    browser.logs()
    browser.urls.clear()
    browser.sign_in(token)
    browser.show("workloads")
    browser.until(lambda: browser.bars("team-a/web-deployment") == {"member2": 1, "member3": 1},
                  "team-a's binding and its bars")
    assert browser.js("return document.querySelector('#scope .scope').dataset.namespaces") == "team-a"
    assert browser.js(SHOWN) == ["team-a/web-deployment"], "only what the token may read"
    severe = browser.logs()  # (and the requests made, into browser.urls)
    requested = {u.removeprefix(browser.base).split("?")[0] for u in browser.urls}
    assert "/apis/work.karmada.io/v1alpha2/namespaces/team-a/resourcebindings" in requested
    assert "/apis/work.karmada.io/v1alpha2/resourcebindings" not in requested, "no list it would be refused"

    # typed namespaces, and no watch left to open (as with many namespaces): listed again instead
    browser.js("FK.MAX_STREAMS = 0; FK.POLL_MS = 500;")
    field = browser.driver.find_element("css selector", "#scope input[name=namespaces]")
    field.send_keys("team-a, Team_B")
    browser.js("document.querySelector('#scope button[name=namespaces-apply]').click()")
    refused = "return document.querySelector('#scope .notice').textContent"
    assert browser.js(refused) == "namespaces: 'Team_B' is not a namespace name (a DNS label)"
    assert browser.js("return sessionStorage.getItem('fleetkeeper.namespaces')") is None
    field.clear()
    field.send_keys("team-a, team-b")
    browser.js("document.querySelector('#scope button[name=namespaces-apply]').click()")
    line = "return (document.querySelector('#scope .scope p') || {}).textContent || ''"
    said = browser.until(lambda: "Not readable: team-b." in browser.js(line), "team-b said unreadable")
    assert said and browser.js("return sessionStorage.getItem('fleetkeeper.namespaces')") == "team-a,team-b"
    assert "Listed again every 0.5 s." in browser.js(line)
    fleet.kubectl_ok("scale", "deployment", "web", "-n", "team-a", "--replicas", "4")
    browser.until(lambda: browser.bars("team-a/web-deployment") == {"member2": 2, "member3": 2},
                  "the change, listed again")
    assert browser.js(SHOWN) == ["team-a/web-deployment"]

    browser.js("location.hash = '#workload/team-a/web-deployment'")
    placed = "return (document.querySelector('.policy p') || {}).textContent"
    policy = browser.until(lambda: browser.js(placed), "the policy that placed it")
    assert policy == "PropagationPolicy team-a/web"
    assert "may not list timelineentries" in browser.js(NOTICE)
    browser.show("fleet")
    notice = browser.until(lambda: browser.js(NOTICE), "the notice")
    assert "may not list clusters" in notice and "at the cluster scope" in notice
    assert browser.js("return document.querySelectorAll('#view .notice').length") == 1
    assert browser.js("return document.querySelectorAll('article.cluster').length") == 0
    browser.show("drills")
    browser.until(lambda: browser.js("return document.querySelector('[data-refused=drills]')"), "no drills")
    assert browser.js("return document.querySelectorAll('.drill').length") == 0
    for view in ("timeline", "whatif"):
        browser.show(view)
        browser.until(lambda: browser.js(NOTICE), view)
    browser.screenshots("team-a")
    assert severe + browser.logs() == [], "the console shows errors"
