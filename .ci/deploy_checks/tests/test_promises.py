"""promises.py: what the chart promises of a rendering, on the fixture rendering."""
import unittest

from deploy_checks import promises
from deploy_checks.tests import fixtures as fx


def problems(label="defaults", merged=None, docs=None, monitor_api=True, envs=fx.ENVS):
    return promises.promise_problems(label, merged or fx.merged(), docs or fx.rendering(),
                                     monitor_api, envs)


class Baseline(unittest.TestCase):
    def test_the_fixture_keeps_every_promise(self):
        self.assertEqual(problems(), [])
        self.assertIn("ports and probes on admin", promises.summary(
            fx.rendering(), fx.merged()["config"]))


class Settings(unittest.TestCase):
    def test_a_set_value_that_does_not_reach_robotsd(self):
        docs = fx.rendering()
        env = fx.container(docs)["env"]
        env[:] = [e for e in env if e["name"] != "ROBOTSD_OPERATOR_CONTACT"]
        self.assertIn("ROBOTSD_OPERATOR_CONTACT: config.operatorContact="
                      "'mailto:crawl-ops@example.com' but rendered=False", problems(docs=docs))

    def test_a_variable_for_a_value_that_is_not_set(self):
        docs = fx.rendering()
        fx.container(docs)["env"].append({"name": "ROBOTSD_LISTEN", "value": "0.0.0.0:8080"})
        self.assertIn("ROBOTSD_LISTEN: config.listen=None but rendered=True",
                      problems(docs=docs))

    def test_a_value_from_a_secret_counts_as_set(self):
        merged = fx.merged()
        merged["config"]["proxyFromSecret"]["name"] = "egress"
        found = promises.settings_problems("x", merged["config"], {}, ["ROBOTSD_PROXY"])
        self.assertEqual(found, ["ROBOTSD_PROXY: config.proxy='<secret>' but rendered=False"])
        self.assertEqual(promises.settings_problems(
            "x", merged["config"], {"ROBOTSD_PROXY": {}}, ["ROBOTSD_PROXY"]), [])

    def test_the_full_values_must_reach_every_setting(self):
        # As many settings as the tripwire expects, the fleet's two among them.
        names = [f"ROBOTSD_SETTING_{i:03d}" for i in range(promises.SETTINGS - 2)]
        envs = names + ["ROBOTSD_FLEET_INDEX", "ROBOTSD_FLEET_SIZE"]
        config = {f"setting_{i:03d}": "x" for i in range(1, len(names))}
        env = {n: {} for n in names[1:]}
        found = promises.settings_problems("full", config, env, envs)
        self.assertEqual(found, [
            "the full values leave settings unreachable: ['ROBOTSD_SETTING_000']"])
        # Reached, it passes (the fleet's settings come from the workload, not config).
        config["setting_000"] = "x"
        env["ROBOTSD_SETTING_000"] = {}
        self.assertEqual(promises.settings_problems("full", config, env, envs), [])
        # A sentinel setting is the sentinel values' to reach, not the full values'.
        self.assertEqual(promises.settings_problems(
            "full", config, env, envs[:-3] + ["ROBOTSD_REDIS_SENTINEL"] + envs[-2:]), [])

    def test_the_tripwire_counts_the_settings(self):
        found = promises.settings_problems("full", {}, {}, [])
        self.assertIn(f"src/config/ has 0 settings, expected {promises.SETTINGS} with "
                      "ROBOTSD_FLEET_SIZE and ROBOTSD_FLEET_INDEX", found)

    def test_the_sentinel_values_must_reach_the_sentinel_settings(self):
        found = promises.settings_problems("sentinel", {}, {"ROBOTSD_REDIS_SENTINEL": {}}, [])
        self.assertEqual(len(found), 1)
        self.assertIn("ROBOTSD_REDIS_SENTINEL_MASTER", found[0])
        self.assertNotIn("'ROBOTSD_REDIS_SENTINEL'", found[0])


class PortsAndProbes(unittest.TestCase):
    def test_missing_probes(self):
        docs = fx.rendering()
        del fx.container(docs)["livenessProbe"]
        del fx.container(docs)["readinessProbe"]
        found = problems(docs=docs)
        self.assertIn("livenessProbe is {}, expected /livez on admin", found)
        self.assertIn("readinessProbe is {}, expected /readyz on admin", found)

    def test_a_probe_on_the_wrong_port_or_path(self):
        docs = fx.rendering()
        fx.container(docs)["readinessProbe"]["httpGet"]["port"] = "http"
        fx.container(docs)["livenessProbe"]["httpGet"]["path"] = "/readyz"
        found = problems(docs=docs)
        self.assertEqual(len([p for p in found if "Probe is" in p]), 2, found)

    def test_without_an_admin_listener_the_probes_use_http(self):
        merged = fx.merged()
        merged["config"]["adminListen"] = None
        found = promises.port_problems(merged["config"], fx.container(fx.rendering()))
        self.assertIn("livenessProbe is {'path': '/livez', 'port': 'admin'}, expected /livez "
                      "on http", found)

    def test_container_ports_are_the_listeners(self):
        merged = fx.merged()
        merged["config"]["listen"] = "[::]:8081"
        merged["config"]["adminListen"] = "0.0.0.0:9091"
        found = promises.port_problems(merged["config"], fx.container(fx.rendering()))
        self.assertIn("container port http 8080 is not --listen's [::]:8081", found)
        self.assertIn("container port admin is not --admin-listen's", found)


