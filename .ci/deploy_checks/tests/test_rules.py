"""rules.py: a rule's selectors and groupings keep to the release's job and namespace."""
import unittest

from deploy_checks.rules import scope_problems


class Scope(unittest.TestCase):
    def test_scoped(self):
        self.assertEqual(scope_problems(
            'sum by (namespace, job) (rate(robotsd_requests_total{job="r", namespace="n"}[5m]))'
            ' / on (namespace, job) sum by (namespace, job) (up{job="r",namespace="n"}) > 0',
            "r", "n"), [])

    def test_a_selector_without_the_namespace(self):
        self.assertEqual(scope_problems('up{job="r"} == 0', "r", "n"),
                         ['up{job="r"} is not scoped to namespace=\'n\''])

    def test_a_bare_selector(self):
        self.assertEqual(len(scope_problems("process_resident_memory_bytes > 1e9", "r", "n")), 2)

    def test_no_robotsd_series(self):
        self.assertEqual(scope_problems("vector(1)", "r", "n"), ["selects no robotsd series"])

    def test_groupings_that_lose_the_release(self):
        base = 'robotsd_x{job="r", namespace="n"}'
        self.assertEqual(scope_problems(f"sum by (instance) ({base})", "r", "n"),
                         ["by (instance) does not keep namespace and job"])
        self.assertEqual(scope_problems(f"sum without (job) ({base})", "r", "n"),
                         ["without (job) drops the release's labels"])
        self.assertEqual(scope_problems(f"sum without (instance) ({base})", "r", "n"), [])


if __name__ == "__main__":
    unittest.main()
