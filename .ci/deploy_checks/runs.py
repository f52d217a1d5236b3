"""The release binary started with the environment each rendering gives robotsd (on loopback):
its probes and metrics, the helm test pod's own script run against it, then SIGTERM."""
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

from . import fleet
from .common import fail, step

STAND_IN_TOKEN = "deploy-check-token-0123456789"
STAND_IN_WBA_KEYS = (
    '{"keys":[{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs",'
    '"d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU","status":"active"}]}\n')
# Loopback, a port nothing listens on: robotsd starts and answers with its store down.
NO_STORE = "127.0.0.1:9"


def run_of(name, docs):
    """What a run needs of a rendering: robotsd's ROBOTSD_* variables (a Secret's value and the
    pod index as fleet.run_value marks them), whether the probes use the admin port, and the
    helm test pod's script and environment."""
    container = fleet.workload(docs)["spec"]["template"]["spec"]["containers"][0]
    tests = [d for _, d in docs if d["kind"] == "Pod"
             and d["metadata"].get("annotations", {}).get("helm.sh/hook") == "test"]
    test = tests[0]["spec"]["containers"][0] if tests else {}
    return {
        "name": name,
        "env": {e["name"]: fleet.run_value(e)
                for e in container.get("env", []) if e["name"].startswith("ROBOTSD_")},
        "probe_admin": container["readinessProbe"]["httpGet"]["port"] == "admin",
        "test_script": test["command"][-1] if tests else "",
        "test_env": {e["name"]: e["value"] for e in test.get("env", [])},
    }


def self_signed(cert, key):
    """A certificate and key made here, that robotsd parses at start."""
    subprocess.run(["openssl", "req", "-x509", "-nodes", "-days", "1", "-newkey", "ec",
                    "-pkeyopt", "ec_paramgen_curve:prime256v1", "-keyout", key, "-out", cert,
                    "-subj", "/CN=deploy check"], check=True, capture_output=True)


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def stand_in_env(run, scratch, make_cert=self_signed):
    """(robotsd's environment, the test script's) for a run on this machine: what comes from
    the cluster (a Secret's file or value, the pod's ordinal, the names of the store) stood in
    for by files written under `scratch` (a path prefix) and loopback addresses. The test's
    *_URL variables are left out: they name the Service, and the run sets loopback ones."""
    env = dict(run["env"])
    if env.get("ROBOTSD_PROXY") == "<from secret>":
        env["ROBOTSD_PROXY"] = "http://proxy-from-secret.invalid:3128"  # no fetch is made here
    if "ROBOTSD_REDIS_URL" in env:
        # A loopback port nothing listens on, for a URL from a Secret or one naming the
        # cluster's Redis (which this machine must not look up): robotsd starts and answers
        # with its store down.
        env["ROBOTSD_REDIS_URL"] = f"redis://{NO_STORE}/0"
    tls = [k for k in ("ROBOTSD_REDIS_CA_FILE", "ROBOTSD_REDIS_CLIENT_CERT",
                       "ROBOTSD_REDIS_CLIENT_KEY") if k in env]
    if tls:
        # The mounted TLS Secret's files, stood in for by a certificate made here (robotsd
        # parses them at start), and a TLS URL to the same port nothing listens on.
        cert, key = scratch + ".redis-tls.crt", scratch + ".redis-tls.key"
        make_cert(cert, key)
        files = {"ROBOTSD_REDIS_CA_FILE": cert, "ROBOTSD_REDIS_CLIENT_CERT": cert,
                 "ROBOTSD_REDIS_CLIENT_KEY": key}
        for k in tls:
            env[k] = files[k]
        if "ROBOTSD_REDIS_URL" in env:
            env["ROBOTSD_REDIS_URL"] = env["ROBOTSD_REDIS_URL"].replace("redis://", "rediss://", 1)
    if env.get("ROBOTSD_FLEET_INDEX") == "<pod index>":
        env["ROBOTSD_FLEET_INDEX"] = "0"  # the first pod's ordinal, as its label would give it
    if "ROBOTSD_REDIS_SENTINEL" in env:
        # Sentinels on loopback ports nothing listens on: robotsd starts and answers with its
        # store down (the chart's names would be looked up in DNS, which this machine cannot
        # answer).
        env["ROBOTSD_REDIS_SENTINEL"] = f"{NO_STORE},{NO_STORE}"
    for name in ("ROBOTSD_REDIS_PASSWORD_FILE", "ROBOTSD_REDIS_SENTINEL_PASSWORD_FILE"):
        if name in env:
            # The mounted Secret's file, stood in for by one written here.
            env[name] = scratch + "." + name.lower()
            write(env[name], "not-a-real-password\n")
    if "ROBOTSD_WBA_KEYS" in env:
        # The mounted Secret's key file, stood in for by a key set written here: RFC 9421's
        # published test key (Appendix B.1.4), which signs nothing anyone trusts.
        env["ROBOTSD_WBA_KEYS"] = scratch + ".wba-keys.json"
        write(env["ROBOTSD_WBA_KEYS"], STAND_IN_WBA_KEYS)
    test_env = dict(run["test_env"])
    if "ROBOTSD_API_TOKEN_FILE" in env:
        # The mounted Secret's file, stood in for by one written here, read by robotsd and the
        # test.
        env["ROBOTSD_API_TOKEN_FILE"] = scratch + ".api-tokens"
        write(env["ROBOTSD_API_TOKEN_FILE"], f"# deploy check\n{STAND_IN_TOKEN}\n")
        if "TOKEN_FILE" in test_env:
            test_env["TOKEN_FILE"] = env["ROBOTSD_API_TOKEN_FILE"]
    test_env = {k: v for k, v in test_env.items() if not k.endswith("_URL")}
    return env, test_env


