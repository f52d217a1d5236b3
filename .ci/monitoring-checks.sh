#!/usr/bin/env bash
# Checks the monitoring artefacts the way Prometheus itself reads them:
#   1. promtool check config deploy/prometheus/prometheus.yml and prometheus.fleet.yml (and the
#      rule file they name);
#   2. promtool check rules deploy/prometheus/alerts.yaml;
#   3. promtool test rules deploy/prometheus/alerts.test.yaml (and docs/deploy.md's alert table
#      lists every rule): every alert fires on a failing
#      series and stays quiet on a healthy one;
#   4. live, on loopback only: a real Prometheus, with prometheus.yml (its target pointed at this
#      robotsd, scraping every second) and alerts.yaml, scrapes the release robotsd (with a local
#      redis-server as its shared store) while it answers checks against local origins
#      (ordinary, 503, 404, too slow); every rule must
#      evaluate without error, and every query of deploy/grafana/robotsd-dashboard.json and its
#      variables must return series.
# That every metric and label these files name is one robotsd exports is checked by
# `cargo test --test service deploy_artifacts::`.
#
# promtool and prometheus come from $PROMTOOL and $PROMETHEUS, else the PATH, else Debian's
# `prometheus` package: downloaded and unpacked into a temporary folder (no Prometheus is
# installed or started as a service, and none of the package's dependencies is needed; both are
# static Go binaries). ROBOTSD_BIN may name a robotsd binary to use instead of
# `cargo build --release --locked`.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step "promtool and prometheus"
promtool=${PROMTOOL:-$(command -v promtool || true)}
prometheus=${PROMETHEUS:-$(command -v prometheus || true)}
if [ -z "$promtool" ] || [ -z "$prometheus" ]; then
  echo "unpacking them from Debian's prometheus package"
  # `apt-get download` needs current package lists: on a first failure (no lists, or lists
  # naming a version the mirror has since replaced), update them and try once more.
  download() { (cd "$work" && apt-get download -qq prometheus) 2>"$work/apt.log"; }
  if ! download; then
    apt-get update -qq
    if ! download; then
      cat "$work/apt.log" >&2
      echo "could not download Debian's prometheus package (for promtool and prometheus)" >&2
      exit 1
    fi
  fi
  deb=$(find "$work" -maxdepth 1 -name 'prometheus_*.deb' | head -n 1)
  dpkg-deb -x "$deb" "$work/prometheus-deb"
  promtool=${promtool:-$work/prometheus-deb/usr/bin/promtool}
  prometheus=${prometheus:-$work/prometheus-deb/usr/bin/prometheus}
fi
"$promtool" --version | head -n 1
"$prometheus" --version | head -n 1

step "promtool check config deploy/prometheus/prometheus.yml"
"$promtool" check config deploy/prometheus/prometheus.yml
"$promtool" check config deploy/prometheus/prometheus.fleet.yml

step "promtool check rules deploy/prometheus/alerts.yaml"
"$promtool" check rules deploy/prometheus/alerts.yaml

step "promtool test rules deploy/prometheus/alerts.test.yaml"
"$promtool" test rules deploy/prometheus/alerts.test.yaml

step "docs/deploy.md's alert table lists every rule alerts.yaml holds, and no other"
python3 - <<'PY'
import re, sys
rules = re.findall(r"^\s*- alert: (\S+)", open("deploy/prometheus/alerts.yaml").read(), re.M)
table = re.findall(r"^\| `(Robotsd\w+)` \|", open("docs/deploy.md").read(), re.M)
if sorted(rules) != sorted(table):
    sys.exit(f"alerts.yaml has {sorted(set(rules) - set(table))} not in docs/deploy.md; "
             f"docs/deploy.md has {sorted(set(table) - set(rules))} not in alerts.yaml")
print(f"ok   {len(rules)} alerts, each in the table")
PY

step "live: Prometheus scrapes robotsd; rules evaluate, dashboard queries return series"
bin=${ROBOTSD_BIN:-target/release/robotsd}
if [ -z "${ROBOTSD_BIN:-}" ]; then
  cargo build --release --locked --quiet --bin robotsd
