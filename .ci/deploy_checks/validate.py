"""Every rendered manifest validated: kubernetes-validate --strict for Kubernetes' own kinds;
prometheus-operator's ServiceMonitor and PrometheusRule, CRDs that tool does not know, against
the structure of their CRD and against what they must point at."""
import os
import re
import subprocess

import jsonschema
import yaml

from . import rules
from .common import CHART, KUBE_VERSIONS, NAMESPACE, fail, load_yaml

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


def kubernetes_validate(label, docs, work):
    """kubernetes-validate --strict on each version: its complaint, or None. A kind it has no
    schema for is a failure here (the tool itself only warns and exits 0 then)."""
    path = os.path.join(work, re.sub(r"[^A-Za-z0-9_.-]+", "_", label) + ".k8s.yaml")
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump_all([doc for _, doc in docs], f, sort_keys=False)
    command = ["kubernetes-validate", "--strict", "--quiet"]
    for kube in KUBE_VERSIONS:
        command += ["-k", kube]
    result = subprocess.run(command + [path], capture_output=True, text=True)
    output = (result.stdout + result.stderr).strip()
    if result.returncode != 0 or output:
        return output or f"exit {result.returncode}"
    return None


def service_monitor_problems(doc, docs, namespace=NAMESPACE):
    """A ServiceMonitor: the CRD's structure, then the chart's Service selected by labels, in
    the release's namespace, with the ports it names."""
    try:
        jsonschema.Draft7Validator(SERVICE_MONITOR_SCHEMA).validate(doc)
    except jsonschema.ValidationError as e:
        return [f"ServiceMonitor: {'.'.join(map(str, e.path))}: {e.message}"]
    services = [d for _, d in docs if d["kind"] == "Service"]
    selector = doc["spec"]["selector"].get("matchLabels", {})
    selected = [s for s in services
                if selector.items() <= s["metadata"].get("labels", {}).items()]
    if len(selected) != 1:
        return [f"ServiceMonitor selects {len(selected)} Services, not 1"]
    problems = []
    ports = {p.get("name") for p in selected[0]["spec"]["ports"]}
    for endpoint in doc["spec"]["endpoints"]:
        if endpoint.get("port") not in ports:
            problems.append(f"ServiceMonitor port {endpoint.get('port')} not on the Service")
    if namespace not in doc["spec"].get("namespaceSelector", {}).get("matchNames", [namespace]):
        problems.append("ServiceMonitor does not look in the release's namespace")
    return problems


def prometheus_rule_problems(doc, docs, shipped, namespace=NAMESPACE):
    """The chart's PrometheusRule: the shipped alert rules (`shipped`, the groups of
    files/alerts.yaml), whole, each selector scoped to the job a ServiceMonitor gives the
    release's targets (the Service's name) and the release's namespace (rules.py)."""
    if doc.get("apiVersion") != "monitoring.coreos.com/v1" or not doc.get("metadata", {}).get("name"):
        return ["PrometheusRule: apiVersion or name"]
    problems = []
    groups = doc.get("spec", {}).get("groups", [])
    names = [r.get("alert") for g in groups for r in g.get("rules", [])]
    if names != [r["alert"] for g in shipped for r in g["rules"]]:
        problems.append(f"PrometheusRule has {names}, not the shipped rules")
    service = next(d for _, d in docs if d["kind"] == "Service")["metadata"]["name"]
    for group in groups:
        for rule in group["rules"]:
            for problem in rules.scope_problems(rule["expr"], service, namespace):
                problems.append(f"PrometheusRule {rule['alert']}: {problem}")
    return problems


def validate_documents(label, docs, work):
    """Every manifest: kubernetes-validate --strict, or for a ServiceMonitor or PrometheusRule
    the checks above."""
    operator = ("ServiceMonitor", "PrometheusRule")
    core = [(p, d) for p, d in docs if d.get("kind") not in operator]
    monitors = [d for _, d in docs if d.get("kind") == "ServiceMonitor"]
    complaint = kubernetes_validate(label, core, work) if core else None
    if complaint:
        fail(f"kubernetes-validate --strict {label}:\n{complaint}")
    for doc in monitors:
        for problem in service_monitor_problems(doc, docs):
            fail(f"{label}: {problem}")
    prometheus_rules = [d for _, d in docs if d.get("kind") == "PrometheusRule"]
    shipped = load_yaml(f"{CHART}/files/alerts.yaml")["groups"] if prometheus_rules else []
    for doc in prometheus_rules:
        for problem in prometheus_rule_problems(doc, docs, shipped):
            fail(f"{label}: {problem}")
    kinds = ", ".join(sorted(d["kind"] for _, d in core))
    if not complaint:
        print(f"ok   {label}: {len(core)} manifests valid for Kubernetes "
              f"{' and '.join(KUBE_VERSIONS)} ({kinds})"
              + (f"; {len(monitors)} ServiceMonitor checked against the CRD's structure"
                 if monitors else ""))
