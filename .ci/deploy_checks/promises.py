"""What the chart promises, checked on the objects one values set renders: every ROBOTSD_*
setting reachable, memory, ports and probes, hardening, the grace period, the optional objects,
the NetworkPolicy. Pure functions of the merged values (values.yaml with the set over it) and
the rendered manifests; each returns one line per problem."""
import re
import urllib.parse

from . import fleet
from .common import memory_problems, seconds, value_key
from .manifests import by_kind

# A tripwire: a new setting must reach the chart (values, schema, the full values here; the
# fleet settings through fleet.py). Raise it with the setting's value.
SETTINGS = 81
SENTINEL_ENVS = ("ROBOTSD_REDIS_SENTINEL", "ROBOTSD_REDIS_SENTINEL_MASTER",
                 "ROBOTSD_REDIS_SENTINEL_PASSWORD_FILE", "ROBOTSD_REDIS_TLS")
# The values a Secret stands in for: the setting is reached when either is set.
FROM_SECRET = {"proxy": "proxyFromSecret", "redisUrl": "redisUrlFromSecret",
               "apiTokenFile": "apiTokenFromSecret", "wbaKeys": "wbaKeysFromSecret"}


def settings_problems(label, config, env, envs):
    """Exactly the config values that are set become ROBOTSD_* variables (`envs`, every one
    robotsd reads; `env`, the container's by name). The full values must reach every one but
    the sentinel's, and the sentinel values those."""
    problems = []
    for name in envs:
        if name in fleet.FLEET_ENVS:
            continue  # set from the workload, not from config alone: fleet.check_workload
        key = value_key(name)
        value = config.get(key)
        if key in FROM_SECRET and config[FROM_SECRET[key]]["name"]:
            value = "<secret>"
        set_ = value not in (None, [])
        if set_ != (name in env):
            problems.append(f"{name}: config.{key}={value!r} but rendered={name in env}")
    if label.startswith("full"):
        # Sentinel replaces the URL: its settings are the sentinel values' to reach.
        missing = [n for n in envs if n not in env and n not in SENTINEL_ENVS
                   and n not in fleet.FLEET_ENVS]
        if missing:
            problems.append(f"the full values leave settings unreachable: {missing}")
        if len(envs) != SETTINGS or not set(fleet.FLEET_ENVS) <= set(envs):
            problems.append(f"src/config/ has {len(envs)} settings, expected {SETTINGS} "
                            f"with {' and '.join(fleet.FLEET_ENVS)}")
    if label.startswith("sentinel"):
        missing = [n for n in SENTINEL_ENVS if n not in env]
        if missing:
            problems.append(f"the sentinel values leave settings unreachable: {missing}")
    return problems


def probe_port(config):
    """The port the probes use: admin when robotsd has an admin listener."""
    return "admin" if config.get("adminListen") else "http"


def port_problems(config, container):
    """The container's ports are --listen's and --admin-listen's; the probes ask /livez and
    /readyz on the admin port when there is one."""
    problems = []
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    listen = config.get("listen") or "0.0.0.0:8080"
    if ports.get("http") != int(listen.rsplit(":", 1)[1]):
        problems.append(f"container port http {ports.get('http')} is not --listen's {listen}")
    if config.get("adminListen") and ports.get("admin") != int(config["adminListen"].rsplit(":", 1)[1]):
        problems.append("container port admin is not --admin-listen's")
    port = probe_port(config)
    for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
        get = container.get(probe, {}).get("httpGet", {})
        if (get.get("path"), get.get("port")) != (path, port):
            problems.append(f"{probe} is {get}, expected {path} on {port}")
    return problems