fi
cat > "$work/live_check.py" <<'PY'
"""A real Prometheus scrapes a real robotsd, both on loopback, with deploy/prometheus's
configuration and rules: every rule must evaluate without error and every query of the Grafana
dashboard (variables filled in) must return series. Traffic goes only to local origins."""
import atexit
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

robotsd_bin, prometheus_bin, work = sys.argv[1:4]
procs = []


def stop_all():
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()


atexit.register(stop_all)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read()


def get_status(url, data=None, timeout=10):
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def wait_for(url, what, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if any(p.poll() is not None for p in procs):
            sys.exit(f"{what}: a process exited early (status {[p.poll() for p in procs]})")
        try:
            if get(url)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    sys.exit(f"{what} not ready at {url}")


# Local origins, one port each (the origin includes the port): ordinary robots.txt files, one
# answering 503 (unreachable: backoff), one 404 (no robots.txt), one too slow for robotsd's
# request time limit (a 504).
class Origin(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        kind = self.server.kind
        if kind == "slow":
            time.sleep(3)
        status = {"503": 503, "404": 404}.get(kind, 200)
        body = b"User-agent: *\nDisallow: /private\n" if status == 200 else b"no"
        if kind == "rsl":
            # A robots.txt with an RSL license, so that the dashboard's license panels have
            # series (robotsd runs with --rsl).
            port = self.server.server_address[1]
            body = (b"User-agent: *\nDisallow: /private\nCrawl-delay: 0.1\n"
                    b"License: http://127.0.0.1:%d/license.xml\n" % port)
            if self.path == "/license.xml":
                body = (b'<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license>'
                        b'<permits type="usage">search</permits></license></content></rsl>')
        try:
            self.send_response(status)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # robotsd gave up on the slow origin first

    def log_message(self, *args):
        pass


origins = {}
for kind in ["ok"] * 6 + ["503", "404", "slow", "rsl"]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    server.kind = kind
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origins.setdefault(kind, []).append(server.server_address[1])

api, admin, prom, redis = free_port(), free_port(), free_port(), free_port()
# A shared store too (installed by .ci/run), so that its series exist for the dashboard's store
# panels and the store alert.
procs.append(subprocess.Popen(
    ["redis-server", "--bind", "127.0.0.1", "--port", str(redis), "--save", "",
     "--appendonly", "no"], stdout=subprocess.DEVNULL))
procs.append(subprocess.Popen(
    [robotsd_bin, f"--listen=127.0.0.1:{api}", f"--admin-listen=127.0.0.1:{admin}",
     "--allow-private-networks", "--request-timeout=1s", "--log-level=error", "--rsl",
     f"--redis-url=redis://127.0.0.1:{redis}/0"]))
wait_for(f"http://127.0.0.1:{admin}/readyz", "robotsd")

# deploy/prometheus as it is, but scraping this robotsd every second.
conf_dir = os.path.join(work, "prometheus")
os.makedirs(conf_dir)
shutil.copy("deploy/prometheus/alerts.yaml", conf_dir)
config = open("deploy/prometheus/prometheus.yml").read()
for old, new in [("robotsd:9090", f"127.0.0.1:{admin}"), ("scrape_interval: 15s", "scrape_interval: 1s"),
                 ("scrape_timeout: 10s", "scrape_timeout: 1s"),
                 ("evaluation_interval: 15s", "evaluation_interval: 1s")]:
    assert old in config, f"prometheus.yml no longer has {old!r}"
    config = config.replace(old, new)
open(os.path.join(conf_dir, "prometheus.yml"), "w").write(config)
procs.append(subprocess.Popen(
    [prometheus_bin, f"--config.file={conf_dir}/prometheus.yml",
     f"--storage.tsdb.path={work}/tsdb", f"--web.listen-address=127.0.0.1:{prom}",
     "--log.level=warn"], stdout=subprocess.DEVNULL, stderr=open(f"{work}/prometheus.log", "w")))
try:
    wait_for(f"http://127.0.0.1:{prom}/-/ready", "prometheus")
finally:
    if procs[-1].poll() is not None:
        print(open(f"{work}/prometheus.log").read()[-3000:], file=sys.stderr)


def check(ua, port, path="/x", extra=""):
    url = urllib.parse.quote(f"http://127.0.0.1:{port}{path}", safe="")
    return get_status(f"http://127.0.0.1:{api}/v1/check?url={url}&ua={ua}{extra}")


# About 20 s of traffic, bounded, all to loopback.
statuses = set()
end = time.time() + 20
round_ = 0
while time.time() < end:
    for kind, ports in origins.items():
        if kind == "slow" and round_ % 5:
            continue
        for port in ports:
            # The license origin's checks reserve pacing slots, for the pacing panels.
            extra = "&pace=true" if kind == "rsl" else ""
            statuses.add(check("ExampleBot", port, "/private/a" if round_ % 2 else "/a", extra))
    statuses.add(get_status(f"http://127.0.0.1:{api}/v1/evaluate", json.dumps(
        {"robots_txt": "User-agent: *\nDisallow: /p\n", "ua": "B", "urls": ["/p", "/q"]}).encode()))
    statuses.add(get_status(f"http://127.0.0.1:{api}/nope"))
    # What the license origin answered a paced fetch, for the pacing reports panel.
    statuses.add(get_status(f"http://127.0.0.1:{api}/v1/feedback", json.dumps(
        {"reports": [{"url": f"http://127.0.0.1:{origins['rsl'][0]}/a", "status": 200}]}).encode()))
    round_ += 1
    time.sleep(0.3)
for wanted in (200, 404, 504):
    if wanted not in statuses:
        sys.exit(f"traffic did not produce a {wanted} (got {sorted(statuses)})")


def query(expr):
    url = f"http://127.0.0.1:{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        body = json.loads(get(url)[1])
    except urllib.error.HTTPError as e:
        return f"error {e.code}: {e.read().decode()[:300]}"
    if body["status"] != "success":
        return f"error: {body}"
    return body["data"]["result"]


failures = []
dashboard = json.load(open("deploy/grafana/robotsd-dashboard.json"))
stack, panels = list(dashboard["panels"]), []
while stack:
    p = stack.pop()
    stack.extend(p.get("panels", []))
    panels.append(p)
queried = 0
for panel in panels:
    for target in panel.get("targets", []):
        expr = target["expr"].replace("$__rate_interval", "15s")
        expr = re.sub(r"\$\{?[A-Za-z_]\w*\}?", ".+", expr)
        result = query(expr)
        queried += 1
        if isinstance(result, str) or not result:
            failures.append(f"dashboard panel {panel['title']!r} {target['refId']}: "
                            f"{result or 'no series'}\n    {expr}")
for variable in dashboard["templating"]["list"]:
    if variable["type"] != "query":
        continue
    m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", variable["query"])
    selector, label = re.sub(r"\$\{?\w+\}?", ".+", m.group(1)), m.group(2)
    url = (f"http://127.0.0.1:{prom}/api/v1/label/{label}/values?"
           + urllib.parse.urlencode({"match[]": selector}))
    values = json.loads(get(url)[1])["data"]
    if not values:
        failures.append(f"dashboard variable {variable['name']}: no values")
print(f"ok   {queried} dashboard queries")

rules = json.loads(get(f"http://127.0.0.1:{prom}/api/v1/rules")[1])["data"]["groups"]
names = []
for group in rules:
    for rule in group["rules"]:
        names.append(rule["name"])
        if rule["health"] != "ok":
            failures.append(f"rule {rule['name']}: {rule['health']} {rule.get('lastError')}")
        else:
            # The rule's expression, evaluated now, must parse and run too.
            result = query(rule["query"])
            if isinstance(result, str):
                failures.append(f"rule {rule['name']}: {result}")
print(f"ok   {len(names)} rules evaluated by Prometheus: {', '.join(names)}")
# With its store up, the replica is not deciding slots alone: RobotsdPacingAlone and
# RobotsdFleetPacingUnsafe stay quiet on a healthy fleet.
for expr in ["robotsd_origins_in_backoff > 0", 'robotsd_robots_fetches_total{outcome="unreachable"} > 0',
             'robotsd_http_requests_total{status="504"} > 0', "robotsd_pace_alone == 0"]:
    if not query(expr) or isinstance(query(expr), str):
        failures.append(f"expected series missing: {expr}")

stop_all()
if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(1)
print("ok   live: Prometheus scraped robotsd, rules healthy, every dashboard query has series")
PY
mkdir "$work/live"
python3 "$work/live_check.py" "$bin" "$prometheus" "$work/live"

echo
echo "monitoring checks passed"
