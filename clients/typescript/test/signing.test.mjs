// Web Bot Auth (the `sign` option, and `sign` of the client's checks), against robotsd holding the
// committed test key and a loopback site that verifies every request it gets with an independent
// verifier (tests/wba/verifying_site.py: PyPI's http-message-signatures).
import assert from "node:assert/strict";
import { test } from "node:test";

import { CheerioCrawler } from "@crawlee/cheerio";
import { PlaywrightCrawler } from "@crawlee/playwright";
import { ProblemError, RobotsdClient, isProblem, isSigningProblem } from "@robotsd/client";
import { DisallowedError, UnsignedError, withRobotsd } from "@robotsd/client/crawlee";

import { cheerioCrawl, robotsdCrawl } from "./crawl.mjs";
import { startRobotsd, startSigningRobotsd, startVerifyingSite } from "./helpers.mjs";

const ROBOTS = "User-agent: *\nDisallow: /private\n";

/** A page linking to `links` (relative, as written). The empty icon keeps a browser from asking for /favicon.ico. */
function page(title, links = [], extra = "") {
  const anchors = links.map((href) => `<li><a href="${href}">${href}</a></li>`).join("");
  return `<!doctype html><title>${title}</title><link rel="icon" href="data:,"><h1>${title}</h1>${extra}<ul>${anchors}</ul>`;
}

/**
 * The index links to two pages (one with a query), a page robots.txt disallows, and a redirect
 * (/old, 301 to /new). /a shows an image: a subresource, which no crawler asked robotsd about.
 */
const PAGES = {
  "/": page("/", ["a", "b?x=1", "private/secret", "old"]),
  "/a": page("/a", [], '<img src="/pixel.png" alt="">'),
  "/b?x=1": page("/b?x=1"),
  "/old": { redirect: "/new" },
  "/new": page("/new"),
  "/private/secret": page("secret"),
  "/moved": { redirect: "/private/moved" },
  "/private/moved": page("moved"),
};

/** The requests for pages the crawl of {@link PAGES} from / must send: each once, each verified. */
const SENT = ["/", "/a", "/b?x=1", "/new", "/old"];

/** Waits until the site has logged what reached it (it logs each request before answering it). */
async function settled() {
  await new Promise((resolve) => setTimeout(resolve, 200));
}

/**
 * What every signed crawl of {@link PAGES} from / must show at the site: each page request
 * (`expected`) once and verified, by one key; the redirect's two hops both verified; nothing
 * robots.txt disallows ever requested.
 */
function assertSignedCrawl(site, expected = SENT) {
  const pages = site.pageLog().filter((entry) => entry.path !== "/pixel.png");
  assert.deepEqual(pages.map((entry) => entry.path).sort(), expected, "each page requested once");
  for (const entry of pages) assert.equal(entry.verified, true, `${entry.path}: ${entry.reason}`);
  assert.equal(new Set(pages.map((entry) => entry.kid)).size, 1, "one key");
  assert.ok(!site.log().some((entry) => entry.path.startsWith("/private")), "a disallowed page is never requested");
  // robotsd's own fetch of robots.txt is signed too: the site knows the fleet from its first request.
  const robots = site.log().filter((entry) => entry.path === "/robots.txt");
  assert.equal(robots.length, 1, "robots.txt is fetched once, by robotsd");
  assert.equal(robots[0].verified, true, robots[0].reason);
}

