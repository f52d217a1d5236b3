"""runs.py and wget.py: what a run takes from a rendering, the stand-ins for the cluster, what
robotsd's metrics and log must show; the wget stand-in against a server on loopback."""
import http.server
import io
import json
import os
import tempfile
import threading
import unittest
from contextlib import redirect_stderr, redirect_stdout

from deploy_checks import runs, wget
from deploy_checks.tests import fixtures as fx


class RunOf(unittest.TestCase):
    def test_the_fixture(self):
        docs = fx.rendering()
        fx.container(docs)["env"].append(
            {"name": "ROBOTSD_PROXY", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}})
        fx.container(docs)["env"].append({"name": "OTHER", "value": "x"})
        run = runs.run_of("defaults", docs)
        self.assertEqual(run, {
            "name": "defaults",
            "env": {"ROBOTSD_ADMIN_LISTEN": "0.0.0.0:9090", "ROBOTSD_FLEET_SIZE": "3",
                    "ROBOTSD_OPERATOR_CONTACT": "mailto:crawl-ops@example.com",
                    "ROBOTSD_PROXY": "<from secret>"},
            "probe_admin": True,
            "test_script": fx.TEST_SCRIPT,
            "test_env": {"READYZ_URL": "http://robotsd:9090/readyz",
                         "EVALUATE_URL": "http://robotsd:8080/v1/evaluate",
                         "EVALUATE_BODY": "{}"}})

    def test_without_a_test_pod(self):
        docs = [d for d in fx.rendering() if d[1]["kind"] != "Pod"]
        run = runs.run_of("x", docs)
        self.assertEqual((run["test_script"], run["test_env"]), ("", {}))


