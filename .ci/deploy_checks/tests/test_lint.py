"""lint.py: the versions that must agree, the default grace, and the verdict on a wrong value."""
import unittest

from deploy_checks import lint
from deploy_checks.tests import fixtures as fx

CARGO = '[package]\nname = "robotsd"\nversion = "0.1.0"\n\n[dependencies]\nx = { version = "1" }\n'
DOCKERFILE = "FROM scratch\nARG VERSION=0.1.0\n"
HELPERS = ('{{- $grace := include "robotsd.durationSeconds" '
           '(.Values.config.shutdownGrace | default "25s") | int }}')


class Versions(unittest.TestCase):
    def test_agreeing(self):
        versions = lint.declared_versions(CARGO, {"appVersion": "0.1.0"}, DOCKERFILE)
        self.assertEqual(versions, ("0.1.0", "0.1.0", "0.1.0"))
        self.assertEqual(lint.version_problems(*versions), [])

    def test_an_app_version_behind(self):
        versions = lint.declared_versions(CARGO, {"appVersion": "0.0.9"}, DOCKERFILE)
        self.assertEqual(lint.version_problems(*versions), [
            "versions differ: Cargo.toml 0.1.0, appVersion 0.0.9, Dockerfile 0.1.0"])

    def test_no_version_in_the_dockerfile(self):
        versions = lint.declared_versions(CARGO, {"appVersion": "0.1.0"}, "FROM scratch\n")
        self.assertEqual(len(lint.version_problems(*versions)), 1)


class Grace(unittest.TestCase):
    def test_the_chart_defaults_to_robotsd_s_grace(self):
        grace = lint.shutdown_grace_default(fx.CONFIG_SOURCE)
        self.assertEqual(grace, "25s")
        self.assertEqual(lint.grace_problems(grace, HELPERS), [])

    def test_a_default_changed_in_robotsd_only(self):
        source = fx.CONFIG_SOURCE.replace('default_value = "25s"', 'default_value = "30s"')
        self.assertEqual(len(lint.grace_problems(lint.shutdown_grace_default(source),
                                                 HELPERS)), 1)
        self.assertEqual(len(lint.grace_problems(None, HELPERS)), 1)


class WrongValues(unittest.TestCase):
    def test_rendered_is_a_failure(self):
        problem, ok = lint.wrong_value_verdict("x", False, [], None)
        self.assertEqual((problem, ok), ("x: lint found 0 errors, template rendered", None))

    def test_a_schema_error_lint_does_not_find(self):
        problem, _ = lint.wrong_value_verdict("x", True, [], "values don't meet the schema")
        self.assertEqual(problem, "x: lint found 0 errors, template refused: values don't "
                                  "meet the schema")

    def test_refused_as_it_should_be(self):
        self.assertEqual(lint.wrong_value_verdict("x", True, ["[ERROR] a", "b"], "no" * 100),
                         (None, f"ok   x: lint: 2 errors, template refused: {'no' * 80}..."))
        self.assertEqual(lint.wrong_value_verdict("x", False, [], "fail: choose one"),
                         (None, "ok   x: template refused: fail: choose one"))

    def test_each_wrong_value_says_whether_the_schema_refuses_it(self):
        for name, values, schema_error in lint.WRONG_VALUES:
            self.assertIsInstance(values, dict, name)
            self.assertIsInstance(schema_error, bool, name)


if __name__ == "__main__":
    unittest.main()
