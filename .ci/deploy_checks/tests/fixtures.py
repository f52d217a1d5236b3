"""A small rendering of the chart, as Helm gives it for its defaults with the NetworkPolicy and
the ServiceMonitor on (and the monitoring API offered), and the merged values it came from.
Each call returns a fresh copy, no dict shared with another, for a test to break one thing in
it."""
import json

SELECTOR = {"app.kubernetes.io/name": "robotsd", "app.kubernetes.io/instance": "robotsd",
            "app.kubernetes.io/component": "server"}
LABELS = {**SELECTOR, "app.kubernetes.io/managed-by": "Helm"}
HARDENED = {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532,
            "readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}
TEST_SCRIPT = 'wget -q -T 10 -O - "$READYZ_URL"'

MERGED = {
    "config": {"operatorContact": "mailto:crawl-ops@example.com", "adminListen": "0.0.0.0:9090",
               "allowCidr": [], "denyCidr": [], "redisSentinel": [],
               "apiTokenFromSecret": {"key": "tokens", "name": ""},
               "wbaKeysFromSecret": {"key": "keys.json", "name": ""},
               "proxyFromSecret": {"key": "proxy-url", "name": ""},
               "redisUrlFromSecret": {"key": "redis-url", "name": ""}},
    "replicaCount": 2,
    "workload": {"kind": "Deployment", "podManagementPolicy": "Parallel"},
    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
    "autoscaling": {"enabled": False, "minReplicas": 2, "maxReplicas": 10},
    "podDisruptionBudget": {"enabled": True, "maxUnavailable": 1},
    "networkPolicy": {"enabled": True, "egress": {"extra": [], "storePorts": []}},
    "identityIngress": {"enabled": False},
    "serviceAccount": {"create": False, "name": ""},
    "metrics": {"serviceMonitor": {"enabled": True, "labels": {}},
                "prometheusRule": {"enabled": False, "labels": {}}},
    "preStopSleepSeconds": 5,
    "terminationGraceMarginSeconds": 5,
    "terminationGracePeriodSeconds": None,
}

DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "robotsd", "labels": LABELS},
    "spec": {
        "replicas": 2,
        "strategy": {"type": "RollingUpdate",
                     "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        "selector": {"matchLabels": SELECTOR},
        "template": {"metadata": {"labels": LABELS}, "spec": {
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "securityContext": {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532,
                                "fsGroup": 65532, "seccompProfile": {"type": "RuntimeDefault"}},
            "terminationGracePeriodSeconds": 35,
            "containers": [{
                "name": "robotsd", "image": "robotsd:0.1.0",
                "securityContext": HARDENED,
                "env": [{"name": "ROBOTSD_ADMIN_LISTEN", "value": "0.0.0.0:9090"},
                        {"name": "ROBOTSD_OPERATOR_CONTACT",
                         "value": "mailto:crawl-ops@example.com"},
                        {"name": "ROBOTSD_FLEET_SIZE", "value": "3"}],
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                          {"name": "admin", "containerPort": 9090, "protocol": "TCP"}],
                "livenessProbe": {"httpGet": {"path": "/livez", "port": "admin"}},
                "readinessProbe": {"httpGet": {"path": "/readyz", "port": "admin"}},
                "lifecycle": {"preStop": {"sleep": {"seconds": 5}}},
                "resources": {"limits": {"memory": "768Mi"},
                              "requests": {"cpu": "100m", "memory": "768Mi"}},
            }],
        }},
    },
}
SERVICE = {
    "apiVersion": "v1", "kind": "Service",
    "metadata": {"name": "robotsd", "labels": LABELS},
    "spec": {"type": "ClusterIP", "selector": SELECTOR,
             "ports": [{"name": "http", "port": 8080, "targetPort": "http", "protocol": "TCP"},
                       {"name": "admin", "port": 9090, "targetPort": "admin",
                        "protocol": "TCP"}]},
}
PDB = {
    "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
    "metadata": {"name": "robotsd", "labels": LABELS},
    "spec": {"maxUnavailable": 1, "selector": {"matchLabels": SELECTOR}},
}
TEST_POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "robotsd-test",
                 "labels": {**LABELS, "app.kubernetes.io/component": "test",
                            "robotsd-client": "true"},
                 "annotations": {"helm.sh/hook": "test"}},
    "spec": {
        "restartPolicy": "Never", "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532,
                            "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{
            "name": "check", "image": "busybox:1.37.0", "securityContext": HARDENED,
            "env": [{"name": "READYZ_URL", "value": "http://robotsd:9090/readyz"},
                    {"name": "EVALUATE_URL", "value": "http://robotsd:8080/v1/evaluate"},
                    {"name": "EVALUATE_BODY", "value": "{}"}],
            "command": ["sh", "-c", TEST_SCRIPT],
        }],
    },
}
NETWORK_POLICY = {
    "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
    "metadata": {"name": "robotsd", "labels": LABELS},
    "spec": {
        "podSelector": {"matchLabels": SELECTOR},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"ports": [{"port": "http", "protocol": "TCP"}]},
                    {"ports": [{"port": "admin", "protocol": "TCP"}]}],
        "egress": [{"ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]},
                   {"ports": [{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}],
                    "to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}],
    },
}
SERVICE_MONITOR = {
    "apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
    "metadata": {"name": "robotsd", "namespace": "crawling", "labels": LABELS},
    "spec": {"selector": {"matchLabels": SELECTOR},
             "namespaceSelector": {"matchNames": ["crawling"]},
             "endpoints": [{"port": "admin", "path": "/metrics", "scheme": "http",
                            "interval": "30s", "scrapeTimeout": "10s", "honorLabels": False}]},
}
PROMETHEUS_RULE = {
    "apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
    "metadata": {"name": "robotsd", "labels": LABELS},
    "spec": {"groups": [{"name": "robotsd", "rules": [
        {"alert": "RobotsdDown", "expr": 'up{job="robotsd", namespace="crawling"} == 0'},
        {"alert": "RobotsdErrors", "expr": 'sum by (namespace, job) (rate('
         'robotsd_errors_total{job="robotsd", namespace="crawling"}[5m])) > 1'}]}]},
}
# files/alerts.yaml's groups, as far as the rule above needs them.
SHIPPED_RULES = [{"name": "robotsd", "rules": [{"alert": "RobotsdDown"},
                                               {"alert": "RobotsdErrors"}]}]


def fresh(data):
    return json.loads(json.dumps(data))


def merged():
    return fresh(MERGED)


def rendering():
    """[(template path, manifest)], as manifests.documents gives them."""
    return fresh([
        ("robotsd/templates/networkpolicy.yaml", NETWORK_POLICY),
        ("robotsd/templates/pdb.yaml", PDB),
        ("robotsd/templates/service.yaml", SERVICE),
        ("robotsd/templates/servicemonitor.yaml", SERVICE_MONITOR),
        ("robotsd/templates/tests/test-readyz.yaml", TEST_POD),
        ("robotsd/templates/workload.yaml", DEPLOYMENT),
    ])


def find(docs, kind):
    """The first manifest of a kind in a rendering (to break it in place)."""
    return next(d for _, d in docs if d["kind"] == kind)


def container(docs):
    """robotsd's container, in the Deployment or StatefulSet."""
    workload = next(d for _, d in docs if d["kind"] in ("Deployment", "StatefulSet"))
    return workload["spec"]["template"]["spec"]["containers"][0]


def env_names(docs):
    return {e["name"]: e for e in container(docs)["env"]}


# A piece of src/config/ as clap declares the settings there.
CONFIG_SOURCE = '''
    #[arg(long, env = "ROBOTSD_LISTEN", default_value = "0.0.0.0:8080")]
    pub listen: SocketAddr,
    #[arg(long, env = "ROBOTSD_ADMIN_LISTEN")]
    pub admin_listen: Option<SocketAddr>,
    #[arg(long, env = "ROBOTSD_OPERATOR_CONTACT")]
    pub operator_contact: Option<String>,
    #[arg(long, env = "ROBOTSD_FLEET_SIZE")]
    pub fleet_size: Option<u32>,
    #[arg(long, env = "ROBOTSD_SHUTDOWN_GRACE", default_value = "25s")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub shutdown_grace: Duration,
'''
ENVS = ["ROBOTSD_ADMIN_LISTEN", "ROBOTSD_FLEET_SIZE", "ROBOTSD_LISTEN",
        "ROBOTSD_OPERATOR_CONTACT", "ROBOTSD_SHUTDOWN_GRACE"]