test("withRobotsd(CheerioCrawler) with sign: every request verified, redirect hops included, nothing disallowed sent", async (t) => {
  const robotsd = await startSigningRobotsd(t);
  const client = new RobotsdClient({ baseUrl: robotsd });
  const site = await startVerifyingSite(t, { keysFrom: robotsd, robots: ROBOTS, pages: PAGES });

  const crawl = await robotsdCrawl(t, { Crawler: CheerioCrawler, client, start: `${site.url}/`, robotsd: { ua: "ExampleBot", sign: true } });
  await settled();
  assert.deepEqual(crawl.failures, []);
  assert.deepEqual(crawl.fetched, ["/", "/a", "/b", "/new"], "the redirect followed to /new");
  assert.deepEqual(crawl.skipped, [["/private/secret", "robotsTxt"]]);
  assertSignedCrawl(site);
  // A cheerio crawler fetches no subresources.
  assert.ok(!site.log().some((entry) => entry.path === "/pixel.png"));

  // Without pacing, the verdicts the crawler was let through with are unsigned: each fetch asks
  // robotsd once more, for its signature.
  const unpacedSite = await startVerifyingSite(t, { keysFrom: robotsd, robots: ROBOTS, pages: PAGES });
  const unpaced = await robotsdCrawl(t, {
    Crawler: CheerioCrawler,
    client,
    start: `${unpacedSite.url}/`,
    robotsd: { ua: "ExampleBot", sign: true, pace: false },
  });
  await settled();
  assert.deepEqual(unpaced.failures, []);
  assert.deepEqual(unpaced.fetched, ["/", "/a", "/b", "/new"]);
  assertSignedCrawl(unpacedSite);
});

test("the hook with sign: every request verified, a disallowed one never sent", async (t) => {
  const robotsd = await startSigningRobotsd(t);
  const client = new RobotsdClient({ baseUrl: robotsd });
  for (const pace of [true, false]) {
    const site = await startVerifyingSite(t, { keysFrom: robotsd, robots: ROBOTS, pages: PAGES });
    const crawl = await cheerioCrawl(t, { client, start: `${site.url}/`, hook: { ua: "ExampleBot", sign: true, pace } });
    await settled();
    assert.deepEqual(crawl.failures, [], `pace: ${pace}`);
    assert.deepEqual(crawl.fetched, ["/", "/a", "/b", "/new"]);
    assert.deepEqual(crawl.refused, ["/private/secret"]);
    assertSignedCrawl(site);
  }
});

test("withRobotsd(PlaywrightCrawler) with sign: the navigation and its redirect hop verified; subresources go unsigned", async (t) => {
  const robotsd = await startSigningRobotsd(t);
  const client = new RobotsdClient({ baseUrl: robotsd });
  const site = await startVerifyingSite(t, { keysFrom: robotsd, robots: ROBOTS, pages: PAGES });

  const crawl = await robotsdCrawl(t, { Crawler: PlaywrightCrawler, client, start: `${site.url}/`, robotsd: { ua: "ExampleBot", sign: true } });
  await settled();
  assert.deepEqual(crawl.failures, []);
  assert.deepEqual(crawl.fetched, ["/", "/a", "/b", "/new"], "the browser followed the redirect to /new");
  assert.deepEqual(crawl.skipped, [["/private/secret", "robotsTxt"]]);
  assertSignedCrawl(site);
  // The page's image is no page robotsd checked: the browser asks for it as ever, unsigned.
  const pixel = site.log().filter((entry) => entry.path === "/pixel.png");
  assert.ok(pixel.length >= 1 && pixel.every((entry) => !entry.verified && entry.reason === "unsigned"), JSON.stringify(pixel));
});

test("a redirect into a disallowed path is not followed, in either crawler: the hop is never sent", async (t) => {
  const robotsd = await startSigningRobotsd(t);
  const client = new RobotsdClient({ baseUrl: robotsd });
  for (const Crawler of [CheerioCrawler, PlaywrightCrawler]) {
    const site = await startVerifyingSite(t, { keysFrom: robotsd, robots: ROBOTS, pages: PAGES });
    const crawl = await robotsdCrawl(t, { Crawler, client, start: `${site.url}/moved`, robotsd: { ua: "ExampleBot", sign: true } });
    await settled();
    assert.deepEqual(crawl.fetched, []);
    assert.equal(crawl.failedErrors.length, 1, Crawler.name);
    assert.equal(crawl.crawler.stats.state.requestsRetries, 0, "not retried: robots.txt will not change its mind");
    assert.deepEqual(
      site.pageLog().map((entry) => [entry.path, entry.verified]),
      [["/moved", true]],
      `${Crawler.name}: the first hop only, verified`,
    );
    if (Crawler === CheerioCrawler) {
      // got hands on the hook's error as its cause.
      assert.ok(crawl.failedErrors[0][1].cause instanceof DisallowedError, String(crawl.failedErrors[0][1]));
    } else {
      assert.match(crawl.failedErrors[0][1].message, /ERR_BLOCKED_BY_CLIENT/);
      assert.ok(crawl.lines.some((l) => /not sending .*\/private\/moved: robotsd: .*is disallowed by robots\.txt line 2/.test(l.message)));
    }
  }
});

