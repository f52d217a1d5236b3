"""fleet.py: the workload's fleet size and index, and what points at its pods."""
import copy
import unittest

from deploy_checks import fleet
from deploy_checks.tests import fixtures as fx


class Workload(unittest.TestCase):
    def test_the_fixture(self):
        self.assertEqual(fleet.check_workload(fx.merged(), fx.rendering()), [])

    def test_a_fleet_size_that_leaves_out_the_surge(self):
        docs = fx.rendering()
        fx.env_names(docs)["ROBOTSD_FLEET_SIZE"]["value"] = "2"
        self.assertEqual(fleet.check_workload(fx.merged(), docs), [
            "ROBOTSD_FLEET_SIZE is '2', expected 3 (3 pods at most)"])

    def test_the_surge(self):
        merged = fx.merged()
        self.assertEqual(fleet.surge(merged, 2), 1)
        merged["strategy"]["rollingUpdate"]["maxSurge"] = "50%"
        self.assertEqual(fleet.surge(merged, 3), 2)  # rounded up
        merged["strategy"] = {"type": "Recreate"}
        self.assertEqual(fleet.surge(merged, 3), 0)
        merged["strategy"] = None
        self.assertEqual(fleet.surge(merged, 4), 1)  # Kubernetes' 25%
        merged["workload"]["kind"] = "StatefulSet"
        self.assertEqual(fleet.surge(merged, 4), 0)

    def test_a_statefulset_needs_the_pod_index(self):
        merged = fx.merged()
        merged["workload"]["kind"] = "StatefulSet"
        merged["strategy"] = None
        docs = fx.rendering()
        workload = fx.find(docs, "Deployment")
        workload["kind"] = "StatefulSet"
        del workload["spec"]["strategy"]
        workload["spec"]["serviceName"] = "robotsd"
        workload["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
        fx.env_names(docs)["ROBOTSD_FLEET_SIZE"]["value"] = "2"
        self.assertEqual(fleet.check_workload(merged, docs), [
            f"a StatefulSet's ROBOTSD_FLEET_INDEX is None, not {fleet.POD_INDEX}"])
        fx.container(docs)["env"].append({"name": "ROBOTSD_FLEET_INDEX", "valueFrom": {
            "fieldRef": {"fieldPath": fleet.POD_INDEX}}})
        self.assertEqual(fleet.check_workload(merged, docs), [])
        self.assertEqual(fleet.run_value(fx.env_names(docs)["ROBOTSD_FLEET_INDEX"]),
                         "<pod index>")

    def test_a_service_that_does_not_select_the_pods(self):
        docs = fx.rendering()
        fx.find(docs, "Service")["spec"]["selector"]["app.kubernetes.io/component"] = "test"
        self.assertEqual(fleet.check_workload(fx.merged(), docs), [
            "Service robotsd does not select robotsd's pods"])

    def test_two_workloads(self):
        docs = fx.rendering()
        docs.append(copy.deepcopy(docs[-1]))
        self.assertEqual(fleet.check_workload(fx.merged(), docs),
                         ["2 Deployments and StatefulSets rendered, not 1"])


class Manifests(unittest.TestCase):
    def sidecar(self, size, replicas=2, surge=1):
        return [("deploy/kubernetes/sidecar.yaml", {
            "kind": "Deployment", "metadata": {"name": "crawler"},
            "spec": {"replicas": replicas,
                     "strategy": {"rollingUpdate": {"maxSurge": surge}},
                     "template": {"spec": {"containers": [
                         {"name": "crawler", "image": "crawler:1"},
                         {"name": "robotsd", "image": "robotsd:0.1.0",
                          "env": [{"name": "ROBOTSD_FLEET_SIZE", "value": size}]}]}}}})]

    def test_replicas_and_surge(self):
        self.assertEqual(fleet.check_manifest_fleet(self.sidecar("3")), [])
        self.assertEqual(fleet.check_manifest_fleet(self.sidecar("2")), [
            "crawler/robotsd: ROBOTSD_FLEET_SIZE 2, but up to 3 pods run at once "
            "(replicas + maxSurge)"])
        # A surge in percent: the worst, as many again.
        self.assertEqual(len(fleet.check_manifest_fleet(self.sidecar("3", surge="25%"))), 1)


if __name__ == "__main__":
    unittest.main()