def fleet_metric_problems(metrics, env):
    """The fleet settings reached robotsd as rendered: robotsd_pace_fleet_size and
    robotsd_pace_fleet_index are ROBOTSD_FLEET_SIZE and ROBOTSD_FLEET_INDEX (-1 when unset).
    None for a binary from before --fleet-size, which has no such series (it ignores the
    variables)."""
    if not re.search(r"(?m)^robotsd_pace_fleet_size ", metrics):
        return None
    problems = []
    for variable, series in (("ROBOTSD_FLEET_SIZE", "robotsd_pace_fleet_size"),
                             ("ROBOTSD_FLEET_INDEX", "robotsd_pace_fleet_index")):
        want = env.get(variable, "")
        got = "\n".join(re.findall(rf"(?m)^{series} (.*)$", metrics))
        if got != (want or "-1"):
            problems.append(f"{series} is '{got}', but the rendering set {variable}='{want}'")
    return problems


def json_log_problems(log):
    """With log format json, every line robotsd wrote is JSON (the settings reached it)."""
    lines = [line for line in log.splitlines() if line.strip()]
    if not lines:
        return ["robotsd wrote no log line"]
    problems = []
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            problems.append(f"a log line is not JSON: {line[:200]}")
    return problems


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def get(url):
    with LOOPBACK.open(url, timeout=5) as answer:
        return answer.read().decode().strip()


class RunFailed(Exception):
    pass


def wget_dir(work):
    """A directory for the test script's PATH: the helm test pod runs its script with
    busybox's sh and wget; here it runs with /bin/sh and the machine's wget, or, without one,
    a stand-in for the wget options the script uses (wget.py)."""
    bin_dir = os.path.join(work, "bin")
    if shutil.which("wget") is None:
        os.makedirs(bin_dir, exist_ok=True)
        stand_in = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wget.py")
        write(os.path.join(bin_dir, "wget"),
              f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(stand_in)} \"$@\"\n")
        os.chmod(os.path.join(bin_dir, "wget"), 0o755)
        print("note: no wget on this machine: the helm test script runs with a Python stand-in")
    return bin_dir


