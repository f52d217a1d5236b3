"""The versions the artefacts declare, helm lint --strict of each values set, and the wrong
values that lint and rendering must refuse."""
import re

from . import helm_sdk
from .common import CHART, KUBE_VERSIONS, config_source, fail, load_yaml, read, step
from .manifests import value_sets, with_contact


def declared_versions(cargo_toml, chart, dockerfile):
    """(Cargo.toml's version, the chart's appVersion, the Dockerfile's VERSION), as text."""
    cargo = re.search(r'(?m)^version\s*=\s*"([^"]+)"', cargo_toml)
    docker = re.search(r"(?m)^ARG VERSION=(\S+)$", dockerfile)
    return (cargo and cargo.group(1), str(chart.get("appVersion")),
            docker and docker.group(1))


def version_problems(cargo, app, docker):
    if not cargo == app == docker:
        return [f"versions differ: Cargo.toml {cargo}, appVersion {app}, Dockerfile {docker}"]
    return []


def shutdown_grace_default(source):
    """--shutdown-grace's default in the source of src/config/, or None."""
    grace = re.search(r'env = "ROBOTSD_SHUTDOWN_GRACE",\s*default_value = "([^"]+)"', source)
    return grace and grace.group(1)


def grace_problems(grace, helpers):
    """The chart derives terminationGracePeriodSeconds from robotsd's default shutdown grace:
    _helpers.tpl must default to the same."""
    if not grace or f'.Values.config.shutdownGrace | default "{grace}"' not in helpers:
        return ["the chart's default shutdown grace is not --shutdown-grace's default in "
                "src/config/"]
    return []


def check_versions():
    step("versions: Cargo.toml, Chart.yaml appVersion, Dockerfile VERSION")
    cargo, app, docker = declared_versions(read("Cargo.toml"), load_yaml(f"{CHART}/Chart.yaml"),
                                           read("Dockerfile"))
    print(f"Cargo.toml {cargo}, appVersion {app}, Dockerfile VERSION {docker}")
    for problem in version_problems(cargo, app, docker):
        fail(problem)
    grace = shutdown_grace_default(config_source())
    problems = grace_problems(grace, read(f"{CHART}/templates/_helpers.tpl"))
    for problem in problems:
        fail(problem)
    if not problems:
        print(f"--shutdown-grace default {grace} = the chart's")


def check_lint():
    step(f"helm lint --strict (Helm SDK), defaults and ci values, kube {KUBE_VERSIONS}")
    for name, values in value_sets():
        for kube in KUBE_VERSIONS:
            problems, report = helm_sdk.lint_errors(values, "v" + kube)
            infos = [m["error"] for m in report["messages"] if m["severity"] == 1]
            if problems:
                fail(f"helm lint {name} (kube {kube}): " + "; ".join(problems))
            else:
                print(f"ok   lint {name} (kube {kube}), 0 warnings, 0 errors"
                      + (f"; info: {'; '.join(infos)}" if infos else ""))


# (what is wrong, values over the required contact, whether the schema refuses it, so that
# helm lint must find it too)
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
    ("identityIngress without Web Bot Auth keys", {"identityIngress": {"enabled": True}}, False),
    ("identityIngress with config.wbaAgent not the directory's URL",
     {"identityIngress": {"enabled": True},
      "config": {"wbaKeysFromSecret": {"name": "k", "key": "keys.json"},
                 "wbaAgent": "https://bot.example.com/"}},
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


def wrong_value_verdict(name, schema_error, lint_problems, refusal):
    """(problem or None, the line that says it was refused) for one of WRONG_VALUES: rendering
    must refuse it (`refusal` is Helm's reason, None when it rendered), and helm lint must find
    it too when the schema is what refuses it."""
    rendered = "rendered" if refusal is None else "refused: " + (
        refusal[:160] + "..." if len(refusal) > 160 else refusal)
    lint_ok = bool(lint_problems) or not schema_error
    if not lint_ok or refusal is None:
        return f"{name}: lint found {len(lint_problems)} errors, template {rendered}", None
    lint_note = f"lint: {len(lint_problems)} errors, " if schema_error else ""
    return None, f"ok   {name}: {lint_note}template {rendered}"


def check_wrong_values():
    step("wrong values must fail (lint for schema violations, template for all)")
    for name, values, schema_error in WRONG_VALUES:
        values = with_contact(values)
        with helm_sdk.quiet_stderr():  # Helm logs each template `fail` it passes over in lint mode
            problems, _ = helm_sdk.lint_errors(values)
        try:
            helm_sdk.render(values)
            refusal = None
        except helm_sdk.HelmError as e:
            refusal = " ".join(str(e).split())
        problem, ok = wrong_value_verdict(name, schema_error, problems, refusal)
        if problem:
            fail(problem)
        else:
            print(ok)
