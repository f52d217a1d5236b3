"""installs.py: the `helm install` commands of the docs, read as the reader would run them."""
import unittest

from deploy_checks.installs import helm_installs, set_value

MARKDOWN = """
Install it:

```sh
helm install robotsd ./helm/robotsd --namespace crawling --create-namespace \\
  --set config.operatorContact=mailto:ops@example.com \\
  --set replicaCount=3 --set networkPolicy.enabled=true \\
  --set-string config.maxUrlBytes=4096 -f my-values.yaml  # a comment
```

Not these: another chart, another helm command, a block in another language.

```bash
helm install redis oci://registry.example/charts/redis
helm test robotsd --namespace crawling
helm upgrade robotsd helm/robotsd/ --values more.yaml
```

```yaml
helm install robotsd ./helm/robotsd --set replicaCount=9
```
"""
FILES = {"my-values.yaml": {"config": {"logFormat": "json"}},
         "more.yaml": {"replicaCount": 5}}


class Installs(unittest.TestCase):
    def test_the_commands_and_their_values(self):
        found = helm_installs(MARKDOWN, load=FILES.__getitem__)
        self.assertEqual([c.split()[:2] for c, _ in found],
                         [["helm", "install"], ["helm", "upgrade"]])
        self.assertEqual(found[0][1], {
            "config": {"logFormat": "json"},  # the file's config replaces --set's (update)
            "replicaCount": 3, "networkPolicy": {"enabled": True}})
        self.assertEqual(found[1][1], {"replicaCount": 5})

    def test_set_before_a_values_file(self):
        found = helm_installs("```\nhelm template x ./helm/robotsd --set-string a.b=1 "
                              "--set a.c=null\n```\n", load=FILES.__getitem__)
        self.assertEqual(found[0][1], {"a": {"b": "1", "c": None}})

    def test_no_install(self):
        self.assertEqual(helm_installs("no code here\n"), [])

    def test_set_value_types_as_helm_does(self):
        values = {}
        for key, text in (("a.b", "true"), ("a.c", "-12"), ("d", "12s"), ("e", "false")):
            set_value(values, key, text)
        set_value(values, "f", "007", typed=False)
        self.assertEqual(values, {"a": {"b": True, "c": -12}, "d": "12s", "e": False,
                                  "f": "007"})


if __name__ == "__main__":
    unittest.main()
