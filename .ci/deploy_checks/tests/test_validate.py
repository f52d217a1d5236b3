"""validate.py: the ServiceMonitor against its CRD's structure and the Service it must select,
and the PrometheusRule against the shipped rules and its release."""
import unittest

from deploy_checks import validate
from deploy_checks.tests import fixtures as fx


def monitor_problems(change=None, docs=None):
    docs = docs or fx.rendering()
    monitor = fx.find(docs, "ServiceMonitor")
    if change:
        change(monitor)
    return validate.service_monitor_problems(monitor, docs)


class ServiceMonitor(unittest.TestCase):
    def test_the_fixture_selects_the_service(self):
        self.assertEqual(monitor_problems(), [])

    def test_a_selector_that_matches_no_service(self):
        def change(m):
            m["spec"]["selector"]["matchLabels"]["app.kubernetes.io/instance"] = "other"
        self.assertEqual(monitor_problems(change), ["ServiceMonitor selects 0 Services, not 1"])

    def test_a_selector_that_matches_two_services(self):
        docs = fx.rendering()
        headless = dict(fx.find(docs, "Service"), metadata={"name": "robotsd-headless",
                                                            "labels": fx.LABELS})
        docs.append(("robotsd/templates/service.yaml", headless))
        self.assertEqual(monitor_problems(docs=docs),
                         ["ServiceMonitor selects 2 Services, not 1"])

    def test_a_port_the_service_does_not_have(self):
        def change(m):
            m["spec"]["endpoints"][0]["port"] = "metrics"
        self.assertEqual(monitor_problems(change),
                         ["ServiceMonitor port metrics not on the Service"])

    def test_another_namespace(self):
        def change(m):
            m["spec"]["namespaceSelector"]["matchNames"] = ["monitoring"]
        self.assertEqual(monitor_problems(change),
                         ["ServiceMonitor does not look in the release's namespace"])

    def test_the_crd_structure(self):
        def interval(m):
            m["spec"]["endpoints"][0]["interval"] = "30 seconds"
        self.assertEqual(len(monitor_problems(interval)), 1)
        self.assertIn("ServiceMonitor: spec.endpoints.0.interval:", monitor_problems(interval)[0])

        def unknown(m):
            m["spec"]["endpoints"][0]["bearerTokenFile"] = "/var/run/token"
        self.assertIn("bearerTokenFile", monitor_problems(unknown)[0])

        def no_endpoints(m):
            m["spec"]["endpoints"] = []
        self.assertIn("ServiceMonitor: spec.endpoints:", monitor_problems(no_endpoints)[0])

        def relabel(m):
            m["spec"]["endpoints"][0]["relabelings"] = [{"action": "rewrite"}]
        self.assertIn("relabelings.0.action", monitor_problems(relabel)[0])


class PrometheusRule(unittest.TestCase):
    def problems(self, change=None, shipped=fx.SHIPPED_RULES):
        docs = fx.rendering() + [("robotsd/templates/prometheusrule.yaml",
                                  fx.PROMETHEUS_RULE)]
        docs = fx.fresh(docs)
        rule = fx.find(docs, "PrometheusRule")
        if change:
            change(rule)
        return validate.prometheus_rule_problems(rule, docs, shipped)

    def test_the_fixture_is_scoped(self):
        self.assertEqual(self.problems(), [])

    def test_a_rule_left_out(self):
        def change(rule):
            rule["spec"]["groups"][0]["rules"].pop()
        self.assertEqual(self.problems(change), [
            "PrometheusRule has ['RobotsdDown'], not the shipped rules"])

    def test_a_selector_of_another_job(self):
        def change(rule):
            rule["spec"]["groups"][0]["rules"][0]["expr"] = 'up{job="robotsd-other", ' \
                                                            'namespace="crawling"} == 0'
        self.assertEqual(self.problems(change), [
            "PrometheusRule RobotsdDown: up{job=\"robotsd-other\", namespace=\"crawling\"} is "
            "not scoped to job='robotsd'"])

    def test_api_version_and_name(self):
        def change(rule):
            rule["apiVersion"] = "monitoring.coreos.com/v1alpha1"
        self.assertEqual(self.problems(change), ["PrometheusRule: apiVersion or name"])


if __name__ == "__main__":
    unittest.main()
