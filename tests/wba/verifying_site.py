"""A loopback site that verifies Web Bot Auth signatures as a site would, with a verifier that
shares no code with robotsd: PyPI's http-message-signatures (RFC 9421) and cryptography's
Ed25519.

It knows the fleet by one URL, its key directory (the `Signature-Agent` value robotsd sends), and
fetches that directory from robotsd as a site fetches it from the bot domain: the response's
signatures are verified over the domain's authority and the body's Content-Digest, and only keys
with a valid signature are kept. The directory is fetched again every `refresh` seconds (a site
honours `Cache-Control`; tests shorten it).

Every request is verified as draft-ietf-webbotauth-httpsig-protocol asks: a `Signature-Agent`
member naming the known directory, the signature with that member's label, tagged
`web-bot-auth`, covering the authority and that member, by a key of the directory, not expired.
A verified request is answered 200, any other 401 with the reason; `/robots.txt` is answered
to anyone (robots.txt is public), its verdict recorded. Each request is logged as a JSON line
(method, path, verified, key id, reason).

`pages` gives a crawler something to crawl: a path (with its query, as requested) maps to an
HTML body, answered 200 `text/html`, or to `{"redirect": "/other"}`, answered 301 with that
`Location`; a verified request for a path not listed is answered 404. Without `pages`, every
verified request is answered 200 with its key id. An unverified request is answered 401 either
way.

As a program (for tests in other languages): `python verifying_site.py --directory-url URL --fetch-from
URL [--refresh S] [--robots FILE] [--pages FILE]` (FILE: a JSON object of pages) prints
`listening <port>` and logs one JSON line per request on stdout.

The clients' signing tests run it that way, with the interpreter `.ci/client-checks.sh` exports
as `ROBOTSD_WBA_PYTHON` (a virtualenv of .ci/wba-requirements.txt), against a robotsd started
with `--wba-keys tests/wba/test-keys.json` (RFC 9421's published Ed25519 test key, B.1.4: never
a key to deploy).
"""

from __future__ import annotations

import argparse
import base64
import datetime
import hashlib
import http.server
import json
import sys
import threading
import types
import urllib.parse
import urllib.request

import http_sf
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from http_message_signatures import HTTPMessageVerifier, HTTPSignatureKeyResolver, algorithms

DIRECTORY_TYPE = "application/http-message-signatures-directory+json"


class Keys(HTTPSignatureKeyResolver):
    """The directory's keys by id, swapped whole on each refresh."""

    def __init__(self) -> None:
        self.by_kid: dict[str, Ed25519PublicKey] = {}

    def resolve_public_key(self, key_id: str) -> Ed25519PublicKey:
        key = self.by_kid.get(key_id)
        if key is None:
            raise KeyError(f"key {key_id} is not in the directory")
        return key


def public_key(jwk: dict) -> Ed25519PublicKey:
    if jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
        raise ValueError(f"not an Ed25519 key: {jwk}")
    x = jwk["x"]
    return Ed25519PublicKey.from_public_bytes(base64.urlsafe_b64decode(x + "=" * (-len(x) % 4)))


def thumbprint(jwk: dict) -> str:
    """RFC 7638's JWK SHA-256 thumbprint of an OKP key."""
    canonical = json.dumps({"crv": jwk["crv"], "kty": jwk["kty"], "x": jwk["x"]}, separators=(",", ":"))
    return base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()


def fetch_directory(directory_url: str, fetch_from: str, host: str | None = None) -> dict[str, Ed25519PublicKey]:
    """The keys of the directory at `directory_url`, fetched from `fetch_from` (robotsd on
    loopback) with the directory's host (or `host`, to test a copy served under another), kept
    only if the response's signatures verify for the directory's host."""
    authority = urllib.parse.urlsplit(directory_url).netloc
    request = urllib.request.Request(fetch_from, headers={"Host": host or authority})
    with urllib.request.urlopen(request, timeout=10) as response:
        status, headers, body = response.status, response.headers, response.read()
    if status != 200 or headers.get("Content-Type") != DIRECTORY_TYPE:
        raise ValueError(f"directory: {status} {headers.get('Content-Type')}")
    digest = "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"
    if headers.get("Content-Digest") != digest:
        raise ValueError("directory: Content-Digest does not match the body")
    listed: dict[str, Ed25519PublicKey] = {}
    for jwk in json.loads(body)["keys"]:
        kid = thumbprint(jwk)
        if jwk.get("kid", kid) != kid:
            raise ValueError(f"directory: kid {jwk.get('kid')} is not the thumbprint {kid}")
        listed[kid] = public_key(jwk)
    resolver = Keys()
    resolver.by_kid = listed
    answer = types.SimpleNamespace(
        status_code=200,
        headers={name: value for name, value in headers.items()},
        request=types.SimpleNamespace(method="GET", url=directory_url, headers={}),
    )
    # Every signature tagged for a directory must verify, over the host asked of and the body.
    verified = HTTPMessageVerifier(signature_algorithm=algorithms.ED25519, key_resolver=resolver).verify(
        answer,
        max_age=datetime.timedelta(days=2),
        expect_tag="http-message-signatures-directory",
        require_components=['"@authority";req', '"content-digest"'],
        body=body,
    )
    signed = {result.parameters["keyid"] for result in verified}
    if not signed:
        raise ValueError("directory: no signature verified")
    # A key no signature vouches for is still listed: a published key whose private half the
    # signer does not hold (draft: one signature per key it holds). It must be listed beside a
    # signed one, which this check has ensured.
    return listed


