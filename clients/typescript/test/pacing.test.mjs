// Politeness of the Crawlee integration, measured where it matters: at the site. Pacing is on by
// default (robotsd reserves each fetch's slot, right before the fetch); with pace: false the
// crawler keeps the crawl-delay itself; a site's pushback is reported to robotsd.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";

import { CheerioCrawler } from "@crawlee/cheerio";
import { RobotsdClient, slotLatenessMs } from "@robotsd/client";
import { pacingStats } from "@robotsd/client/crawlee";

import { cheerioCrawl, robotsdCrawl, warmUp } from "./crawl.mjs";

import { ARRIVAL_JITTER_MS, assertGapsAtLeast, reports, requestsTo, reservations, startPacedSite, startRobotsd } from "./helpers.mjs";

const CRAWL_DELAY_MS = 200;
/**
 * The shortest gap a paced crawl may show at the site: robotsd's slots keep the interval, and a
 * fetch starts at most slotLatenessMs after its slot (else it asks for another).
 */
const PACED_FLOOR_MS = CRAWL_DELAY_MS - slotLatenessMs(CRAWL_DELAY_MS) - ARRIVAL_JITTER_MS;
const ROBOTS = "User-agent: *\nDisallow: /private/\nCrawl-delay: 0.2\n";

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** A client whose `POST /v1/feedback` bodies are kept in `sent`, in order. */
function reportingClient(baseUrl) {
  const sent = [];
  const client = new RobotsdClient({
    baseUrl,
    fetch: (input, init) => {
      if (String(input).endsWith("/v1/feedback")) sent.push(...JSON.parse(init.body).reports);
      return fetch(input, init);
    },
  });
  return { client, sent };
}

/** What every crawl of the paced site must hold: each page fetched and handled, nothing failed. */
function assertCrawledEverything(crawl, site) {
  assert.deepEqual(crawl.failures, []);
  assert.deepEqual(crawl.fetched, [...site.paths].sort());
  assert.equal(crawl.stats.requestsFailed, 0);
}

test("withRobotsd paces by default: fetches to one origin start at least the crawl-delay apart, across its concurrency", async (t) => {
  const site = await startPacedSite(t, { robots: ROBOTS, pages: 12 });
  await warmUp(t, site);
  const baseUrl = await startRobotsd(t);
  const client = new RobotsdClient({ baseUrl });
  // Three start URLs: asked about in one batch when they are added, which reserves nothing.
  const start = ["/", "/p/0", "/p/1"].map((p) => site.url + p);
  const started = performance.now();
  const crawl = await robotsdCrawl(t, {
    Crawler: CheerioCrawler,
    client,
    start,
    robotsd: { ua: "ExampleBot" },
    crawlerOptions: { maxConcurrency: 4 },
  });
  const took = performance.now() - started;

  assertCrawledEverything(crawl, site);
  const arrivals = await site.arrivals();
  assert.equal(arrivals.length, site.paths.length, "each page fetched once");
  assertGapsAtLeast(arrivals, PACED_FLOOR_MS);
  assert.ok(took >= (site.paths.length - 1) * CRAWL_DELAY_MS);

  // One slot per fetch, each reserved right before it: GET /v1/check?pace=true. The batch of the
  // start URLs (POST /v1/check) reserved none.
  // (And one more for each slot a fetch would have been too late for.)
  assert.equal(await requestsTo(baseUrl, "POST", "/v1/check"), 1);
  assert.equal(await reservations(baseUrl, "reserved"), site.paths.length + pacingStats(client).lateSlots);
  assert.equal(await reservations(baseUrl, "deferred"), 0);
  assert.equal(crawl.paces.length, site.paths.length);
  for (const [path, pace] of crawl.paces) {
    assert.equal(pace?.outcome, "reserved", `${path}: request.userData.robotsd.pace`);
    assert.equal(pace.interval_ms, CRAWL_DELAY_MS);
    assert.equal(pace.interval_source, "crawl_delay");
    assert.equal(pace.crawl_delay_line, 3);
  }
});

test("the pre-navigation hook paces by default too", async (t) => {
  const site = await startPacedSite(t, { robots: ROBOTS, pages: 10 });
  await warmUp(t, site);
  const baseUrl = await startRobotsd(t);
  const client = new RobotsdClient({ baseUrl });
  // cheerioCrawl runs 4 requests at once.
  const crawl = await cheerioCrawl(t, { client, start: `${site.url}/`, hook: { ua: "ExampleBot" } });

  assert.deepEqual(crawl.failures, []);
  assert.deepEqual(crawl.fetched, [...site.paths].sort());
  assertGapsAtLeast(await site.arrivals(), PACED_FLOOR_MS);
  // The hook's check is the reservation: one call per fetch, verdict and slot together.
  const late = pacingStats(client).lateSlots;
  assert.equal(await requestsTo(baseUrl, "GET", "/v1/check"), site.paths.length + late);
  assert.equal(await reservations(baseUrl, "reserved"), site.paths.length + late);
});