test("sign refuses a method robotsd does not sign: the request is never sent", async (t) => {
  const robotsd = await startSigningRobotsd(t);
  const client = new RobotsdClient({ baseUrl: robotsd });
  const site = await startVerifyingSite(t, { keysFrom: robotsd, robots: ROBOTS, pages: PAGES });
  const crawl = await robotsdCrawl(t, {
    Crawler: CheerioCrawler,
    client,
    start: [{ url: `${site.url}/a`, method: "POST", payload: "x=1" }],
    robotsd: { ua: "ExampleBot", sign: true },
  });
  await settled();
  assert.deepEqual(crawl.fetched, []);
  assert.equal(crawl.failedErrors.length, 1);
  assert.ok(crawl.failedErrors[0][1] instanceof UnsignedError);
  assert.match(crawl.failedErrors[0][1].message, /signs GET and HEAD requests only, not POST/);
  assert.equal(crawl.crawler.stats.state.requestsRetries, 0);
  assert.deepEqual(site.pageLog(), [], "nothing sent");
  assert.throws(
    () => new (withRobotsd(CheerioCrawler, client, { sign: true }))({ respectRobotsTxtFile: false, requestHandler() {} }),
    /sign needs robots\.txt checks/,
  );
});

test("signing on against a robotsd without keys fails with signing-off, even with failOpen, and sends nothing", async (t) => {
  // The site knows the fleet's keys from a robotsd that holds them; the crawler asks one that holds none.
  const keyed = await startSigningRobotsd(t);
  const keyless = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  for (const Crawler of [CheerioCrawler, PlaywrightCrawler]) {
    for (const failOpen of [false, true]) {
      const site = await startVerifyingSite(t, { keysFrom: keyed, robots: ROBOTS, pages: PAGES });
      const crawl = await robotsdCrawl(t, {
        Crawler,
        client: keyless,
        start: `${site.url}/`,
        robotsd: { ua: "ExampleBot", sign: true, failOpen },
      });
      await settled();
      const what = `${Crawler.name}, failOpen: ${failOpen}`;
      assert.deepEqual(crawl.fetched, [], what);
      assert.equal(crawl.failedErrors.length, 1, what);
      const error = crawl.failedErrors[0][1];
      assert.ok(error instanceof ProblemError && isSigningProblem(error), `${what}: ${error}`);
      assert.equal(error.type, "urn:robotsd:problem:signing-off");
      assert.equal(crawl.crawler.stats.state.requestsRetries, 0, "a configuration error is not retried");
      assert.deepEqual(site.pageLog(), [], `${what}: the site saw no request for the page`);
      assert.ok(crawl.lines.some((l) => /could not reserve a slot for .*, not fetching it now: .*/.test(l.message)), what);
    }
  }
});

test("sign-other-agent: a crawler checking as another agent than the fleet's token fails, even with failOpen", async (t) => {
  const robotsd = await startSigningRobotsd(t, "--wba-product-token", "ExampleBot");
  const client = new RobotsdClient({ baseUrl: robotsd });
  const site = await startVerifyingSite(t, { keysFrom: robotsd, robots: ROBOTS, pages: PAGES });
  const crawl = await robotsdCrawl(t, {
    Crawler: CheerioCrawler,
    client,
    start: `${site.url}/`,
    robotsd: { ua: "OtherBot", sign: true, failOpen: true, pace: false },
  });
  await settled();
  assert.deepEqual(crawl.fetched, []);
  assert.equal(crawl.failedErrors[0]?.[1]?.type, "urn:robotsd:problem:sign-other-agent");
  assert.deepEqual(site.pageLog(), []);

  // The fleet's own token: signed and verified.
  const own = await robotsdCrawl(t, {
    Crawler: CheerioCrawler,
    client,
    start: `${site.url}/a`,
    robotsd: { ua: "ExampleBot/2.1", sign: true },
  });
  await settled();
  assert.deepEqual(own.failures, []);
  assert.deepEqual(site.pageLog().map((entry) => [entry.path, entry.verified]), [["/a", true]]);
});

