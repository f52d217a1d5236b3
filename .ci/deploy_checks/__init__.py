"""The deploy checks' own program (.ci/deploy-checks.sh runs it): the Helm chart linted,
rendered and validated, the Kubernetes manifests validated, and the release binary run with
each rendering's environment. No container engine and no cluster are needed.

    python -m deploy_checks chart WORK        # steps 2 to 5 of deploy-checks.sh
    python -m deploy_checks run WORK BINARY   # step 8, with what `chart` left in WORK

Modules, by concern:
  common       the release, the failures found, src/config/'s settings, sizes and durations
  helm_sdk     Helm's Go SDK (render, merge values, lint): the only module that calls Helm
  manifests    the values sets, and rendered text as manifests
  lint         versions that must agree, helm lint --strict, wrong values that must fail
  validate     kubernetes-validate --strict; the ServiceMonitor and PrometheusRule
  rules        the PrometheusRule's alerts scoped to their release
  promises     what the chart promises of a rendering (settings, probes, hardening, ...)
  fleet        the workload and fleet pacing (ROBOTSD_FLEET_SIZE, ROBOTSD_FLEET_INDEX)
  installs     every `helm install` of the docs rendered as written
  renderings   the values sets rendered and held to all of the above; deploy/kubernetes/
  runs         robotsd started with each rendering's environment
  wget         a stand-in for wget, for the helm test script on a machine without one
Their unit tests (tests/, standard library unittest on fixtures, without Helm) run first:
    python -m unittest discover -s .ci/deploy_checks/tests -t .ci
"""
