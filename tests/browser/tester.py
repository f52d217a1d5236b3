"""The robots.txt tester page in a real headless Chromium (Debian's), driven by Playwright.

Starts a robotsd release binary and loopback origins, then uses the page as a person would:
a live check, a switch to Edit, a shared link, hostile text, problems next to their fields, the
Content-Security-Policy, no request to another host, an accessibility check with the vendored
axe-core, and screenshots at 360 and 1440 px.

Usage: python tester.py ROBOTSD_BINARY SCREENSHOT_DIR   (run by .ci/browser-checks.sh)
Every check either passes or raises; a missing browser is a failure, never a skip.
"""

import http.server
import json
import os
import pathlib
import socket
import subprocess
import sys
import threading
import time
import traceback
import urllib.parse
import urllib.request

from playwright.sync_api import sync_playwright, expect

HERE = pathlib.Path(__file__).resolve().parent
AXE = (HERE / "vendor" / "axe-core" / "axe.min.js").read_text()
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Flags that keep Chromium from reaching out on its own (updates, sync, field trials), so that
# every request the test sees is the page's.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--metrics-recording-only", "--disable-features=Translate,OptimizationHints,MediaRouter",
]

ROBOTS = """# Example shop
User-agent: *
Disallow: /private
Allow: /private/press
Crawl-delay: 2
Noindex: /x
Content-Usage: train-ai=n
Content-Signal: search=yes, ai-train=no

User-agent: Googlebot
Allow: /

Sitemap: http://127.0.0.1/sitemap.xml
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_paths(routes, default=None, status=200):
    """A loopback origin answering each path of `routes` (a dict that may be filled in after it
    starts, so that bodies can name its own address) with its body and `status`, others with
    `default`, or 404 without one."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = routes.get(self.path.split("?")[0], default)
            data = (body or "").encode()
            self.send_response(status if body is not None else 404)
            self.send_header("content-type", "text/plain; charset=utf-8")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


def serve(body, status=200):
    """A loopback origin answering every path with `status` and `body`."""
    return serve_paths({}, default=body, status=status)


LICENSE = """<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/articles/*" server="https://license.example/">
    <license>
      <permits type="usage">ai-input search</permits>
      <prohibits type="usage">ai-train</prohibits>
      <payment type="crawl"><amount currency="USD">0.01</amount></payment>
    </license>
  </content>
</rsl>
"""


def check_rsl_terms(browser, binary):
    """With --rsl, the usage column shows the license terms of each allowed URL, and the
    License: line is marked, with its terms in its note; a disallowed URL has none."""
    routes = {}
    site = serve_paths(routes)
    routes["/robots.txt"] = f"License: {site}/license.xml\nUser-agent: *\nDisallow: /private\n"
    routes["/license.xml"] = LICENSE
    process, other = start_robotsd(binary, "--rsl")
    try:
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        page.goto(f"{other}/")
        page.get_by_label("URLs or paths to test, one per line").fill("/articles/1\n/private/x\n/about")
        page.get_by_label("Site URL").fill(site + "/")
        page.get_by_role("button", name="Fetch and check").click()
        rows = page.locator("#verdicts tbody tr")
        expect(rows).to_have_count(3)
        expect(rows.nth(0)).to_contain_text(
            "RSL /articles/*: permits ai-input search, prohibits ai-train, payment crawl 0.01 USD, "
            "license server https://license.example/")
        expect(rows.nth(1)).to_contain_text("Disallowed")
        expect(rows.nth(1)).not_to_contain_text("RSL")
        expect(rows.nth(2)).to_contain_text("RSL not covered")
        expect(page.locator("#verdict")).to_contain_text("AI usage: RSL /articles/*")
        assert "usage" in line_class(page, 1), line_class(page, 1)
        for line in (2, 3):
            assert "usage" not in line_class(page, line), (line, line_class(page, line))
        expect(page.locator("#notes")).to_contain_text(f"RSL license {site}/license.xml: RSL /articles/*")
        page.close()
    finally:
        process.kill()


