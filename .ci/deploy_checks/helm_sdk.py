"""Helm itself, through its Go SDK (PyPI helm-python-sdk embeds Helm 4 as a library): the only
module that calls it, so that the others can be tested without it."""
import contextlib
import json
import os
import sys

import helm_python as helm
from helm_python import _native

from .common import CHART, NAMESPACE, RELEASE

HelmError = helm.HelmError


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


def merge_values(values):
    """The chart's values.yaml with `values` over it, as the templates see them."""
    return helm.Chart.load(CHART).merge_values(values)


def lint_errors(values, kube_version=None):
    """helm lint --strict: (its warnings and errors, one line each; the whole report)."""
    report = helm.lint(CHART, values, strict=True, kube_version=kube_version)
    problems = [f"[{ {1: 'INFO', 2: 'WARNING', 3: 'ERROR'}.get(m['severity'], m['severity']) }] "
                f"{m['path']}: {m['error'].strip()}" for m in report["messages"]
                if m["severity"] >= 2]
    return problems + [e.strip() for e in report["errors"] if e.strip() not in
                       " ".join(problems)], report


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


def versions():
    """What the log says of the SDK: its version and Helm's."""
    return f"helm-python-sdk {helm.__version__} (Helm {helm.helm_sdk_version()})"
