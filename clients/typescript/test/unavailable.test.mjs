// When robotsd cannot answer (README, "When robotsd cannot answer"): down, its own 503s (retried
// within one budget per call) and a proxy's (never retried), its other problems, through the
// client, withRobotsd and the hook; and a site without robots.txt, which is not robotsd failing
// at all. robotsd is never overloaded in a test: its 503s come from a loopback stand-in that
// counts the requests it gets.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";

import { CheerioCrawler } from "@crawlee/cheerio";
import {
  DEFAULT_MAX_RETRIES,
  MAX_RETRY_WAIT_MS,
  ProblemError,
  RobotsdClient,
  UnavailableError,
  robotsdRetryAfterMs,
} from "@robotsd/client";

import { cheerioCrawl, robotsdCrawl } from "./crawl.mjs";
import { freePort, startRobotsd, startSite } from "./helpers.mjs";

/** robotsd's own 503, as it answers over its concurrency limit. */
const OVERLOADED = {
  status: 503,
  headers: { "content-type": "application/problem+json", "retry-after": "0" },
  body: '{"type":"urn:robotsd:problem:overloaded","title":"Overloaded","status":503,"detail":"too many requests in flight"}',
};

/** robotsd's own 503 with a Retry-After of a second. */
const CACHE_FULL_1S = {
  status: 503,
  headers: { "content-type": "application/problem+json; charset=utf-8", "retry-after": "1" },
  body: '{"type":"urn:robotsd:problem:cache-full","title":"Cache full","status":503,"detail":"evicted for memory"}',
};

/** robotsd's own 503 asking for 30 s: a wait no call limit here leaves room for, so that giving up at once is told from waiting by a wide margin. */
const CACHE_FULL_30S = { ...CACHE_FULL_1S, headers: { ...CACHE_FULL_1S.headers, "retry-after": "30" } };

/** A proxy's 503 in front of robotsd: an HTML page. */
const PROXY_503 = {
  status: 503,
  headers: { "content-type": "text/html", "retry-after": "0" },
  body: "<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>",
};

/** A 503 in problem+json that is not robotsd's (a gateway that speaks RFC 9457 too). */
const OTHER_PROBLEM_503 = {
  status: 503,
  headers: { "content-type": "application/problem+json", "retry-after": "0" },
  body: '{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"upstream down"}',
};

/**
 * A loopback stand-in for robotsd: `answer(url, n)` is what it answers the n-th request (from 0)
 * for `url` (path and query), a canned answer or an array of them given in turn (the last one
 * again once they run out). It records each request's path, query and arrival.
 */
async function startStandIn(t, answer) {
  const requests = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const url = new URL(req.url, "http://stand-in");
      requests.push({ path: url.pathname, query: url.searchParams, at: performance.now() });
      const given = typeof answer === "function" ? answer(url, requests.length - 1) : answer;
      const list = Array.isArray(given) ? given : [given];
      const { status, headers, body } = list[Math.min(requests.length - 1, list.length - 1)];
      res.writeHead(status, headers).end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  t.after(() => server.closeAllConnections());
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    count: (prefix = "/") => requests.filter((r) => r.path.startsWith(prefix)).length,
  };
}

test("robotsd's own 503 is sent again twice, then thrown", async (t) => {
  const robotsd = await startStandIn(t, OVERLOADED);
  const client = new RobotsdClient({ baseUrl: robotsd.url });
  await assert.rejects(client.check("http://site.test/", "ExampleBot"), (error) => {
    assert.ok(error instanceof ProblemError);
    assert.equal(error.status, 503);
    assert.equal(error.type, "urn:robotsd:problem:overloaded");
    return true;
  });
  // One call, one budget: the first request and DEFAULT_MAX_RETRIES more.
  assert.equal(DEFAULT_MAX_RETRIES, 2);
  assert.equal(robotsd.count(), 3);
});

test("a 503 that is not robotsd's own, and any other problem, is not retried", async (t) => {
  const badUrl = {
    status: 400,
    headers: { "content-type": "application/problem+json" },
    body: '{"type":"urn:robotsd:problem:invalid-url","title":"Invalid URL","status":400,"detail":"x"}',
  };
  for (const [answer, type] of [
    [PROXY_503, "about:blank"],
    [OTHER_PROBLEM_503, "about:blank"],
    [badUrl, "urn:robotsd:problem:invalid-url"],
  ]) {
    const robotsd = await startStandIn(t, answer);
    const client = new RobotsdClient({ baseUrl: robotsd.url });
    await assert.rejects(client.check("http://site.test/", "ExampleBot"), { status: answer.status, type });
    assert.equal(robotsd.count(), 1, answer.body);
  }
});