def hardening_problems(pods):
    """Hardening, on every pod given as (who, pod spec): robotsd's and the helm test pod."""
    problems = []
    for who, spec in pods:
        psc = spec.get("securityContext", {})
        for c in spec["containers"]:
            sc = c.get("securityContext", {})
            want = {
                "runAsNonRoot": sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True,
                "runAsUser 65532": sc.get("runAsUser", psc.get("runAsUser")) == 65532,
                "runAsGroup 65532": sc.get("runAsGroup", psc.get("runAsGroup")) == 65532,
                "readOnlyRootFilesystem": sc.get("readOnlyRootFilesystem") is True,
                "allowPrivilegeEscalation false": sc.get("allowPrivilegeEscalation") is False,
                "capabilities drop ALL": sc.get("capabilities", {}).get("drop") == ["ALL"],
                "seccomp RuntimeDefault": (sc.get("seccompProfile") or psc.get(
                    "seccompProfile") or {}).get("type") == "RuntimeDefault",
                "no service account token": spec.get("automountServiceAccountToken") is False,
                "no service links": spec.get("enableServiceLinks") is False,
            }
            problems += [f"{who}/{c['name']}: not {k}" for k, ok in want.items() if not ok]
        image = spec["containers"][0]["image"]
        if ":" not in image.rsplit("/", 1)[-1] and "@" not in image:
            problems.append(f"{who}: image without a tag")
    return problems


def grace_problems(merged, pod, container):
    """Termination grace: preStop sleep + shutdown grace + margin, unless set."""
    problems = []
    expected = merged.get("terminationGracePeriodSeconds")
    if expected is None:
        expected = (merged["preStopSleepSeconds"]
                    + seconds(merged["config"].get("shutdownGrace") or "25s")
                    + merged["terminationGraceMarginSeconds"])
    if pod.get("terminationGracePeriodSeconds") != expected:
        problems.append(f"terminationGracePeriodSeconds {pod.get('terminationGracePeriodSeconds')}"
                        f", expected {expected}")
    sleep = container.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0)
    if sleep != merged["preStopSleepSeconds"]:
        problems.append(f"preStop sleep {sleep}, expected {merged['preStopSleepSeconds']}")
    return problems


def optional_object_problems(merged, kinds, monitor_api, workload):
    """Optional objects: rendered exactly when enabled (the operator's only with its API), with
    the labels a Prometheus selects them by (kube-prometheus-stack: `release`); replicas on the
    workload exactly when no autoscaler sets them."""
    problems = []
    expected_kinds = {
        "HorizontalPodAutoscaler": merged["autoscaling"]["enabled"],
        "PodDisruptionBudget": merged["podDisruptionBudget"]["enabled"],
        "NetworkPolicy": merged["networkPolicy"]["enabled"],
        "Ingress": merged["identityIngress"]["enabled"],
        "ServiceAccount": merged["serviceAccount"]["create"],
        "ServiceMonitor": merged["metrics"]["serviceMonitor"]["enabled"] and monitor_api,
        "PrometheusRule": merged["metrics"]["prometheusRule"]["enabled"] and monitor_api,
    }
    for kind, wanted in expected_kinds.items():
        if (kind in kinds) != bool(wanted):
            problems.append(f"{kind} rendered={kind in kinds}, expected {bool(wanted)}")
    for kind, key in (("ServiceMonitor", "serviceMonitor"), ("PrometheusRule", "prometheusRule")):
        wanted = merged["metrics"][key]["labels"]
        for doc in kinds.get(kind, []):
            if not wanted.items() <= doc["metadata"].get("labels", {}).items():
                problems.append(f"{kind} lacks metrics.{key}.labels {wanted}")
    for ingress in kinds.get("Ingress", []):
        problems += identity_ingress_problems(merged, ingress, kinds.get("Service", []))
    if merged["autoscaling"]["enabled"] == ("replicas" in workload["spec"]):
        problems.append(f"{workload['kind']} replicas must be set exactly when autoscaling "
                        "is off")
    return problems


def identity_ingress_problems(merged, ingress, services):
    """The identity Ingress routes the key directory's path alone (and the card's, with a
    product token), exactly, on the agent's host, to the API port of robotsd's Service."""
    problems = []
    agent = urllib.parse.urlsplit(merged["config"]["wbaAgent"])
    wanted = ["/.well-known/http-message-signatures-directory"]
    if merged["config"].get("wbaProductToken"):
        wanted.append("/.well-known/signature-agent-card")
    rules = ingress["spec"]["rules"]
    paths = [(r.get("host"), p["path"], p["pathType"]) for r in rules for p in r["http"]["paths"]]
    if paths != [(agent.hostname, path, "Exact") for path in wanted]:
        problems.append(f"the identity Ingress routes {paths}, expected {wanted} on "
                        f"{agent.hostname}")
    names = {s["metadata"]["name"] for s in services}
    for rule in rules:
        for path in rule["http"]["paths"]:
            service = path["backend"]["service"]
            if service["name"] not in names or service["port"] != {"name": "http"}:
                problems.append(f"the identity Ingress sends to {service}, not the API port")
    return problems