test("with pace: false, the crawler keeps the crawl-delay itself, across its concurrency", async (t) => {
  const site = await startPacedSite(t, { robots: ROBOTS, pages: 12 });
  await warmUp(t, site);
  const baseUrl = await startRobotsd(t);
  const { client, sent } = reportingClient(baseUrl);
  const crawl = await robotsdCrawl(t, {
    Crawler: CheerioCrawler,
    client,
    start: `${site.url}/`,
    robotsd: { ua: "ExampleBot", pace: false },
    crawlerOptions: { maxConcurrency: 4 },
  });

  assertCrawledEverything(crawl, site);
  const arrivals = await site.arrivals();
  assert.equal(arrivals.length, site.paths.length);
  // The crawler starts fetches the crawl-delay and LOCAL_PACE_GUARD_MS (50 ms) apart, so the site
  // sees the crawl-delay unless the machine stalls one fetch more than that between its start and
  // the site; 100 ms of stall are allowed here (a busy two-core machine once stalled a Scrapy
  // fetch 79 ms). The failures this catches are far larger: no local pacing is no gap at all.
  assertGapsAtLeast(arrivals, CRAWL_DELAY_MS + 50 - 100);
  // robotsd answered verdicts only: no slot, no report.
  assert.equal(await reservations(baseUrl, "reserved"), 0);
  assert.equal(await reservations(baseUrl, "deferred"), 0);
  assert.deepEqual(sent, []);
  assert.ok(crawl.paces.every(([, pace]) => pace === null));
  assert.ok(crawl.answers.every(([, answer]) => answer.crawl_delay === 0.2));
});

test("a 429 with Retry-After is reported to robotsd, and the next fetch to the origin waits it out", async (t) => {
  const site = await startPacedSite(t, {
    robots: ROBOTS,
    pages: 5,
    script: { "/p/2": [{ status: 429, headers: { "retry-after": "1" } }] },
  });
  await warmUp(t, site);
  const baseUrl = await startRobotsd(t);
  const { client, sent } = reportingClient(baseUrl);
  const crawl = await robotsdCrawl(t, {
    Crawler: CheerioCrawler,
    client,
    start: `${site.url}/`,
    robotsd: { ua: "ExampleBot" },
    crawlerOptions: { maxConcurrency: 4 },
  });

  // Crawlee retries the refused page (a 429 retires the session); it is fetched the second time.
  assertCrawledEverything(crawl, site);
  // Reported at once; the successes after it may be reported too (in batches, a second apart),
  // since robotsd says the origin is slowed down.
  assert.deepEqual(
    sent.filter((report) => report.status !== 200),
    [{ url: `${site.url}/p/2`, status: 429, retry_after: "1" }],
  );
  assert.equal(await reports(baseUrl, "retry_after"), 1);
  const arrivals = await site.arrivals();
  assert.equal(arrivals.length, site.paths.length + 1);
  const refused = arrivals.findIndex((a) => a.status === 429);
  assert.equal(arrivals[refused].path, "/p/2");
  const next = arrivals[refused + 1];
  const waited = next.at - arrivals[refused].at;
  assert.ok(waited >= 1000, `${next.path} reached the site ${waited.toFixed(1)} ms after the 429, within its Retry-After: 1`);
  assertGapsAtLeast(arrivals, PACED_FLOOR_MS);
  // The slots after it: the origin slowed down (×2) for the whole fleet.
  const after = crawl.paces.filter(([path]) => path !== "/").map(([, pace]) => pace.interval_source);
  assert.ok(after.includes("pushback"), after.join());
});

test("a 5xx and a timeout are reported to robotsd as pushback", async (t) => {
  const site = await startPacedSite(t, {
    robots: ROBOTS,
    pages: 3,
    script: { "/p/0": [{ status: 500 }], "/p/1": ["hang"] },
  });
  await warmUp(t, site);
  const baseUrl = await startRobotsd(t);
  const { client, sent } = reportingClient(baseUrl);
  const crawl = await robotsdCrawl(t, {
    Crawler: CheerioCrawler,
    client,
    start: `${site.url}/`,
    robotsd: { ua: "ExampleBot" },
    crawlerOptions: { maxConcurrency: 4, navigationTimeoutSecs: 1 },
  });

  // Both are retried by Crawlee, and fetched the second time.
  assertCrawledEverything(crawl, site);
  const pushbacks = sent.filter((report) => report.status === 500 || report.timeout);
  assert.deepEqual(
    pushbacks.sort((a, b) => a.url.localeCompare(b.url)),
    [
      { url: `${site.url}/p/0`, status: 500 },
      { url: `${site.url}/p/1`, timeout: true },
    ],
  );
  assert.equal(await reports(baseUrl, "pushback"), 1);
  assert.equal(await reports(baseUrl, "timeout"), 1);
  // While robotsd says the origin is slowed down, successes are reported too (in batches), to
  // ease it: never a pushback twice.
  assert.ok(sent.every((report) => report.timeout || report.status === 500 || report.status === 200));
  assertGapsAtLeast(await site.arrivals(), PACED_FLOOR_MS);
});