def start_robotsd(binary, *args):
    port = free_port()
    process = subprocess.Popen(
        [binary, "--listen", f"127.0.0.1:{port}", "--allow-private-networks",
         "--operator-contact", "mailto:ci@robotsd.invalid", *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(f"{base}/livez", timeout=1)
            return process, base
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise AssertionError("robotsd did not start")


class Watch:
    """Every request the page makes, console errors, page errors and dialogs."""

    def __init__(self, page, base):
        self.base = base
        self.requests = []
        self.errors = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("dialog", lambda d: (self.errors.append(f"dialog: {d.message}"), d.dismiss()))

    def foreign(self):
        return [u for u in self.requests if not (u.startswith(self.base + "/") or u.startswith("data:"))]


def line_class(page, line):
    return page.locator(f".backdrop div:nth-child({line})").get_attribute("class") or ""


def check_page_and_headers(page, base, watch):
    response = page.goto(f"{base}/")
    assert response.status == 200, response.status
    csp = response.headers.get("content-security-policy", "")
    for directive in ("default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"):
        assert directive in csp, csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp, csp
    assert response.headers.get("x-content-type-options") == "nosniff"
    expect(page).to_have_title("robotsd · robots.txt tester")
    expect(page.get_by_label("Site URL")).to_be_visible()
    # Weight: what the page transfers, compressed as a browser asks for it.
    total = 0
    for asset in ("/", "/ui/app.js", "/ui/app.css", "/ui/page.js"):
        request = urllib.request.Request(base + asset, headers={"accept-encoding": "gzip, br"})
        with urllib.request.urlopen(request) as r:
            total += len(r.read())
    assert total < 100 * 1024, f"{total} bytes"
    print(f"  page weight: {total} bytes transferred")


def check_live(page, site):
    # The agent and URL fields re-run the page as one types (after a pause); the site field
    # does not, so it is filled last and the click makes the one fetch. The re-run the typing
    # asked for is waited out first (without a site it only asks for one): on a slow machine
    # it could otherwise fire between the site's fill and the click, and fetch first.
    page.get_by_label("User agent").fill("Mozilla/5.0 (compatible; ShopBot/2.1; +https://shop.example/bot)")
    page.get_by_label("URLs or paths to test, one per line").fill("/private/report\n/private/press/1\n/")
    expect(page.locator("#site-error")).to_contain_text("Enter the URL of a site")
    page.get_by_label("Site URL").fill(site + "/")
    page.get_by_role("button", name="Fetch and check").click()
    verdict = page.locator("#verdict")
    expect(verdict).to_contain_text("Disallowed: /private/report")
    expect(verdict).to_contain_text("line 3")
    expect(page.locator("#ua-token")).to_contain_text("ShopBot")
    rows = page.locator("#verdicts tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(1)).to_contain_text("Allowed")
    # The deciding line is marked, the group's lines are marked, the fetched text is shown.
    assert "decide" in line_class(page, 3), line_class(page, 3)
    for line in (2, 4, 5, 6):
        assert "group" in line_class(page, line), (line, line_class(page, line))
    for line in (1, 9, 10, 11, 13):
        assert "group" not in line_class(page, line), (line, line_class(page, line))
    expect(page.locator("#robots")).to_have_value(ROBOTS)
    # Line notes: the unsupported key and the crawl-delay sit on their lines.
    notes = page.locator("#notes")
    expect(notes).to_contain_text("Line 5")
    expect(notes).to_contain_text("Line 6")
    assert "note" in (page.locator(".gutter div:nth-child(6)").get_attribute("class") or "")
    # The origin's state in words.
    origin = page.locator("#origin")
    expect(origin).to_contain_text("parsed")
    expect(origin).to_contain_text("miss")
    # Choosing another row marks its rule.
    rows.nth(1).click()
    expect(verdict).to_contain_text("Allowed: /private/press/1")
    assert "decide" in line_class(page, 4)
    # An allowed URL carries the AI usage preferences of its group, each vocabulary in its own
    # words, and the lines that set them are marked; a disallowed one has none.
    expect(verdict).to_contain_text("AI usage: Content-Usage train-ai=n; Content-Signal ai-train=no, search=yes")
    expect(rows.nth(1)).to_contain_text("Content-Signal ai-train=no, search=yes")
    expect(rows.nth(0)).not_to_contain_text("Content-Usage")
    for line in (7, 8):
        assert "usage" in line_class(page, line), (line, line_class(page, line))
    expect(notes).to_contain_text("Line 7")


def check_fetched_page(page, site):
    """After the fetch: a page's headers and HTML, read for the agent of the form; hostile text
    stays text; a disallowed page is said not to be read."""
    page.get_by_label("User agent").fill("ShopBot/2.1")
    page.get_by_label("Page URL").fill(site + "/articles/1")
    page.get_by_label("Response headers, one per line").fill(
        "Content-Type: text/html\nX-Robots-Tag: ShopBot: nofollow, googlebot: noindex\n"
        "Content-Usage: train-ai=n")
    page.get_by_label("HTML (optional)").fill(
        '<html><head><meta name="robots" content="max-snippet:50">\n'
        '<!-- <meta name="robots" content="noindex"> --></head>\n'
        '<body><meta name="shopbot" content="noimageindex, <img src=x onerror=alert(1)>"></body></html>')
    page.get_by_role("button", name="Read the page").click()
    verdict = page.locator("#page-verdict")
    expect(verdict).to_contain_text("May be indexed")
    expect(verdict).to_contain_text("links not to be followed (nofollow)")
    summary = page.locator("#page-summary")
    expect(summary).to_contain_text("50 characters")
    expect(summary).to_contain_text("train-ai n (robots.txt + header)")
    rows = page.locator("#page-rules tbody tr")
    expect(rows).to_have_count(4)
    expect(rows.nth(0)).to_contain_text("nofollow")
    expect(rows.nth(0)).to_contain_text("header 2")
    expect(rows.nth(1)).to_contain_text("HTML line 1")
    expect(rows.nth(2)).to_contain_text("noimageindex")
    expect(rows.nth(3)).to_contain_text("<img src=x onerror=alert(1)>")
    expect(rows.nth(3)).to_contain_text("ignored: unknown")
    assert page.locator("#page-rules img").count() == 0
    # A header line that is not one is said next to its field.
    page.get_by_label("Response headers, one per line").fill("X-Robots-Tag noindex")
    page.get_by_role("button", name="Read the page").click()
    expect(page.locator("#page-headers-error")).to_contain_text("Line 1")
    # A page robots.txt disallows is not read.
    page.get_by_label("Response headers, one per line").fill("X-Robots-Tag: noindex")
    page.get_by_label("Page URL").fill(site + "/private/report")
    page.get_by_role("button", name="Read the page").click()
    expect(verdict).to_contain_text("robots.txt disallows this URL")


def check_edit(page):
    page.get_by_label("Edit: paste or change a robots.txt").check()
    editor = page.locator("#robots")
    expect(editor).to_be_editable()
    # Edit starts from the fetched file; a changed rule flips the verdict as the user types.
    page.locator("#verdicts tbody tr").first.click()
    expect(page.locator("#verdict")).to_contain_text("Disallowed: /private/report")
    editor.fill(ROBOTS.replace("Disallow: /private\n", "Disallow: /privat3\n"))
    expect(page.locator("#verdict")).to_contain_text("Allowed: /private/report")
    expect(page.locator("#verdict")).to_have_class("verdict allow")


def check_shared_link(browser, page, base):
    link = page.url
    assert "source=edit" in link and "text=" in link, link
    other = browser.new_page()
    watch = Watch(other, base)
    other.goto(link)
    expect(other.get_by_label("Edit: paste or change a robots.txt")).to_be_checked()
    expect(other.locator("#robots")).to_have_value(page.locator("#robots").input_value())
    expect(other.get_by_label("User agent")).to_have_value(page.get_by_label("User agent").input_value())
    expect(other.locator("#verdict")).to_contain_text("Allowed: /private/report")
    assert not watch.errors, watch.errors
    other.close()


def check_hostile_text(page):
    hostile = (
        "User-agent: *\n"
        "Disallow: /<script>window.__pwned=1</script>\n"
        "Disallow: /<img src=x onerror=\"window.__pwned=2\">\n"
        "<svg onload=\"window.__pwned=3\"></svg>\n"
    )
    page.locator("#robots").fill(hostile)
    page.get_by_label("URLs or paths to test, one per line").fill("/<script>window.__pwned=4</script>\n/ok")
    expect(page.locator("#verdicts tbody tr")).to_have_count(2)
    expect(page.locator("#notes")).to_contain_text("Line 4")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None, "a script from the robots.txt ran"
    for selector in ("main script", "main img", "main svg"):
        assert page.locator(selector).count() == 0, selector
    # The text is shown as text.
    expect(page.locator(".backdrop")).to_contain_text("<script>window.__pwned=1</script>")


def check_problems_next_to_fields(page, base):
    page.goto(f"{base}/")
    page.get_by_label("Site URL").fill("ftp://files.example/")
    page.get_by_role("button", name="Fetch and check").click()
    error = page.locator("#site-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text("scheme")
    expect(page.get_by_label("Site URL")).to_have_attribute("aria-invalid", "true")
    page.get_by_label("Edit: paste or change a robots.txt").check()
    page.get_by_label("User agent").fill("")
    error = page.locator("#ua-error")
    expect(error).to_be_visible()
    expect(page.get_by_label("User agent")).to_have_attribute("aria-invalid", "true")


def check_backoff_in_words(page, base, down):
    page.goto(f"{base}/")
    page.get_by_label("Site URL").fill(down + "/")
    page.get_by_role("button", name="Fetch and check").click()
    expect(page.locator("#verdict")).to_contain_text("Disallowed")
    origin = page.locator("#origin")
    expect(origin).to_contain_text("unreachable since")
    expect(origin).to_contain_text("disallowing everything until")
    expect(origin).to_contain_text("Google's 12-hour rule")
    expect(origin).to_contain_text("HTTP status 503")


def check_backoff_by_the_operators_windows(browser, binary, down):
    """With --disallow-window 2h the page says 2 hours, not Google's 12: the window is robotsd's."""
    process, other = start_robotsd(binary, "--disallow-window", "2h")
    try:
        page = browser.new_page()
        page.goto(f"{other}/")
        page.get_by_label("Site URL").fill(down + "/")
        page.get_by_role("button", name="Fetch and check").click()
        origin = page.locator("#origin")
        expect(origin).to_contain_text("disallowing everything until")
        expect(origin).to_contain_text("after 2 hours of failures")
        expect(origin).not_to_contain_text("12-hour rule")
        page.close()
    finally:
        process.kill()


def check_accessibility(page, label):
    page.evaluate(AXE + "\n;0")
    result = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.length, help: v.help}))"
    )
    serious = [v for v in result if v["impact"] in ("serious", "critical")]
    print(f"  axe ({label}): {len(result)} violations, {len(serious)} serious or critical")
    assert not serious, json.dumps(serious, indent=1)