test("the client's checks ask for signatures: check, reserve, checkMany and sign (a redirect's next hop)", async (t) => {
  const robotsd = await startSigningRobotsd(t);
  const client = new RobotsdClient({ baseUrl: robotsd });
  const site = await startVerifyingSite(t, { keysFrom: robotsd, robots: ROBOTS, pages: PAGES });
  /** Sends the signed request as robotsd made it: its method, its URL, its headers. */
  const send = (sign) => fetch(sign.url, { method: sign.method, headers: sign.headers, redirect: "manual" });

  const answer = await client.check(`${site.url}/b?x=1#part`, "ExampleBot", { sign: "GET" });
  assert.equal(answer.allowed, true);
  assert.equal(answer.sign.method, "GET");
  assert.equal(answer.sign.url, `${site.url}/b?x=1`, "the URL to send, without its fragment");
  assert.deepEqual(Object.keys(answer.sign.headers).sort(), ["Signature", "Signature-Agent", "Signature-Input"]);
  assert.equal((await send(answer.sign)).status, 200);

  const head = await client.check(`${site.url}/a`, "ExampleBot", { sign: "HEAD" });
  assert.equal((await send(head.sign)).status, 200);
  // Good for that one request only: another method or path is refused.
  assert.equal((await fetch(`${site.url}/a`, { headers: head.sign.headers })).status, 401);
  assert.equal((await fetch(`${site.url}/new`, { method: "HEAD", headers: head.sign.headers })).status, 401);

  const disallowed = await client.check(`${site.url}/private/secret`, "ExampleBot", { sign: "GET" });
  assert.equal(disallowed.allowed, false);
  assert.equal(disallowed.sign ?? null, null, "a disallowed URL gets no signature");

  const reserved = await client.reserve(`${site.url}/a`, "ExampleBot", { sign: "GET" });
  assert.equal(reserved.pace.outcome, "reserved");
  assert.equal((await send(reserved.sign)).status, 200);

  const batch = await client.checkMany([`${site.url}/`, `${site.url}/private/x`, "ftp://x/"], "ExampleBot", { sign: "GET" });
  assert.equal((await send(batch[0].sign)).status, 200);
  assert.equal(batch[1].sign ?? null, null);
  assert.ok(isProblem(batch[2]));

  // A redirect: the first hop's signature does not cover the next; POST /v1/sign makes its own.
  const first = await client.check(`${site.url}/old`, "ExampleBot", { sign: "GET" });
  const moved = await send(first.sign);
  assert.equal(moved.status, 301);
  const next = new URL(moved.headers.get("location"), first.sign.url).href;
  assert.equal((await fetch(next, { headers: first.sign.headers })).status, 401, "not with the first hop's signature");
  const hop = await client.sign({ url: next, ua: "ExampleBot", pace: true });
  assert.equal(hop.pace.outcome, "reserved");
  assert.equal((await send(hop.sign)).status, 200);
  const refused = await client.sign({ url: `${site.url}/private/moved`, ua: "ExampleBot", method: "HEAD" });
  assert.equal(refused.allowed, false);
  assert.equal(refused.sign ?? null, null);

  await settled();
  const verified = site.pageLog().filter((entry) => entry.verified).map((entry) => `${entry.method} ${entry.path}`);
  assert.deepEqual(verified, ["GET /b?x=1", "HEAD /a", "GET /a", "GET /", "GET /old", "GET /new"]);

  const keyless = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  await assert.rejects(keyless.check(`${site.url}/a`, "ExampleBot", { sign: "GET" }), (error) => {
    assert.ok(error instanceof ProblemError && isSigningProblem(error));
    assert.equal(error.type, "urn:robotsd:problem:signing-off");
    assert.equal(error.status, 400);
    return true;
  });
  await assert.rejects(keyless.sign({ url: `${site.url}/a`, ua: "ExampleBot" }), /signing/i);
});
