import unittest

from deploy_checks.excerpts import differences


class ExcerptTest(unittest.TestCase):
    HELD = {"containers": [{"name": "robotsd", "args": ["--a", "--b"], "timeout": 2,
                            "env": [{"name": "X", "value": "1"}]}]}

    def test_keys_left_out_are_fine(self):
        self.assertEqual(differences({"containers": [{"name": "robotsd"}]}, self.HELD), [])

    def test_a_list_is_shown_whole(self):
        shown = {"containers": [{"args": ["--a"]}]}
        self.assertEqual(len(differences(shown, self.HELD)), 1)

    def test_values_must_agree(self):
        shown = {"containers": [{"env": [{"name": "X", "value": "2"}]}]}
        self.assertEqual(differences(shown, self.HELD),
                         [".containers[0].env[0].value: '2' in the excerpt, '1' in the manifest"])

    def test_a_key_the_manifest_lacks(self):
        self.assertEqual(differences({"volumes": []}, self.HELD),
                         [".volumes: not in the manifest"])


if __name__ == "__main__":
    unittest.main()