class StandIns(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.scratch = os.path.join(self.dir.name, "stand-in")
        self.certs = []

    def tearDown(self):
        self.dir.cleanup()

    def make_cert(self, cert, key):
        self.certs.append((cert, key))

    def stand_in(self, env, test_env=None):
        run = {"env": env, "test_env": test_env or {}}
        return runs.stand_in_env(run, self.scratch, make_cert=self.make_cert)

    def test_nothing_from_the_cluster(self):
        env = {"ROBOTSD_LISTEN": "0.0.0.0:8080"}
        self.assertEqual(self.stand_in(env, {"READYZ_URL": "u", "EVALUATE_BODY": "{}"}),
                         (env, {"EVALUATE_BODY": "{}"}))
        self.assertEqual(self.certs, [])

    def test_secrets_the_store_and_the_pod_index(self):
        env, test_env = self.stand_in({
            "ROBOTSD_PROXY": "<from secret>", "ROBOTSD_REDIS_URL": "<from secret>",
            "ROBOTSD_REDIS_PASSWORD_FILE": "/etc/robotsd/redis/password",
            "ROBOTSD_API_TOKEN_FILE": "/etc/robotsd/api-tokens/tokens",
            "ROBOTSD_FLEET_INDEX": "<pod index>"}, {"TOKEN_FILE": "/etc/x", "EVALUATE_URL": "u"})
        self.assertEqual(env["ROBOTSD_PROXY"], "http://proxy-from-secret.invalid:3128")
        self.assertEqual(env["ROBOTSD_REDIS_URL"], "redis://127.0.0.1:9/0")
        self.assertEqual(env["ROBOTSD_FLEET_INDEX"], "0")
        with open(env["ROBOTSD_REDIS_PASSWORD_FILE"]) as f:
            self.assertEqual(f.read(), "not-a-real-password\n")
        self.assertEqual(test_env, {"TOKEN_FILE": env["ROBOTSD_API_TOKEN_FILE"]})
        with open(test_env["TOKEN_FILE"]) as f:
            self.assertIn(runs.STAND_IN_TOKEN, f.read())

    def test_tls_to_the_store(self):
        env, _ = self.stand_in({"ROBOTSD_REDIS_URL": "redis://redis:6379/0",
                                "ROBOTSD_REDIS_CA_FILE": "/ca", "ROBOTSD_REDIS_CLIENT_KEY": "/k"})
        self.assertEqual(env["ROBOTSD_REDIS_URL"], "rediss://127.0.0.1:9/0")
        self.assertEqual(self.certs, [(env["ROBOTSD_REDIS_CA_FILE"],
                                       env["ROBOTSD_REDIS_CLIENT_KEY"])])
        self.assertNotIn("ROBOTSD_REDIS_CLIENT_CERT", env)

    def test_sentinels(self):
        env, _ = self.stand_in({"ROBOTSD_REDIS_SENTINEL": "s-0.s:26379,s-1.s:26379",
                                "ROBOTSD_REDIS_SENTINEL_PASSWORD_FILE": "/p"})
        self.assertEqual(env["ROBOTSD_REDIS_SENTINEL"], "127.0.0.1:9,127.0.0.1:9")
        self.assertTrue(os.path.exists(env["ROBOTSD_REDIS_SENTINEL_PASSWORD_FILE"]))


class Metrics(unittest.TestCase):
    METRICS = ('robotsd_build_info{version="0.1.0"} 1\nrobotsd_pace_fleet_size 3\n'
               'robotsd_pace_fleet_index -1\n')

    def test_as_rendered(self):
        self.assertEqual(runs.fleet_metric_problems(self.METRICS, {"ROBOTSD_FLEET_SIZE": "3"}),
                         [])

    def test_not_as_rendered(self):
        self.assertEqual(runs.fleet_metric_problems(self.METRICS, {"ROBOTSD_FLEET_SIZE": "4",
                                                                   "ROBOTSD_FLEET_INDEX": "0"}), [
            "robotsd_pace_fleet_size is '3', but the rendering set ROBOTSD_FLEET_SIZE='4'",
            "robotsd_pace_fleet_index is '-1', but the rendering set ROBOTSD_FLEET_INDEX='0'"])

    def test_a_binary_from_before_fleet_size(self):
        self.assertIsNone(runs.fleet_metric_problems('robotsd_build_info{version="0"} 1\n', {}))

    def test_json_logs(self):
        self.assertEqual(runs.json_log_problems('{"a":1}\n\n{"b":2}\n'), [])
        self.assertEqual(runs.json_log_problems(""), ["robotsd wrote no log line"])
        self.assertEqual(runs.json_log_problems('{"a":1}\nINFO started\n'),
                         ["a log line is not JSON: INFO started"])


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/readyz":
            self.send_error(404)
            return
        self.answer(b"ready\n")

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.answer(json.dumps({"body": body.decode(), "auth": self.headers["Authorization"],
                                "type": self.headers["Content-Type"]}).encode())

    def answer(self, body):
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class WgetStandIn(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        cls.url = f"http://127.0.0.1:{cls.server.server_address[1]}"
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def wget(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            status = wget.main(list(args))
        return status, out.getvalue(), err.getvalue()

    def test_parse(self):
        self.assertEqual(wget.parse(["-q", "-T", "3", "-O", "-", "--header", "a: b c",
                                     "--post-data", "x", "http://h/p"]),
                         ("http://h/p", {"a": "b c"}, b"x", 3.0))
        with self.assertRaises(ValueError):
            wget.parse(["-O", "file", "http://h/p"])

    def test_get(self):
        self.assertEqual(self.wget("-q", "-T", "10", "-O", "-", f"{self.url}/readyz"),
                         (0, "ready\n", ""))

    def test_post_with_headers(self):
        status, out, _ = self.wget("-q", "-T", "10", "-O", "-", "--header",
                                   "content-type: application/json", "--header",
                                   "Authorization: Bearer t", "--post-data", '{"a":1}',
                                   f"{self.url}/v1/evaluate")
        self.assertEqual((status, json.loads(out)), (0, {
            "body": '{"a":1}', "auth": "Bearer t", "type": "application/json"}))

    def test_an_error_is_exit_1(self):
        status, out, err = self.wget("-q", "-O", "-", f"{self.url}/missing")
        self.assertEqual((status, out), (1, ""))
        self.assertIn("404", err)


if __name__ == "__main__":
    unittest.main()
