"""The chart's workload and fleet pacing, checked on rendered manifests.

Replicas that decide pacing slots alone (no shared store, or the store down) each keep
1/--fleet-size of a site's rate; a fleet size below the pods that can do so at once gives the
sites more than their crawl-delay, silently. So every rendering must carry ROBOTSD_FLEET_SIZE
of at least its most pods, and a StatefulSet's pods their ordinal as ROBOTSD_FLEET_INDEX.
The expected numbers in FLEET_CASES are written out, not computed: a formula shared with the
check would agree with a wrong chart.
"""

FLEET_ENVS = ("ROBOTSD_FLEET_SIZE", "ROBOTSD_FLEET_INDEX")
POD_INDEX = "metadata.labels['apps.kubernetes.io/pod-index']"
WORKLOAD_KINDS = ("Deployment", "StatefulSet")

# (name, values over the required contact, kind, ROBOTSD_FLEET_SIZE, has ROBOTSD_FLEET_INDEX)
FLEET_CASES = [
    # A Deployment's rollout runs old and new pods side by side: its surge counts.
    ("the documented default install (2 replicas and a surge of 1, no store)", {}, "Deployment",
     "3", False),
    ("autoscaling on: the autoscaler's maximum and the surge",
     {"autoscaling": {"enabled": True, "minReplicas": 2, "maxReplicas": 7}}, "Deployment", "8",
     False),
    ("a surge in percent, rounded up as Kubernetes does",
     {"replicaCount": 3, "strategy": {"rollingUpdate": {"maxSurge": "50%"}}}, "Deployment", "5",
     False),
    ("Recreate: the old pods stop before the new ones start",
     {"strategy": {"type": "Recreate", "rollingUpdate": None}}, "Deployment", "2", False),
    ("a StatefulSet: the pod's ordinal as its index",
     {"workload": {"kind": "StatefulSet"}, "replicaCount": 3}, "StatefulSet", "3", True),
    ("a StatefulSet under the autoscaler",
     {"workload": {"kind": "StatefulSet"},
      "autoscaling": {"enabled": True, "minReplicas": 1, "maxReplicas": 4}},
     "StatefulSet", "4", True),
    ("a second StatefulSet release after a first of 3: its ordinals offset, the size of both",
     {"workload": {"kind": "StatefulSet"}, "replicaCount": 3,
      "config": {"fleetSize": 6, "fleetIndexOffset": 3}}, "StatefulSet", "6", True),
    ("config.fleetSize above the replicas (more pods pace the same sites)",
     {"config": {"fleetSize": 5}}, "Deployment", "5", False),
    ("replicaCount 0: still a size robotsd accepts", {"replicaCount": 0}, "Deployment", "2",
     False),
]


def workload(docs):
    """The one Deployment or StatefulSet of a rendering."""
    found = [d for _, d in docs if d.get("kind") in WORKLOAD_KINDS]
    if len(found) != 1:
        raise AssertionError(f"{len(found)} Deployments and StatefulSets rendered, not 1")
    return found[0]


def container_env(doc):
    return {e["name"]: e for e in
            doc["spec"]["template"]["spec"]["containers"][0].get("env", [])}


def fleet_env(doc):
    """(ROBOTSD_FLEET_SIZE's value or None, ROBOTSD_FLEET_INDEX's fieldRef path or None)."""
    env = container_env(doc)
    size = env.get("ROBOTSD_FLEET_SIZE", {}).get("value")
    index = env.get("ROBOTSD_FLEET_INDEX")
    path = index and index.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
    return size, (path or ("<not from the downward API>" if index else None))


def run_value(entry):
    """The value the deploy checks start robotsd with for a rendered env entry: a Secret's and
    the pod index are stood in for later (runs.stand_in_env)."""
    if "value" in entry:
        return entry["value"]
    if entry.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == POD_INDEX:
        return "<pod index>"
    return "<from secret>"


