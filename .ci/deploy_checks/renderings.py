"""helm template of each values set, without and with the monitoring.coreos.com APIs, every
manifest validated and the chart's promises checked; the fleet cases; deploy/kubernetes/."""
import glob
import json
import os

import yaml

from . import fleet, helm_sdk, promises, runs
from .common import (PROMETHEUS_RULE_API, SERVICE_MONITOR_API, config_envs, config_source, fail,
                     step)
from .manifests import documents, template_output, value_sets, with_contact
from .validate import validate_documents


def check_fleet():
    step("fleet pacing: ROBOTSD_FLEET_SIZE and ROBOTSD_FLEET_INDEX as each install sets them")
    for name, problems in fleet.check_fleet_cases(helm_sdk.render, documents, with_contact,
                                                  helm_sdk.merge_values):
        for problem in problems:
            fail(f"{name}: {problem}")
        if not problems:
            print(f"ok   {name}")


def check_render(work):
    """Each values set rendered, its manifests written to WORK/rendered/ (for yamllint),
    validated and held to the chart's promises; WORK/runs.json, what the binary runs need of
    each rendering without the monitoring APIs."""
    step("helm template + kubernetes-validate --strict + the chart's promises")
    envs = config_envs(config_source())
    found = []
    for name, values in value_sets():
        for monitor_api in (False, True):
            label = f"{name}{' +ServiceMonitor API' if monitor_api else ''}"
            try:
                rendered = helm_sdk.render(values, [SERVICE_MONITOR_API, PROMETHEUS_RULE_API]
                                           if monitor_api else [])
            except helm_sdk.HelmError as e:
                fail(f"helm template {label}: {e}")
                continue
            docs = documents(rendered)
            out = os.path.join(work, "rendered", f"{name}{'-sm' if monitor_api else ''}.yaml")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "w", encoding="utf-8") as f:
                f.write(template_output(rendered))
            validate_documents(label, docs, work)
            merged = helm_sdk.merge_values(values)
            problems = promises.promise_problems(label, merged, docs, monitor_api, envs)
            for problem in problems:
                fail(f"{label}: {problem}")
            if not problems:
                print(f"ok   {label}: {promises.summary(docs, merged['config'])}")
            if not monitor_api:
                found.append(runs.run_of(name, docs))
    with open(os.path.join(work, "runs.json"), "w", encoding="utf-8") as f:
        json.dump(found, f)


def check_deploy_manifests(work):
    step("deploy/kubernetes/*.yaml: kubernetes-validate --strict")
    paths = sorted(glob.glob("deploy/kubernetes/*.yaml") + glob.glob("deploy/kubernetes/*.yml"))
    if not paths:
        print("note: no deploy/kubernetes/*.yaml in this tree: nothing to validate")
    for path in paths:
        with open(path, encoding="utf-8") as f:
            docs = [(path, d) for d in yaml.safe_load_all(f) if d]
        validate_documents(path, docs, work)
        for problem in fleet.check_manifest_fleet(docs):
            fail(f"{path}: {problem}")