def check_keyboard(page, base, site):
    # A keyboard alone: Tab to the site field, type, Enter; the verdict is announced.
    page.goto(f"{base}/")
    for _ in range(10):
        if page.evaluate("document.activeElement && document.activeElement.id") == "site":
            break
        page.keyboard.press("Tab")
    else:
        raise AssertionError("Tab never reached the site field")
    page.keyboard.type(site + "/")
    page.keyboard.press("Enter")
    verdict = page.locator("#verdict")
    expect(verdict).to_have_attribute("role", "status")
    expect(verdict).to_contain_text("Allowed: /")


def check_clean(watch):
    assert not watch.foreign(), watch.foreign()
    # The browser logs each 4xx answer (the problems shown above); anything else is a failure.
    errors = [e for e in watch.errors if "status of 4" not in e]
    assert not errors, errors


def showcase(base):
    """A link to the state the screenshots show: a disallowed URL and its deciding line."""
    state = urllib.parse.urlencode({
        "source": "edit",
        "ua": "Mozilla/5.0 (compatible; ShopBot/2.1; +https://shop.example/bot)",
        "urls": "/private/report\n/private/press/2026\n/cart?item=1",
        "text": ROBOTS.replace("http://127.0.0.1/", "https://shop.example/"),
    })
    return f"{base}/#{state}"