def surge(merged, pods):
    """The pods a Deployment's rollout adds beside the old ones (Kubernetes' default 25%,
    rounded up); none for a StatefulSet or Recreate."""
    strategy = merged.get("strategy") or {}
    if merged["workload"]["kind"] == "StatefulSet" or strategy.get("type") == "Recreate":
        return 0
    given = str(((strategy.get("rollingUpdate") or {}).get("maxSurge")) or "25%")
    if given.endswith("%"):
        return -(-pods * int(given[:-1]) // 100)
    return int(given)


def selects(selector, labels):
    return bool(selector) and selector.items() <= labels.items()


def check_workload(merged, docs):
    """What the chart promises of its workload, for either kind; one line per problem."""
    problems = []
    try:
        doc = workload(docs)
    except AssertionError as e:
        return [str(e)]
    kind = merged["workload"]["kind"]
    spec = doc["spec"]
    pod_labels = spec["template"]["metadata"]["labels"]
    if doc["kind"] != kind:
        problems.append(f"workload.kind {kind} rendered a {doc['kind']}")

    # Fleet size: at least the most pods at once, exactly config.fleetSize when set.
    pods = max(1, merged["autoscaling"]["maxReplicas"] if merged["autoscaling"]["enabled"]
               else merged["replicaCount"])
    pods += surge(merged, pods)
    size, index = fleet_env(doc)
    wanted = merged["config"].get("fleetSize") or pods
    if size != str(wanted):
        problems.append(f"ROBOTSD_FLEET_SIZE is {size!r}, expected {wanted} ({pods} pods at most)")
    if kind == "StatefulSet" and index != POD_INDEX:
        problems.append(f"a StatefulSet's ROBOTSD_FLEET_INDEX is {index!r}, not {POD_INDEX}")
    if kind == "Deployment" and index is not None:
        problems.append("a Deployment's pods have no ordinal, but ROBOTSD_FLEET_INDEX is set")

    # The objects that point at the pods or the workload must still do so, for both kinds.
    if not selects(spec["selector"].get("matchLabels"), pod_labels):
        problems.append(f"the {doc['kind']}'s selector does not select its own pods")
    services = [d for _, d in docs if d["kind"] == "Service"]
    if kind == "StatefulSet":
        named = [s for s in services if s["metadata"]["name"] == spec.get("serviceName")]
        if not named:
            problems.append(f"StatefulSet serviceName {spec.get('serviceName')!r} is no Service")
        elif not selects(named[0]["spec"].get("selector"), pod_labels):
            problems.append("the StatefulSet's Service does not select its pods")
        if "strategy" in spec or spec.get("updateStrategy", {}).get("type") != "RollingUpdate":
            problems.append("a StatefulSet takes updateStrategy RollingUpdate, not strategy")
    elif "serviceName" in spec or "updateStrategy" in spec:
        problems.append("a Deployment has StatefulSet fields")
    for other in docs:
        other = other[1]
        if other["kind"] == "HorizontalPodAutoscaler":
            target = other["spec"]["scaleTargetRef"]
            if (target["kind"], target["name"]) != (doc["kind"], doc["metadata"]["name"]):
                problems.append(f"the HPA scales {target['kind']}/{target['name']}, not the "
                                f"{doc['kind']}")
        if other["kind"] == "PodDisruptionBudget" and not selects(
                other["spec"]["selector"].get("matchLabels"), pod_labels):
            problems.append("the PodDisruptionBudget does not select robotsd's pods")
        if other["kind"] == "Service" and not selects(other["spec"].get("selector"), pod_labels):
            problems.append(f"Service {other['metadata']['name']} does not select robotsd's pods")
    return problems


def check_fleet_cases(render, documents, with_contact, merge):
    """Each FLEET_CASES rendering gives the written-out fleet settings, and its workload keeps
    check_workload's promises (the HPA and PDB of a StatefulSet included); (name, problems)."""
    results = []
    for name, values, kind, size, has_index in FLEET_CASES:
        values = with_contact(values)
        docs = documents(render(values))
        doc = workload(docs)
        got_size, index = fleet_env(doc)
        want_index = POD_INDEX if has_index else None
        problems = check_workload(merge(values), docs)
        if (doc["kind"], got_size, index) != (kind, size, want_index):
            problems.append(f"{doc['kind']}, ROBOTSD_FLEET_SIZE={got_size!r}, "
                            f"ROBOTSD_FLEET_INDEX from {index!r}; expected {kind}, "
                            f"{size!r}, {want_index!r}")
        results.append((name, problems))
    return results


def check_manifest_fleet(docs):
    """A Deployment of deploy/kubernetes/ whose pods run robotsd: its ROBOTSD_FLEET_SIZE covers
    every pod it can run at once, replicas plus a rollout's surge. One line per problem."""
    problems = []
    for _, doc in docs:
        if doc.get("kind") != "Deployment":
            continue
        spec = doc["spec"]["template"]["spec"]
        for c in spec.get("initContainers", []) + spec.get("containers", []):
            if "robotsd" not in c["image"]:
                continue
            env = {e["name"]: e.get("value") for e in c.get("env", [])}
            surge = doc["spec"].get("strategy", {}).get("rollingUpdate", {}).get("maxSurge", 1)
            if not isinstance(surge, int):
                surge = doc["spec"].get("replicas", 1)  # a percentage: assume the worst
            most = doc["spec"].get("replicas", 1) + surge
            size = int(env.get("ROBOTSD_FLEET_SIZE") or 1)
            if size < most:
                problems.append(f"{doc['metadata']['name']}/{c['name']}: ROBOTSD_FLEET_SIZE "
                                f"{size}, but up to {most} pods run at once (replicas + maxSurge)")
    return problems
