"""The memory rule's sums that the docs print, computed here and held to benches/figures.toml
(issue 60): change the rule and this fails until the figure, and with it every mention
(`python3 .ci/figures.py mentions`), says the new sum."""
import math
import os
import tomllib
import unittest

from deploy_checks.common import MIB, memory_needed

FIGURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "benches", "figures.toml")


def stated(name):
    with open(FIGURES, "rb") as f:
        return int(tomllib.load(f)[name]["value"].replace(",", ""))


def mib(config):
    return math.ceil(memory_needed(config) / MIB)


class FiguresTest(unittest.TestCase):
    def test_the_defaults(self):
        self.assertEqual(mib({}), stated("default_memory_limit"))

    def test_a_512_mib_cache(self):
        self.assertEqual(mib({"cacheCapacity": "512MiB"}), stated("cache_512_memory_limit"))

    def test_the_sidecar(self):
        # deploy/kubernetes/sidecar.yaml's settings (its excerpt in docs/deploy.md is held to it).
        sidecar = {"cacheCapacity": "64MiB", "maxBodyBytesInFlight": "8MiB", "dnsCacheEntries": 1024}
        self.assertEqual(mib(sidecar), stated("sidecar_memory_limit"))


if __name__ == "__main__":
    unittest.main()