test("every answer is reported with the time the site took, and a site slowing down slows the fleet", async (t) => {
  // The site answers at once, then, from its ninth page on, 800 ms late: far past its baseline.
  const site = await startPacedSite(t, { robots: ROBOTS, pages: 12, lag: { after: 8, ms: 800 } });
  await warmUp(t, site);
  const baseUrl = await startRobotsd(t);
  const { client, sent } = reportingClient(baseUrl);
  const crawl = await robotsdCrawl(t, {
    Crawler: CheerioCrawler,
    client,
    start: `${site.url}/`,
    robotsd: { ua: "ExampleBot" },
    crawlerOptions: { maxConcurrency: 4 },
  });

  assertCrawledEverything(crawl, site);
  // Reports of successes wait a second to be batched: the last batch is sent after the crawl.
  for (let waited = 0; sent.length < site.paths.length && waited < 3000; waited += 50) await sleep(50);
  // Every answer, each with the time the site took; the late ones took at least the lag.
  assert.equal(sent.length, site.paths.length, JSON.stringify(sent));
  assert.ok(sent.every((report) => report.status === 200 && Number.isInteger(report.response_ms) && report.response_ms >= 1), JSON.stringify(sent));
  assert.equal(sent.filter((report) => report.response_ms >= 800).length, site.paths.length - 8, JSON.stringify(sent));
  // robotsd took a late answer as the site slowing down, and slowed it (x1.5) for the fleet,
  // from the times alone: no status said so.
  // A report is counted when robotsd has taken it in, which may be just after it answered.
  let slow = await reports(baseUrl, "slow");
  for (let waited = 0; slow < 1 && waited < 5000; waited += 100) {
    await sleep(100);
    slow = await reports(baseUrl, "slow");
  }
  assert.ok(slow >= 1, JSON.stringify(sent));
  assert.equal(await reports(baseUrl, "pushback"), 0);
  const robots = await client.robots(`${site.url}/`);
  assert.ok(robots.pace && robots.pace.slowdown >= 1.45, JSON.stringify(robots.pace));
});

test("slots robotsd puts off (--max-pace-wait) are asked for again, and everything is crawled", async (t) => {
  const site = await startPacedSite(t, { robots: ROBOTS, pages: 12 });
  await warmUp(t, site);
  // 4 requests at once, slots 250 ms apart (200 ms and the guard band): every slot but the
  // next is beyond 100 ms ahead. (With 300 ms, a machine too busy to send the requests at once
  // put none off, and the test tested nothing.)
  const baseUrl = await startRobotsd(t, "--max-pace-wait", "100ms");
  const client = new RobotsdClient({ baseUrl });
  const crawl = await robotsdCrawl(t, {
    Crawler: CheerioCrawler,
    client,
    start: `${site.url}/`,
    robotsd: { ua: "ExampleBot" },
    crawlerOptions: { maxConcurrency: 4 },
  });

  assertCrawledEverything(crawl, site);
  const arrivals = await site.arrivals();
  assert.equal(arrivals.length, site.paths.length);
  assertGapsAtLeast(arrivals, PACED_FLOOR_MS);
  assert.ok((await reservations(baseUrl, "deferred")) > 0, "some slots were put off");
  const late = pacingStats(client).lateSlots;
  assert.equal(await reservations(baseUrl, "reserved"), site.paths.length + late, "one slot taken per fetch");
  assert.ok(crawl.paces.every(([, pace]) => pace?.outcome === "reserved"));
});