class Hardening(unittest.TestCase):
    def test_each_missing_setting_is_named(self):
        docs = fx.rendering()
        pod = fx.find(docs, "Deployment")["spec"]["template"]["spec"]
        sc = pod["containers"][0]["securityContext"]
        for key in ("runAsNonRoot", "readOnlyRootFilesystem", "allowPrivilegeEscalation",
                    "capabilities", "seccompProfile"):
            del sc[key]
        del pod["securityContext"]["runAsNonRoot"]
        del pod["securityContext"]["seccompProfile"]
        pod["automountServiceAccountToken"] = True
        del pod["enableServiceLinks"]
        found = problems(docs=docs)
        for what in ("runAsNonRoot", "readOnlyRootFilesystem", "allowPrivilegeEscalation false",
                     "capabilities drop ALL", "seccomp RuntimeDefault",
                     "no service account token", "no service links"):
            self.assertIn(f"robotsd/robotsd: not {what}", found)

    def test_the_pod_security_context_is_enough_for_the_user(self):
        docs = fx.rendering()
        sc = fx.container(docs)["securityContext"]
        del sc["runAsUser"], sc["runAsGroup"], sc["runAsNonRoot"]
        self.assertEqual(problems(docs=docs), [])

    def test_the_helm_test_pod_is_held_to_it_too(self):
        docs = fx.rendering()
        test = fx.find(docs, "Pod")["spec"]
        test["containers"][0]["securityContext"]["runAsUser"] = 0
        test["containers"][0]["image"] = "registry.example:5000/busybox"
        found = problems(docs=docs)
        self.assertIn("test/check: not runAsUser 65532", found)
        self.assertIn("test: image without a tag", found)


class Grace(unittest.TestCase):
    def test_the_formula(self):
        docs = fx.rendering()
        merged = fx.merged()
        merged["config"]["shutdownGrace"] = "1m 30s"
        self.assertIn("terminationGracePeriodSeconds 35, expected 100",
                      problems(merged=merged, docs=docs))
        fx.find(docs, "Deployment")["spec"]["template"]["spec"][
            "terminationGracePeriodSeconds"] = 100
        fx.container(docs)["env"].append({"name": "ROBOTSD_SHUTDOWN_GRACE", "value": "1m 30s"})
        self.assertEqual(problems(merged=merged, docs=docs), [])

    def test_a_set_grace_and_the_pre_stop_sleep(self):
        merged = fx.merged()
        merged["terminationGracePeriodSeconds"] = 60
        docs = fx.rendering()
        del fx.container(docs)["lifecycle"]
        found = problems(merged=merged, docs=docs)
        self.assertIn("terminationGracePeriodSeconds 35, expected 60", found)
        self.assertIn("preStop sleep 0, expected 5", found)


class Memory(unittest.TestCase):
    def test_a_limit_below_what_the_settings_need(self):
        docs = fx.rendering()
        fx.container(docs)["resources"]["limits"]["memory"] = "512Mi"
        self.assertIn("memory limit 512Mi below the 766Mi these settings need "
                      "(docs/deploy.md, Memory)", problems(docs=docs))

    def test_no_limit(self):
        docs = fx.rendering()
        del fx.container(docs)["resources"]["limits"]
        self.assertIn("no memory limit", problems(docs=docs))


class OptionalObjects(unittest.TestCase):
    def test_rendered_exactly_when_enabled(self):
        docs = [d for d in fx.rendering() if d[1]["kind"] != "ServiceMonitor"]
        self.assertIn("ServiceMonitor rendered=False, expected True", problems(docs=docs))
        # Without the operator's API, no ServiceMonitor is expected.
        self.assertEqual(problems(docs=docs, monitor_api=False), [])
        self.assertIn("ServiceMonitor rendered=True, expected False",
                      problems(monitor_api=False))
        merged = fx.merged()
        merged["podDisruptionBudget"]["enabled"] = False
        self.assertIn("PodDisruptionBudget rendered=True, expected False",
                      problems(merged=merged))

    def test_the_labels_a_prometheus_selects_by(self):
        merged = fx.merged()
        merged["metrics"]["serviceMonitor"]["labels"] = {"release": "kube-prometheus-stack"}
        self.assertIn("ServiceMonitor lacks metrics.serviceMonitor.labels "
                      "{'release': 'kube-prometheus-stack'}", problems(merged=merged))

    def test_replicas_exactly_when_autoscaling_is_off(self):
        merged = fx.merged()
        merged["autoscaling"]["enabled"] = True
        found = promises.optional_object_problems(
            merged, {"HorizontalPodAutoscaler": [{}]}, False, fx.find(fx.rendering(), "Deployment"))
        self.assertIn("Deployment replicas must be set exactly when autoscaling is off", found)