test("a retry waits robotsd's Retry-After and a jitter, and can succeed", async (t) => {
  const site = await startSite(t);
  const real = await startRobotsd(t);
  // The answer robotsd gives, served by the stand-in after a cache-full of a second.
  const answer = await fetch(`${real}/v1/check?ua=ExampleBot&url=${encodeURIComponent(`${site.url}/p/1`)}`);
  const ok = { status: 200, headers: { "content-type": "application/json" }, body: await answer.text() };
  const robotsd = await startStandIn(t, [CACHE_FULL_1S, ok]);
  const checked = await new RobotsdClient({ baseUrl: robotsd.url }).check(`${site.url}/p/1`, "ExampleBot");
  assert.equal(checked.allowed, true);
  assert.equal(robotsd.count(), 2);
  const gap = robotsd.requests[1].at - robotsd.requests[0].at;
  // Retry-After: 1 (the jitter's bound is held exactly by askAgainDelayMs's test); a busy
  // machine may add to it.
  assert.ok(gap >= 990 && gap < 3_000, `the retry came ${gap} ms after the 503`);
});

test("a Retry-After past the call's time limit gives up at once; an abort ends the wait", async (t) => {
  // A wait of 30 s past a limit of 5: given up at once, where waiting would take 30 s.
  const robotsd = await startStandIn(t, CACHE_FULL_30S);
  const started = performance.now();
  const short = new RobotsdClient({ baseUrl: robotsd.url, timeoutMs: 5_000 });
  await assert.rejects(short.check("http://site.test/", "ExampleBot"), { type: "urn:robotsd:problem:cache-full" });
  assert.equal(robotsd.count(), 1);
  assert.ok(performance.now() - started < 4_000);

  // A wait of a second, within the limit, ended by an abort.
  const waiting = await startStandIn(t, CACHE_FULL_1S);
  const client = new RobotsdClient({ baseUrl: waiting.url });
  const controller = new AbortController();
  const call = client.check("http://site.test/", "ExampleBot", { signal: controller.signal });
  setTimeout(() => controller.abort(new Error("stop")), 200);
  await assert.rejects(call, { message: "stop" });
  assert.equal(waiting.count(), 1);
});

test("maxRetries: 0 never retries; a negative one is refused", async (t) => {
  const robotsd = await startStandIn(t, OVERLOADED);
  await assert.rejects(new RobotsdClient({ baseUrl: robotsd.url, maxRetries: 0 }).check("http://site.test/", "ExampleBot"), ProblemError);
  assert.equal(robotsd.count(), 1);
  assert.throws(() => new RobotsdClient({ baseUrl: robotsd.url, maxRetries: -1 }), RangeError);
});

test("every call has a budget of its own", async (t) => {
  // A batch, a report and a page are retried as a check is; each call once, however many came
  // before it.
  const robotsd = await startStandIn(t, OVERLOADED);
  const client = new RobotsdClient({ baseUrl: robotsd.url });
  for (let i = 0; i < 2; i++) await assert.rejects(client.checkMany(["http://site.test/a", "http://site.test/b"], "ExampleBot"), ProblemError);
  await assert.rejects(client.feedback([{ url: "http://site.test/a", status: 429 }]), ProblemError);
  await assert.rejects(client.page({ url: "http://site.test/a", ua: "ExampleBot", headers: [] }), ProblemError);
  assert.deepEqual([robotsd.count("/v1/check"), robotsd.count("/v1/feedback"), robotsd.count("/v1/page")], [6, 3, 3]);
});

test("Retry-After is read as robotsd writes it, and bounded", () => {
  const now = 4_000;
  assert.equal(robotsdRetryAfterMs("3", now), 3_000);
  for (const unreadable of [undefined, null, "", "soon", "-1", "1.5"]) assert.equal(robotsdRetryAfterMs(unreadable, now), 1_000, String(unreadable));
  assert.equal(robotsdRetryAfterMs("86400", now), MAX_RETRY_WAIT_MS);
  assert.equal(robotsdRetryAfterMs("Thu, 01 Jan 1970 00:00:10 GMT", now), 6_000);
  assert.equal(robotsdRetryAfterMs("Thu, 01 Jan 1970 00:00:01 GMT", now), 0);
});

test("robotsd down fails at once, without a retry", async () => {
  const down = new RobotsdClient({ baseUrl: `http://127.0.0.1:${await freePort()}` });
  const started = performance.now();
  await assert.rejects(down.check("http://site.test/", "ExampleBot"), UnavailableError);
  assert.ok(performance.now() - started < 1_000);
});