test("a fetch that missed its slot waits for another outside its time limit, and is not reported as the site's timeout", async (t) => {
  // Crawl-delay 2 s, navigationTimeoutSecs 1: /p/0's first attempt is held 100 ms in got (a hook
  // of the crawler's own, as a busy event loop or got's first use of a new session would), so it
  // gives its slot up (25 ms late at most) and waits for the next one, 2 s on, inside got's
  // beforeRequest hook, within the navigation's time limit. That limit is lengthened by the wait:
  // the fetch still gets its whole second, and the site answers in it. (Before, the limit ended
  // the wait, and robotsd was told the site timed out, though it never saw the request.)
  const site = await startPacedSite(t, { robots: "User-agent: *\nCrawl-delay: 2\n", pages: 1 });
  await warmUp(t, site);
  const baseUrl = await startRobotsd(t);
  const { client, sent } = reportingClient(baseUrl);
  const crawl = await robotsdCrawl(t, {
    Crawler: CheerioCrawler,
    client,
    start: `${site.url}/`,
    robotsd: { ua: "ExampleBot" },
    crawlerOptions: {
      maxConcurrency: 1,
      navigationTimeoutSecs: 1,
      preNavigationHooks: [
        ({ request }, gotOptions) => {
          if (!request.url.endsWith("/p/0") || request.retryCount > 0) return;
          gotOptions.hooks = { beforeRequest: [() => new Promise((resolve) => setTimeout(resolve, 100))] };
        },
      ],
    },
  });

  assertCrawledEverything(crawl, site);
  assert.ok(pacingStats(client).lateSlots >= 1, "the slot was given up");
  assert.deepEqual(sent.filter((report) => report.status !== 200), [], "no pushback reported");
  assert.equal(await reports(baseUrl, "timeout"), 0);
  assert.deepEqual(crawl.stats.retryHistogram, [site.paths.length], "no attempt failed");
  // The site saw each page once.
  const arrivals = await site.arrivals();
  assert.deepEqual(arrivals.map((a) => a.path).sort(), [...site.paths].sort());
});

/** A site that serves `robots` and ends the connection of any other request with `end`. */
async function startFailingSite(t, robots, end) {
  const server = createServer((req, res) => {
    if (req.url === "/robots.txt") res.writeHead(200, { "content-type": "text/plain" }).end(robots);
    else end(req.socket);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.closeAllConnections());
  t.after(() => new Promise((done) => server.close(done)));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

/** What robotsd answered the crawl's reports: each taken (an origin's pace) or refused. */
function assertAllTaken(crawl) {
  const refused = crawl.lines.filter((l) => l.message.includes("did not take the report") || l.message.includes("reporting what"));
  assert.deepEqual(refused.map((l) => l.message), []);
}

test("a connection refused is reported as refused, once per failed attempt, not as a timeout", async (t) => {
  const site = await startFailingSite(t, ROBOTS, (socket) => socket.destroy());
  const baseUrl = await startRobotsd(t);
  const { client, sent } = reportingClient(baseUrl);
  // robotsd holds the origin's robots.txt; then nothing listens there any more.
  assert.equal((await client.check(`${site.url}/p/0`, "ExampleBot")).allowed, true);
  site.server.closeAllConnections();
  await new Promise((done) => site.server.close(done));
  const crawl = await robotsdCrawl(t, {
    Crawler: CheerioCrawler,
    client,
    start: `${site.url}/p/0`,
    robotsd: { ua: "ExampleBot" },
    // Crawlee retries a refused connection as a session error: once here.
    crawlerOptions: { maxConcurrency: 1, maxSessionRotations: 1 },
  });

  assert.equal(crawl.failures.length, 1, crawl.failures.join());
  // Two attempts (errorHandler before the retry, failedRequestHandler after the last): two reports.
  assert.deepEqual(sent, [
    { url: `${site.url}/p/0`, connection: "refused" },
    { url: `${site.url}/p/0`, connection: "refused" },
  ]);
  assertAllTaken(crawl);
  assert.equal(await reports(baseUrl, "timeout"), 0);
});

test("a connection reset before any answer is reported as reset, not as a timeout", async (t) => {
  let requests = 0;
  const site = await startFailingSite(t, ROBOTS, (socket) => {
    requests++;
    socket.resetAndDestroy();
  });
  const baseUrl = await startRobotsd(t);
  const { client, sent } = reportingClient(baseUrl);
  const crawl = await robotsdCrawl(t, {
    Crawler: CheerioCrawler,
    client,
    start: `${site.url}/p/0`,
    robotsd: { ua: "ExampleBot" },
    crawlerOptions: { maxConcurrency: 1, maxSessionRotations: 1 },
  });

  assert.equal(crawl.failures.length, 1, crawl.failures.join());
  // One report per request the site reset: two attempts.
  assert.equal(requests, 2);
  assert.deepEqual(sent, [
    { url: `${site.url}/p/0`, connection: "reset" },
    { url: `${site.url}/p/0`, connection: "reset" },
  ]);
  assertAllTaken(crawl);
  assert.equal(await reports(baseUrl, "timeout"), 0);
});