def store_ports(config, given):
    """The ports of the shared store, as the values say them: the chart must admit these."""
    if given:
        return sorted(set(given))
    if config.get("redisUrl"):
        port = urllib.parse.urlsplit(config["redisUrl"]).port
        return [port or 6379]
    if config.get("redisSentinel"):
        ports = {int(a.rsplit(":", 1)[1]) if re.search(r":[0-9]+$", a) else 26379
                 for a in config["redisSentinel"]}
        return sorted(ports | {6379})
    return []


def network_policy_problems(merged, policy, test_pods):
    """NetworkPolicy egress: DNS on 53 UDP/TCP and 80/443 TCP, the shared store's ports when one
    is configured, plus networkPolicy.egress.extra; ingress on robotsd's ports, open to the helm
    test pod (`test_pods`, their labels)."""
    problems = []
    config = merged["config"]
    rules = policy["spec"]["egress"]
    base = [sorted((p["protocol"], p["port"]) for p in r["ports"]) for r in rules[:2]]
    if base != [[("TCP", 53), ("UDP", 53)], [("TCP", 80), ("TCP", 443)]]:
        problems.append(f"NetworkPolicy egress ports are {base}")
    store = store_ports(config, merged["networkPolicy"]["egress"]["storePorts"])
    rest = rules[2:]
    if store:
        admitted = sorted(p["port"] for p in rest[0]["ports"]) if rest else []
        if admitted != store:
            problems.append(f"NetworkPolicy admits the store on {admitted}, expected {store}")
        rest = rest[1:]
    if rest != merged["networkPolicy"]["egress"]["extra"]:
        problems.append("NetworkPolicy egress has rules beyond DNS, web, store and extra")
    # The helm test pod must get through to /readyz and /v1/evaluate.
    for rule in policy["spec"]["ingress"]:
        peers = [peer.get("podSelector", {}).get("matchLabels", {}) for peer in
                 rule.get("from", []) if set(peer) == {"podSelector"}]
        if "from" in rule and not any(m.items() <= t.items() for m in peers
                                      for t in test_pods):
            problems.append(f"NetworkPolicy keeps the helm test pod from {rule['ports']}")
    ingress_ports = sorted(p["port"] for r in policy["spec"]["ingress"] for p in r["ports"])
    if ingress_ports != sorted(["http"] + (["admin"] if config.get("adminListen") else [])):
        problems.append(f"NetworkPolicy ingress ports are {ingress_ports}")
    return problems


def promise_problems(label, merged, docs, monitor_api, envs):
    """Every promise above for one rendering: `merged`, the values it was rendered with over
    values.yaml; `docs`, its (path, manifest) pairs; `monitor_api`, whether the
    monitoring.coreos.com API was offered; `envs`, every ROBOTSD_* variable robotsd reads."""
    config = merged["config"]
    kinds = by_kind(docs)
    workload = fleet.workload(docs)
    pod = workload["spec"]["template"]["spec"]
    container = pod["containers"][0]
    env = {e["name"]: e for e in container.get("env", [])}
    problems = settings_problems(label, config, env, envs)
    problems += memory_problems(config, container)
    problems += port_problems(config, container)
    problems += hardening_problems([("robotsd", pod)]
                                   + [("test", p["spec"]) for p in kinds.get("Pod", [])])
    problems += grace_problems(merged, pod, container)
    problems += optional_object_problems(merged, kinds, monitor_api, workload)
    problems += fleet.check_workload(merged, docs)
    test_pods = [p["metadata"]["labels"] for p in kinds.get("Pod", [])]
    for policy in kinds.get("NetworkPolicy", []):
        problems += network_policy_problems(merged, policy, test_pods)
    return problems


def summary(docs, config):
    """The line that says a rendering kept its promises."""
    pod = fleet.workload(docs)["spec"]["template"]["spec"]
    settings = len({e["name"] for e in pod["containers"][0].get("env", [])
                    if e["name"].startswith("ROBOTSD_")})
    return (f"settings ({settings} ROBOTSD_* variables), ports and probes on {probe_port(config)}, "
            f"hardening, grace {pod['terminationGracePeriodSeconds']}s, optional objects")
