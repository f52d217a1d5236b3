"""Web Bot Auth, verified independently (issue 59): the real robotsd binary signs, and a loopback
site (verifying_site.py: PyPI's http-message-signatures, no code shared with robotsd) verifies.

- An allowed URL's signature verifies for GET and for HEAD; a disallowed URL gets none; robotsd's
  own robots.txt fetch comes signed and verifies.
- Changed after signing, each of method, host, path, query, `Signature-Agent` and the signature
  itself is refused; so is a signature past its `expires`.
- The directory verifies only for the host it was asked for.
- A key rotated as docs/bot-auth.md says (publish the new key, make it active, retire the old)
  fails no verification on the way, while requests are signed and sent all along.

Usage: python check.py ROBOTSD_BINARY. Loopback only.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import verifying_site as wba_site  # noqa: E402

AGENT = "https://bot.example/.well-known/http-message-signatures-directory"
DIRECTORY_PATH = "/.well-known/http-message-signatures-directory"


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def new_key() -> dict:
    private = Ed25519PrivateKey.generate()
    d = private.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                              serialization.NoEncryption())
    x = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return {"kty": "OKP", "crv": "Ed25519", "x": b64url(x), "d": b64url(d)}


def kid(key: dict) -> str:
    return wba_site.thumbprint(key)


def write_keys(path: str, keys: list[tuple[dict, str]]) -> None:
    with open(path + ".new", "w") as out:
        json.dump({"keys": [dict(key, status=status) for key, status in keys]}, out)
    os.replace(path + ".new", path)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Robotsd:
    def __init__(self, binary: str, keys: str, ttl: str) -> None:
        for _ in range(5):
            self.port = free_port()
            self.process = subprocess.Popen(
                [binary, "--listen", f"127.0.0.1:{self.port}", "--allow-private-networks",
                 "--wba-keys", keys, "--wba-agent", AGENT, "--wba-ttl", ttl],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(400):
                if self.process.poll() is not None:
                    break
                try:
                    with urllib.request.urlopen(self.url("/livez"), timeout=2) as r:
                        if r.headers.get("x-request-id") and r.read().strip() == b"ok":
                            return
                except OSError:
                    pass
                time.sleep(0.025)
            self.process.kill()
            self.process.wait()
        raise SystemExit("robotsd did not start")

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def check(self, url: str, sign: str = "GET") -> dict:
        query = urllib.parse.urlencode({"url": url, "ua": "ExampleBot", "sign": sign})
        with urllib.request.urlopen(self.url("/v1/check?" + query), timeout=30) as r:
            return json.load(r)

    def directory_kids(self) -> set[str]:
        request = urllib.request.Request(self.url(DIRECTORY_PATH), headers={"Host": "bot.example"})
        with urllib.request.urlopen(request, timeout=10) as r:
            return {k["kid"] for k in json.load(r)["keys"]}

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def send(url: str, method: str, headers: dict, host: str | None = None) -> tuple[int, str]:
    headers = dict(headers)
    if host is not None:
        headers["Host"] = host
    request = urllib.request.Request(url, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def expect(what: str, status: int, body: str, wanted: int) -> None:
    if status != wanted:
        raise SystemExit(f"FAIL {what}: {status} {body!r}, wanted {wanted}")
    print(f"ok   {what}: {status} {body.strip()[:100]}")


def signed_checks(robotsd: Robotsd, site) -> None:
    for method in ["GET", "HEAD"]:
        answer = robotsd.check(site.url("/shop/item?id=7&q=a%20b"), sign=method)
        sign = answer["sign"]
        assert sign["method"] == method and sign["url"] == site.url("/shop/item?id=7&q=a%20b"), answer
        status, body = send(sign["url"], method, sign["headers"])
        expect(f"{method} as signed", status, body, 200)
        assert site.seen[-1]["verified"] and site.seen[-1]["kid"] == sign["keyid"], site.seen[-1]
    answer = robotsd.check(site.url("/private/x"))
    assert answer["allowed"] is False and "sign" not in answer, answer
    print("ok   a disallowed URL is not signed")
    # robotsd's own fetch of robots.txt came signed, and verified.
    robots = [s for s in site.seen if s.get("path") == "/robots.txt"]
    assert len(robots) == 1 and robots[0]["verified"], robots
    print(f"ok   robotsd's own robots.txt fetch verified: key {robots[0]['kid']}")

    sign = robotsd.check(site.url("/shop?id=7"))["sign"]
    url, headers = sign["url"], sign["headers"]
    tampered = {
        "another method": (url, "POST", headers, None),
        "another host": (url, "GET", headers, f"localhost:{site.port}"),
        "another path": (url.replace("/shop?", "/shops?"), "GET", headers, None),
        "another query": (url.replace("id=7", "id=8"), "GET", headers, None),
        "no query": (url.split("?")[0], "GET", headers, None),
        "another agent": (url, "GET", dict(headers, **{
            "Signature-Agent": 'sig1="https://evil.example/.well-known/http-message-signatures-directory"'}), None),
        "the agent under another label": (url, "GET", dict(headers, **{
            "Signature-Agent": headers["Signature-Agent"].replace("sig1=", "sig2=")}), None),
        "another signature": (url, "GET", dict(headers, **{
            "Signature": "sig1=:" + base64.b64encode(bytes(64)).decode() + ":"}), None),
        "unsigned": (url, "GET", {}, None),
    }
    for what, (target, method, sent, host) in tampered.items():
        status, body = send(target, method, sent, host)
        expect(what, status, body, 401)
    status, body = send(url, "GET", headers)
    expect("the same signature, untouched", status, body, 200)


def expiry(binary: str, keys: str, site) -> None:
    robotsd = Robotsd(binary, keys, "1s")
    try:
        sign = robotsd.check(site.url("/shop?late=1"))["sign"]
        # Past `expires` (a second after `created`) and the verifier's 5 s tolerance of clock
        # skew, whatever the machine's speed.
        time.sleep(8)
        status, body = send(sign["url"], "GET", sign["headers"])
        expect("past expires", status, body, 401)
        assert "expires" in body, body
    finally:
        robotsd.stop()


def directory_for_another_host(robotsd: Robotsd) -> None:
    evil = "https://evil.example" + DIRECTORY_PATH
    # Fetched under bot.example, checked as if served by evil.example: the signature covers the
    # host it was asked of.
    try:
        wba_site.fetch_directory(evil, robotsd.url(DIRECTORY_PATH), host="bot.example")
    except Exception as error:
        print(f"ok   a directory served for another host is refused: {type(error).__name__}")
        return
    raise SystemExit("FAIL a directory served for another host verified")


def rotation(robotsd: Robotsd, site, keys_path: str, old: dict) -> None:
    """The documented rotation, with the site's directory refreshed every second in place of an
    hour: requests signed and sent throughout, none refused."""
    new = new_key()
    failures, kids, done = [], set(), threading.Event()

    def crawl() -> None:
        n = 0
        while not done.is_set():
            n += 1
            try:
                sign = robotsd.check(site.url(f"/rotating?n={n}"))["sign"]
                status, body = send(sign["url"], "GET", sign["headers"])
                kids.add(sign["keyid"])
                if status != 200:
                    failures.append((sign["keyid"], status, body))
            except Exception as error:
                failures.append(("-", "error", repr(error)))
            time.sleep(0.02)

    def reload_until(kids_listed: set[str], active: dict) -> None:
        robotsd.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 30
        while (robotsd.directory_kids() != kids_listed
               or robotsd.check(site.url("/probe"))["sign"]["keyid"] != kid(active)):
            if time.monotonic() > deadline:
                raise SystemExit(f"FAIL robotsd never listed {kids_listed} with {kid(active)} active")
            time.sleep(0.05)
        # The site's copy expires (a second here) and is fetched again.
        time.sleep(5 * site.refresh)

    worker = threading.Thread(target=crawl)
    worker.start()
    try:
        time.sleep(1)
        write_keys(keys_path, [(old, "active"), (new, "published")])
        reload_until({kid(old), kid(new)}, old)
        write_keys(keys_path, [(new, "active"), (old, "published")])
        reload_until({kid(old), kid(new)}, new)
        # The longest signature lifetime past (the main robotsd's, 10 s) and the copy's refresh.
        time.sleep(11)
        write_keys(keys_path, [(new, "active")])
        reload_until({kid(new)}, new)
        time.sleep(1)
    finally:
        done.set()
        worker.join()
    if failures:
        print("directory refreshes that failed:", [s for s in site.seen if "directory" in s][:3])
        raise SystemExit(f"FAIL rotation: {len(failures)} refused, first {failures[:3]}")
    if kids != {kid(old), kid(new)}:
        raise SystemExit(f"FAIL rotation: signed with {kids}")
    count = sum(1 for s in site.seen if s.get("path", "").startswith("/rotating"))
    print(f"ok   rotation: {count} requests signed and verified, old key then new, none refused")
    # The old key retired: a signature it made is refused once the site's copy drops it.
    sign = robotsd.check(site.url("/after"))["sign"]
    assert sign["keyid"] == kid(new), sign


def main() -> None:
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as work:
        keys_path = os.path.join(work, "keys.json")
        key = new_key()
        write_keys(keys_path, [(key, "active")])
        robotsd = Robotsd(binary, keys_path, "10s")
        site = None
        try:
            site = wba_site.Site(AGENT, robotsd.url(DIRECTORY_PATH), refresh=1.0)
            assert set(site.keys.by_kid) == {kid(key)}, site.keys.by_kid
            print(f"ok   the site holds the directory's key {kid(key)}")
            directory_for_another_host(robotsd)
            signed_checks(robotsd, site)
            expiry(binary, keys_path, site)
            rotation(robotsd, site, keys_path, key)
        finally:
            if site is not None:
                site.close()
            robotsd.stop()
    print("Web Bot Auth: every check passed")


if __name__ == "__main__":
    main()