class Site:
    """The site: an HTTP server on 127.0.0.1 and what it has seen."""

    def __init__(self, directory_url: str, fetch_from: str, refresh: float = 3600.0,
                 robots: str = "User-agent: *\nDisallow: /private\n", log=None,
                 pages: dict | None = None) -> None:
        self.directory_url = directory_url
        self.fetch_from = fetch_from
        self.refresh = refresh
        self.robots = robots.encode()
        self.pages = pages
        self.keys = Keys()
        self.keys.by_kid = fetch_directory(directory_url, fetch_from)
        self.seen: list[dict] = []
        self.lock = threading.Lock()
        self.log = log
        self.stopped = threading.Event()
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                path = urllib.parse.urlsplit(self.path).path
                verified, kid, reason = site.verify(self.command, self.path, self.headers)
                site.record({"method": self.command, "path": self.path, "verified": verified,
                             "kid": kid, "reason": reason})
                content_type, location = "text/plain", None
                if path == "/robots.txt":
                    status, body = 200, site.robots
                elif not verified:
                    status, body = 401, f"refused: {reason}\n".encode()
                elif site.pages is None:
                    status, body = 200, f"verified {kid}\n".encode()
                elif isinstance(page := site.pages.get(self.path), str):
                    status, body, content_type = 200, page.encode(), "text/html; charset=utf-8"
                elif isinstance(page, dict) and "redirect" in page:
                    status, body, location = 301, b"", page["redirect"]
                else:
                    status, body = 404, b"not found\n"
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                if location is not None:
                    self.send_header("Location", location)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_HEAD = do_POST = answer

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        threading.Thread(target=self._refresh, daemon=True).start()

    def _refresh(self) -> None:
        while not self.stopped.wait(self.refresh):
            try:
                self.keys.by_kid = fetch_directory(self.directory_url, self.fetch_from)
            except Exception as error:  # a failed refresh keeps the keys it had, as a cache does
                self.record({"directory": "refresh failed", "reason": str(error)})

    def record(self, entry: dict) -> None:
        with self.lock:
            self.seen.append(entry)
        if self.log is not None:
            print(json.dumps(entry), file=self.log, flush=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def verify(self, method: str, target: str, headers) -> tuple[bool, str | None, str | None]:
        """(verified, key id, why not)."""
        agent = headers.get("Signature-Agent")
        if agent is None or headers.get("Signature-Input") is None:
            return False, None, "unsigned"
        try:
            members = http_sf.parse(agent.encode(), tltype="dictionary")
        except Exception as error:
            return False, None, f"Signature-Agent is not a dictionary: {error}"
        labels = [label for label, (value, params) in members.items()
                  if value == self.directory_url and not params]
        if not labels:
            return False, None, f"no Signature-Agent member names {self.directory_url}"
        host = headers.get("Host")
        message = types.SimpleNamespace(
            method=method,
            url=f"http://{host}{target}",
            headers={name: value for name, value in headers.items()},
        )
        verifier = HTTPMessageVerifier(signature_algorithm=algorithms.ED25519, key_resolver=self.keys)
        label = labels[0]
        try:
            results = verifier.verify(
                message,
                max_age=datetime.timedelta(minutes=10),
                expect_tag="web-bot-auth",
                expect_label=label,
                require_components=['"@authority"', f'"signature-agent";key="{label}"'],
            )
        except Exception as error:
            return False, None, f"{type(error).__name__}: {error}"
        params = results[0].parameters
        if "expires" not in params:
            return False, params.get("keyid"), "no expires"
        return True, params["keyid"], None

    def close(self) -> None:
        self.stopped.set()
        self.server.shutdown()
        self.server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--directory-url", required=True)
    parser.add_argument("--fetch-from", required=True)
    parser.add_argument("--refresh", type=float, default=3600.0)
    parser.add_argument("--robots")
    parser.add_argument("--pages")
    args = parser.parse_args()
    robots = open(args.robots).read() if args.robots else "User-agent: *\nDisallow: /private\n"
    pages = json.load(open(args.pages)) if args.pages else None
    site = Site(args.directory_url, args.fetch_from, args.refresh, robots, log=sys.stdout, pages=pages)
    print(f"listening {site.port}", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