def run_one(run, binary, work, bin_dir):
    """One rendering's run; RunFailed at its first problem."""
    scratch = os.path.join(work, "stand-in-" + run["name"])
    env, test_env = stand_in_env(run, scratch)
    settings = " ".join(f"{k}={v}" for k, v in sorted(env.items()))
    print(f"-- {run['name']}: {settings or 'no ROBOTSD_* variables, the defaults of robotsd'}")
    # Only the addresses change: loopback, free ports (the pod's own addresses are wildcards).
    port = admin_port = free_port()
    overrides = {"ROBOTSD_LISTEN": f"127.0.0.1:{port}"}
    if run["probe_admin"]:
        admin_port = free_port()
        overrides["ROBOTSD_ADMIN_LISTEN"] = f"127.0.0.1:{admin_port}"
    log_path = os.path.join(work, f"robotsd-{run['name']}.log")
    probes = f"http://127.0.0.1:{admin_port}"  # the admin port, or http without one
    with open(log_path, "wb") as log:
        robotsd = subprocess.Popen(
            [binary], stdout=log, stderr=subprocess.STDOUT,
            env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"), **env,
                 **overrides})
    try:
        ready = ""
        for _ in range(100):
            try:
                ready = get(f"{probes}/readyz")
                break
            except OSError:
                pass
            if robotsd.poll() is not None:
                break
            time.sleep(0.1)
        if ready != "ready":
            raise RunFailed(f"robotsd did not become ready with the {run['name']} environment:\n"
                            + read_log(log_path))
        if get(f"{probes}/livez") != "ok":
            raise RunFailed(f"/livez is not ok with the {run['name']} environment")
        metrics = get(f"{probes}/metrics")
        if not re.search(r"(?m)^robotsd_build_info\{version=", metrics):
            raise RunFailed("/metrics has no robotsd_build_info")
        print(f"ok   /readyz, /livez and /metrics on the "
              f"{'admin' if run['probe_admin'] else 'http'} port")
        problems = fleet_metric_problems(metrics, env)
        if problems is None:
            print("note: this robotsd exports no robotsd_pace_fleet_size "
                  "(built before --fleet-size)")
        elif problems:
            raise RunFailed("; ".join(problems))
        else:
            print("ok   robotsd_pace_fleet_size and robotsd_pace_fleet_index as rendered")
        # The pod's environment, with the Service's URLs turned into the loopback ones.
        test = subprocess.run(
            ["sh", "-c", run["test_script"]], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env={**os.environ, **test_env, "READYZ_URL": f"{probes}/readyz",
                            "EVALUATE_URL": f"http://127.0.0.1:{port}/v1/evaluate",
                            "PATH": bin_dir + os.pathsep + os.environ["PATH"]})
        if test.returncode != 0:
            raise RunFailed(f"the helm test script failed against the {run['name']} "
                            f"environment:\n{test.stdout}")
        print(f"ok   helm test script: {(test.stdout.splitlines() or [''])[-1]}")
        robotsd.send_signal(signal.SIGTERM)
        try:
            status = robotsd.wait(timeout=120)
        except subprocess.TimeoutExpired:
            raise RunFailed(f"robotsd did not exit within 2 minutes of SIGTERM with the "
                            f"{run['name']} environment") from None
        if status != 0:
            raise RunFailed(f"robotsd exited {status} on SIGTERM with the {run['name']} "
                            f"environment:\n" + read_log(log_path))
        print("ok   exit 0 on SIGTERM")
        if env.get("ROBOTSD_LOG_FORMAT") == "json":
            log = read_log(log_path)
            problems = json_log_problems(log)
            if problems:
                raise RunFailed("; ".join(problems))
            lines = len([line for line in log.splitlines() if line.strip()])
            print(f"ok   {lines} log lines, all JSON (ROBOTSD_LOG_FORMAT=json)")
    finally:
        if robotsd.poll() is None:
            robotsd.kill()
            robotsd.wait()


def read_log(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def check_runs(work, binary):
    """Every run WORK/runs.json lists (renderings.check_render writes it); the first problem
    ends a run, not the next one."""
    step("robotsd with each rendering's environment: probes, the helm test script, SIGTERM")
    with open(os.path.join(work, "runs.json"), encoding="utf-8") as f:
        found = json.load(f)
    if not found:
        fail("no rendering to run robotsd with (runs.json is empty)")
    bin_dir = wget_dir(work)
    for run in found:
        try:
            run_one(run, binary, work, bin_dir)
        except RunFailed as e:
            fail(str(e))
        except OSError as e:  # a probe or /metrics that did not answer 200
            fail(f"{run['name']}: {e}")
