#!/usr/bin/env bash
# Checks of the deployment artefacts: the Dockerfile, the Helm chart under helm/robotsd and the
# manifests under deploy/. No container engine and no cluster are needed (or used):
#   0. the unit tests of .ci/deploy_checks/, the Python package that does steps 2 to 5 and 8
#      (standard library unittest, on small fixtures, without calling Helm);
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
#      chart promises (every ROBOTSD_* setting reachable, probes, hardening, grace period); every
#      `helm install` of the docs rendered as written;
#   5. deploy/kubernetes/*.yaml validated the same way, and the docs' excerpts of them held to
#      them (an excerpt leaves keys out, never a setting);
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
trap 'rm -rf "$work"' EXIT

step "tools (PyPI, pinned by hash)"
# shellcheck source=.ci/pinned-venv.sh
source .ci/pinned-venv.sh
venv=$(pinned_venv .ci/deploy-requirements.txt \
  "${DEPLOY_CHECKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/robotsd-deploy-checks}")
export PATH="$venv/bin:$PATH"
export PYTHONPATH=.ci PYTHONDONTWRITEBYTECODE=1
hadolint --version
yamllint --version
python -c 'import deploy_checks.helm_sdk as h, kubernetes_validate.version as k
print(h.versions())
print("kubernetes-validate", k.__version__)'

step "unit tests of .ci/deploy_checks/ (the checks' own logic, on fixtures)"
python -m unittest discover -s .ci/deploy_checks/tests -t .ci

step "hadolint Dockerfile (failure threshold: style, i.e. any finding)"
hadolint --failure-threshold style Dockerfile
echo "ok   Dockerfile: no findings"

# Steps 2 to 5: rendered manifests into $work/rendered, and what step 8 needs into $work/runs.json.
python -m deploy_checks chart "$work"

step "helm/robotsd/README.md: its values table is values.schema.json's and values.yaml's"
python .ci/chart_values_table.py --check

step "yamllint --strict: the repository's YAML (.yamllint.yaml) and the rendered manifests"
yamllint --list-files -c .yamllint.yaml . | sed 's/^/lint /'
yamllint --strict -c .yamllint.yaml .
yamllint --strict -c .yamllint.yaml "$work/rendered"
rendered=("$work"/rendered/*.yaml)
echo "ok   $(yamllint --list-files -c .yamllint.yaml . | wc -l) files, and ${#rendered[@]} renderings" \
  "($(for f in "${rendered[@]}"; do printf '%s ' "${f##*/}"; done))"

# shellcheck source=.ci/robotsd-bin.sh
source .ci/robotsd-bin.sh
bin=$(robotsd_bin)
python -m deploy_checks run "$work" "$bin"

printf '\nDeploy checks passed.\n'