test("withRobotsd asks an overloaded robotsd once a budget, and skips the request", async (t) => {
  // Crawlee's lookup before the request runs is one call: three requests to robotsd's own 503,
  // one to a proxy's; the request is then skipped (fail closed), never retried.
  const site = await startSite(t);
  for (const [answer, requests] of [
    [OVERLOADED, 3],
    [PROXY_503, 1],
  ]) {
    const robotsd = await startStandIn(t, answer);
    const client = new RobotsdClient({ baseUrl: robotsd.url });
    const crawl = await robotsdCrawl(t, { Crawler: CheerioCrawler, client, start: `${site.url}/`, robotsd: { ua: "ExampleBot" } });
    assert.deepEqual(crawl.skipped, [["/", "robotsTxt"]]);
    assert.equal(crawl.stats.requestsFailed, 0);
    assert.ok(crawl.errors.every(([, error]) => error instanceof ProblemError && error.status === 503));
    assert.equal(robotsd.count(), requests, answer.body);
  }
  assert.deepEqual(site.pages(), []);
});

test("a slot robotsd cannot reserve for its 503 fails the request once, without Crawlee's retries", async (t) => {
  // The verdict comes through; the reservation (pace=true) answers 503. Crawlee would retry the
  // request three more times, each with the client's budget: 12 requests instead of 3.
  const site = await startSite(t);
  const real = await startRobotsd(t);
  for (const [answer, requests] of [
    [OVERLOADED, 3],
    [PROXY_503, 1],
  ]) {
    const verdict = await fetch(`${real}/v1/check?ua=ExampleBot&url=${encodeURIComponent(`${site.url}/`)}`);
    const ok = { status: 200, headers: { "content-type": "application/json" }, body: await verdict.text() };
    const standIn = await startStandIn(t, (url) => (url.searchParams.get("pace") === "true" ? answer : ok));
    const client = new RobotsdClient({ baseUrl: standIn.url });
    const crawl = await robotsdCrawl(t, { Crawler: CheerioCrawler, client, start: `${site.url}/`, robotsd: { ua: "ExampleBot" } });
    assert.equal(crawl.stats.requestsFailed, 1);
    assert.equal(crawl.failedErrors.length, 1);
    assert.ok(crawl.failedErrors[0][1] instanceof ProblemError);
    assert.equal(
      standIn.requests.filter((r) => r.query.get("pace") === "true").length,
      requests,
      `${answer.body}: one budget, Crawlee's retries not stacked on it`,
    );
    // And through the hook.
    const hooked = await startStandIn(t, answer);
    const failing = await cheerioCrawl(t, { client: new RobotsdClient({ baseUrl: hooked.url }), start: `${site.url}/`, hook: { ua: "ExampleBot" } });
    assert.equal(failing.failures.length, 1);
    assert.equal(hooked.count(), requests, `the hook, ${answer.body}`);
  }
  assert.deepEqual(site.pages(), []);
});

test("a site without robots.txt is allowed everything, with no crawl-delay", async (t) => {
  // Not robotsd failing: a 404 for robots.txt allows everything (RFC 9309 §2.3.1.3); the
  // crawl-delay is null, and a paced check keeps robotsd's default interval.
  let robotsHits = 0;
  const server = createServer((req, res) => {
    if (req.url === "/robots.txt") {
      robotsHits++;
      res.writeHead(404, { "content-type": "text/html" }).end("<h1>Not found</h1>");
      return;
    }
    res.writeHead(200, { "content-type": "text/html" }).end(`<h1>${req.url}</h1>`);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  t.after(() => server.closeAllConnections());
  const site = `http://127.0.0.1:${server.address().port}`;
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });

  const answer = await client.check(`${site}/private/1`, "ExampleBot");
  assert.equal(answer.allowed, true);
  assert.equal(answer.reason, "no_robots_txt");
  assert.equal(answer.rule, null);
  assert.equal(answer.crawl_delay, null);
  assert.equal(answer.robots?.status, 404);
  const paced = await client.reserve(`${site}/p/1`, "ExampleBot");
  assert.equal(paced.pace?.interval_source, "default");
  const crawl = await robotsdCrawl(t, { Crawler: CheerioCrawler, client, start: `${site}/a`, robotsd: { ua: "ExampleBot", pace: false } });
  assert.deepEqual(crawl.fetched, ["/a"]);
  assert.deepEqual(crawl.failures, []);
  assert.equal(robotsHits, 1);
});