class NetworkPolicy(unittest.TestCase):
    def test_egress_beyond_dns_and_web(self):
        docs = fx.rendering()
        fx.find(docs, "NetworkPolicy")["spec"]["egress"].append({"ports": [{"port": 22}]})
        self.assertIn("NetworkPolicy egress has rules beyond DNS, web, store and extra",
                      problems(docs=docs))

    def test_dns_must_be_open(self):
        docs = fx.rendering()
        fx.find(docs, "NetworkPolicy")["spec"]["egress"][0]["ports"].pop()
        self.assertIn("NetworkPolicy egress ports are [[('UDP', 53)], [('TCP', 80), "
                      "('TCP', 443)]]", problems(docs=docs))

    def test_the_store_must_be_admitted(self):
        merged = fx.merged()
        merged["config"]["redisUrl"] = "redis://redis.store:6380/0"
        found = problems(merged=merged)
        self.assertIn("NetworkPolicy admits the store on [], expected [6380]", found)
        docs = fx.rendering()
        fx.find(docs, "NetworkPolicy")["spec"]["egress"].append(
            {"ports": [{"port": 6380, "protocol": "TCP"}]})
        self.assertNotIn("NetworkPolicy admits the store on [], expected [6380]",
                         problems(merged=merged, docs=docs))

    def test_store_ports(self):
        self.assertEqual(promises.store_ports({"redisUrl": "redis://r/0"}, []), [6379])
        self.assertEqual(promises.store_ports(
            {"redisSentinel": ["s1:26380", "s2"]}, []), [6379, 26379, 26380])
        self.assertEqual(promises.store_ports({}, [7000, 7000]), [7000])
        self.assertEqual(promises.store_ports({}, []), [])

    def test_the_helm_test_pod_must_get_through(self):
        docs = fx.rendering()
        fx.find(docs, "NetworkPolicy")["spec"]["ingress"][0]["from"] = [
            {"podSelector": {"matchLabels": {"role": "crawler"}}}]
        self.assertIn("NetworkPolicy keeps the helm test pod from [{'port': 'http', "
                      "'protocol': 'TCP'}]", problems(docs=docs))
        fx.find(docs, "NetworkPolicy")["spec"]["ingress"][0]["from"].append(
            {"podSelector": {"matchLabels": {"robotsd-client": "true"}}})
        self.assertEqual(problems(docs=docs), [])

    def test_ingress_on_robotsd_ports_only(self):
        docs = fx.rendering()
        fx.find(docs, "NetworkPolicy")["spec"]["ingress"].pop()
        self.assertIn("NetworkPolicy ingress ports are ['http']", problems(docs=docs))


if __name__ == "__main__":
    unittest.main()


class IdentityIngress(unittest.TestCase):
    AGENT = "https://bot.example.com/.well-known/http-message-signatures-directory"

    def ingress(self, paths):
        return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                "metadata": {"name": "robotsd-identity"},
                "spec": {"rules": [{"host": "bot.example.com", "http": {"paths": [
                    {"path": path, "pathType": "Exact",
                     "backend": {"service": {"name": "robotsd", "port": {"name": port}}}}
                    for path, port in paths]}}]}}

    def rendered(self, paths):
        merged = fx.merged()
        merged["identityIngress"]["enabled"] = True
        merged["config"]["wbaAgent"] = self.AGENT
        docs = fx.rendering() + [("robotsd/templates/identity-ingress.yaml", self.ingress(paths))]
        return problems(merged=merged, docs=docs)

    def test_the_directory_alone_to_the_api_port(self):
        directory = "/.well-known/http-message-signatures-directory"
        self.assertEqual(self.rendered([(directory, "http")]), [])
        self.assertTrue(any("routes" in p for p in self.rendered(
            [(directory, "http"), ("/v1/check", "http")])))
        self.assertTrue(any("not the API port" in p for p in self.rendered(
            [(directory, "admin")])))

    def test_rendered_exactly_when_enabled(self):
        merged = fx.merged()
        merged["identityIngress"]["enabled"] = True
        self.assertIn("Ingress rendered=False, expected True", problems(merged=merged))

