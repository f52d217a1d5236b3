"""common.py and manifests.py: settings, sizes, durations, memory; rendered text as manifests."""
import unittest

from deploy_checks import common, manifests
from deploy_checks.tests import fixtures as fx


class Settings(unittest.TestCase):
    def test_config_envs(self):
        self.assertEqual(common.config_envs(fx.CONFIG_SOURCE), fx.ENVS)

    def test_value_key(self):
        self.assertEqual(common.value_key("ROBOTSD_MAX_BODY_BYTES_IN_FLIGHT"),
                         "maxBodyBytesInFlight")
        self.assertEqual(common.value_key("ROBOTSD_RSL"), "rsl")


class Units(unittest.TestCase):
    def test_seconds(self):
        self.assertEqual(common.seconds("1m 30s"), 90)
        self.assertEqual(common.seconds("0"), 0)
        self.assertEqual(common.seconds("1500ms"), 2)  # rounded up
        self.assertEqual(common.seconds("2days"), 172800)

    def test_size(self):
        self.assertEqual(common.size("256MiB"), 256 * common.MIB)
        self.assertEqual(common.size("768Mi"), 768 * common.MIB)
        self.assertEqual(common.size("1GB"), 10 ** 9)
        self.assertEqual(common.size("4096"), 4096)
        with self.assertRaises(KeyError):
            common.size("12Zi")

    def test_memory_needed(self):
        # 32 MiB + twice 256 MiB + 32 MiB + 32 MiB + 4,096 DNS answers of 1,280 bytes (5 MiB),
        # and a quarter more: 766.25 MiB, docs/deploy.md's 767 MiB.
        self.assertEqual(common.memory_needed({}) // common.MIB, 766)
        no_dns = common.memory_needed({"systemResolver": True})
        self.assertEqual(common.memory_needed({}) - no_dns, 5 * common.MIB * 5 // 4)
        self.assertEqual(common.memory_needed({"dnsCacheEntries": 0}), no_dns)
        with_rsl = common.memory_needed({"rsl": True, "rslCapacity": "8MiB"})
        self.assertEqual(with_rsl - common.memory_needed({}), 4 * 8 * common.MIB * 5 // 4)
        self.assertEqual(common.memory_problems({}, {"resources": {"limits": {
            "memory": "767Mi"}}}), [])
        self.assertEqual(len(common.memory_problems({}, {"resources": {"limits": {
            "memory": "766Mi"}}})), 1)
        # A small cache: 64 MiB beside it rather than twice it (a full 16 MiB cache held 90 to
        # 104 MB resident, BENCHMARKS.md): 32 + 80 + 32 + 32 + 5 MiB, and a quarter more; from
        # 64 MiB on, twice the cache is the larger.
        self.assertEqual(common.memory_needed({"cacheCapacity": "16MiB"}) // common.MIB, 226)
        self.assertEqual(common.memory_needed({"cacheCapacity": "64MiB"}) // common.MIB, 286)


class Manifests(unittest.TestCase):
    RENDERED = {
        "robotsd/templates/NOTES.txt": "kind: NotAManifest\n",
        "robotsd/templates/hpa.yaml": "\n",
        "robotsd/templates/service.yaml": "---\nkind: Service\n---\n# nothing\n---\nkind: Pod\n",
    }

    def test_documents(self):
        self.assertEqual(manifests.documents(self.RENDERED), [
            ("robotsd/templates/service.yaml", {"kind": "Service"}),
            ("robotsd/templates/service.yaml", {"kind": "Pod"})])

    def test_template_output(self):
        self.assertEqual(manifests.template_output(self.RENDERED),
                         "---\n# Source: robotsd/templates/service.yaml\n---\nkind: Service\n"
                         "---\n# nothing\n---\nkind: Pod\n")

    def test_with_contact(self):
        self.assertEqual(manifests.with_contact({"config": {"logFormat": "json"}, "a": 1}), {
            "config": {"operatorContact": "mailto:crawl-ops@example.com", "logFormat": "json"},
            "a": 1})
        self.assertEqual(manifests.with_contact({"config": {"operatorContact": None}}),
                         {"config": {"operatorContact": None}})


if __name__ == "__main__":
    unittest.main()
