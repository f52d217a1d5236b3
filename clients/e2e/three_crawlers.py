"""Scrapy, Crawlee and a Go crawler crawl one site through one robotsd, at the same time.

The fleet case robotsd exists for: three crawlers written in three languages, each through its
framework's robotsd integration (clients/python's Scrapy middleware, clients/typescript's
Crawlee hook, clients/go's Transport), start together on a cold cache. The test holds:

- each crawler fetched exactly the pages robotsd allows (asked of robotsd in one batch, not
  written down here), and refused exactly the others;
- every allowed page was fetched once by each crawler, and no disallowed page by any;
- the site's robots.txt was fetched once, by robotsd, for the three together.

Usage: python three_crawlers.py --robotsd-bin BIN --python PY   (run by .ci/client-checks.sh;
PY is an interpreter with the Python client and Scrapy installed; `node` and `go` come from
PATH, and clients/typescript must be built). Every check passes or raises.
"""

import argparse
import collections
import http.server
import json
import pathlib
import socket
import subprocess
import sys
import threading
import time
import urllib.request

CLIENTS = pathlib.Path(__file__).resolve().parent.parent

ROBOTS = """User-agent: *
Disallow: /private/
Allow: /private/public
Disallow: /*.pdf$
Crawl-delay: 0.01

User-agent: OtherBot
Disallow: /
"""


def site_paths():
    paths = ["/"] + [f"/p/{i}" for i in range(30)] + [f"/private/{i}" for i in range(10)]
    for i in range(5):
        paths += [f"/private/public/{i}", f"/docs/{i}.pdf"]
    return paths


class Site:
    """A loopback site of 51 pages, the index linking to every other; counts each path's GETs."""

    def __init__(self):
        self.hits = collections.Counter()
        self.lock = threading.Lock()
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                path = self.path.split("?", 1)[0]
                with site.lock:
                    site.hits[path] += 1
                if path == "/robots.txt":
                    body, kind = ROBOTS, "text/plain"
                elif path == "/":
                    body = "".join(f'<a href="{p}">{p}</a>\n' for p in site_paths()[1:])
                    body, kind = f"<html><body>{body}</body></html>", "text/html"
                else:
                    body, kind = f"<html><body>page {path}</body></html>", "text/html"
                data = body.encode()
                self.send_response(200)
                self.send_header("content-type", f"{kind}; charset=utf-8")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_robotsd(binary):
    port = free_port()
    process = subprocess.Popen(
        [binary, "--listen", f"127.0.0.1:{port}", "--allow-private-networks",
         "--operator-contact", "mailto:ci@robotsd.invalid"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            urllib.request.urlopen(f"{base}/readyz", timeout=1)
            return process, base
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise AssertionError("robotsd did not become ready")


def allowed_paths(robotsd, site, ua):
    body = json.dumps({"ua": ua, "urls": [site.url + p for p in site_paths()]}).encode()
    request = urllib.request.Request(
        f"{robotsd}/v1/check?view=verdict", data=body, headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        results = json.load(response)["results"]
    assert all("error" not in r for r in results), results
    return sorted(p for p, r in zip(site_paths(), results) if r["allowed"])


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--robotsd-bin", required=True)
    args.add_argument("--python", required=True)
    args = args.parse_args()

    site = Site()
    process, robotsd = start_robotsd(args.robotsd_bin)
    try:
        common = ["--robotsd", robotsd, "--start", site.url + "/"]
        crawlers = {
            "scrapy": [args.python, str(CLIENTS / "python/examples/scrapy_crawl.py"),
                       *common, "--ua", "ScrapyExampleBot"],
            "crawlee": ["node", str(CLIENTS / "typescript/examples/crawlee-crawl.mjs"),
                        *common, "--ua", "CrawleeExampleBot"],
            "go": ["go", "run", "./examples/crawl", *common, "--ua", "GoExampleBot"],
        }
        cwd = {"go": CLIENTS / "go"}
        # All three start on a cold cache at once: robotsd's single flight, not its cache
        # alone, is what keeps robots.txt to one fetch.
        running = {
            name: subprocess.Popen(cmd, cwd=cwd.get(name), stdout=subprocess.PIPE, text=True)
            for name, cmd in crawlers.items()
        }
        outputs = {}
        for name, proc in running.items():
            out, _ = proc.communicate(timeout=300)
            assert proc.returncode == 0, f"{name} exited with {proc.returncode}"
            lines = [line for line in out.splitlines() if line.strip()]
            assert len(lines) == 1, f"{name} printed {out!r}, not one line of JSON"
            outputs[name] = json.loads(lines[0])

        everything = sorted(site_paths())
        for name in crawlers:
            allowed = allowed_paths(robotsd, site, crawlers[name][-1])
            refused = sorted(set(everything) - set(allowed))
            got = outputs[name]
            assert got["fetched"] == allowed, f"{name} fetched {got['fetched']}, allowed {allowed}"
            assert got["disallowed"] == refused, f"{name} refused {got['disallowed']}, not {refused}"
            print(f"{name}: fetched {len(allowed)} pages, refused {len(refused)}, as robotsd allows")
        # 1 index + 30 pages + 5 under /private/public; 10 private and 5 PDFs refused.
        assert len(allowed) == 36, allowed
        for path in everything:
            want = 3 if path in allowed else 0
            assert site.hits[path] == want, f"{path} fetched {site.hits[path]} times, not {want}"
        assert site.hits["/robots.txt"] == 1, f"robots.txt fetched {site.hits['/robots.txt']} times"
        print("robots.txt: fetched once, by robotsd, for the three crawlers together")
    finally:
        process.kill()
        process.wait()


if __name__ == "__main__":
    sys.exit(main())