def screenshots(browser, link, out):
    out.mkdir(parents=True, exist_ok=True)
    for width, height in ((1440, 1000), (360, 1400)):
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(link)
        expect(page.locator("#verdict")).to_contain_text("llowed")
        page.wait_for_timeout(200)
        # Nothing sticks out sideways at this width.
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{overflow}px of horizontal scroll at {width}px"
        path = out / f"tester-{width}.png"
        page.screenshot(path=str(path), full_page=width == 360)
        print(f"  screenshot {path}")
        page.close()


def main():
    binary, shots = sys.argv[1], pathlib.Path(sys.argv[2])
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"no Chromium at {CHROMIUM}: install Debian's chromium")
    site = serve(ROBOTS)
    down = serve("unavailable", status=503)
    process, base = start_robotsd(binary)
    failures = 0
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            watch = Watch(page, base)
            steps = [
                ("page, headers and weight", lambda: check_page_and_headers(page, base, watch)),
                ("live check", lambda: check_live(page, site)),
                ("accessibility, live", lambda: check_accessibility(page, "live")),
                ("a fetched page's own rules", lambda: check_fetched_page(page, site)),
                ("accessibility, page rules", lambda: check_accessibility(page, "page")),
                ("edit flips the verdict", lambda: check_edit(page)),
                ("accessibility, edit", lambda: check_accessibility(page, "edit")),
                ("shared link", lambda: check_shared_link(browser, page, base)),
                ("screenshots", lambda: screenshots(browser, showcase(base), shots)),
                ("hostile text stays text", lambda: check_hostile_text(page)),
                ("problems next to their fields", lambda: check_problems_next_to_fields(page, base)),
                ("backoff in words", lambda: check_backoff_in_words(page, base, down)),
                ("backoff by the operator's windows", lambda: check_backoff_by_the_operators_windows(browser, binary, down)),
                ("keyboard only", lambda: check_keyboard(page, base, site)),
                ("RSL license terms with --rsl", lambda: check_rsl_terms(browser, binary)),
                ("no request to another host, no script error", lambda: check_clean(watch)),
            ]
            for name, step in steps:
                try:
                    step()
                    print(f"ok   {name}")
                except Exception:
                    failures += 1
                    print(f"FAIL {name}")
                    traceback.print_exc()
            print(f"  the page made {len(watch.requests)} requests, all to {base}")
            browser.close()
    finally:
        process.kill()
    if failures:
        raise SystemExit(f"{failures} browser check(s) failed")


if __name__ == "__main__":
    main()
