import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { test } from "node:test";

import {
  MAX_BATCH,
  ProblemError,
  RobotsdClient,
  RobotsdError,
  MAX_ASK_AGAIN_JITTER_MS,
  UnavailableError,
  askAgainDelayMs,
  isFullAnswer,
  isProblem,
} from "@robotsd/client";

import {
  HOSTILE_FLAGS,
  SITE_ROBOTS,
  freePort,
  hostilePaths,
  reservations,
  startHostileSite,
  startRobotsd,
  startSilentServer,
  startSite,
  tokenFile,
} from "./helpers.mjs";

test("check answers with the verdict, the reason, the rule's line and the crawl-delay", async (t) => {
  const site = await startSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });

  const refused = await client.check(`${site.url}/private/report`, "ExampleBot");
  assert.equal(refused.allowed, false);
  assert.equal(refused.verdict, "disallow");
  assert.equal(refused.reason, "matched_rule");
  assert.deepEqual(refused.rule, { directive: "disallow", pattern: "/private/", line: 2 });
  assert.equal(refused.crawl_delay, 0.01);
  assert.equal(refused.robots_url, `${site.url}/robots.txt`);
  assert.deepEqual(refused.agent, { input: ["ExampleBot"], tokens: ["ExampleBot"] });

  const allowed = await client.check(`${site.url}/private/public/1`, "ExampleBot");
  assert.equal(allowed.allowed, true);
  assert.deepEqual(allowed.rule, { directive: "allow", pattern: "/private/public", line: 3 });
  assert.equal(allowed.robots?.cache, "hit");

  // The wildcard and the anchor: /*.pdf$ takes the PDF, not what follows it.
  assert.equal((await client.check(`${site.url}/docs/1.pdf`, "ExampleBot")).allowed, false);
  assert.equal((await client.check(`${site.url}/docs/1.pdf?page=2`, "ExampleBot")).allowed, true);

  // Several agents, and a whole User-Agent header, are one check each.
  const other = await client.check(`${site.url}/p/1`, ["NoSuchBot", "OtherBot"]);
  assert.equal(other.allowed, false);
  assert.equal(other.group?.global, false);
  const header = await client.check(`${site.url}/p/1`, "Mozilla/5.0 (compatible; OtherBot/2.1; +https://other.example/)");
  assert.deepEqual(header.agent.tokens, ["OtherBot"]);
  assert.equal(header.allowed, false);

  assert.equal(site.hits("/robots.txt"), 1, "robotsd fetches robots.txt once and answers from its cache");
  assert.equal(site.hits("/private/report"), 0);
});

test("check with record carries what robots.txt said of the URL, to keep beside the page", async (t) => {
  const site = await startSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const plain = await client.check(`${site.url}/private/report`, "ExampleBot");
  assert.equal(plain.record, undefined);
  const { record } = await client.check(`${site.url}/private/report`, "ExampleBot", { record: true });
  assert.equal(record?.format, "robotsd-record/1");
  assert.equal(record.url, `${site.url}/private/report`);
  assert.equal(record.vocabulary, "draft-ietf-aipref-vocab-08");
  assert.deepEqual(record.robots_txt, {
    allowed: false,
    sha256: createHash("sha256").update(SITE_ROBOTS).digest("hex"),
    rule: { directive: "disallow", pattern: "/private/", line: 2 },
    usage: null,
  });
  // A check does not read the page.
  assert.equal(record.robots, null);
  assert.equal(record.usage, null);
});

test("checkMany splits a long list into batches of 1,000 and answers every URL in order", async (t) => {
  const site = await startSite(t);
  const baseUrl = await startRobotsd(t);
  let posts = 0;
  const client = new RobotsdClient({
    baseUrl,
    // Counts the batches on their way out; the answers are robotsd's own.
    fetch: (input, init) => {
      if (init?.method === "POST") posts++;
      return fetch(input, init);
    },
  });
  const urls = [];
  for (let i = 0; i < 2 * MAX_BATCH + 500; i++) {
    urls.push(i % 7 === 0 ? `${site.url}/private/${i}` : `${site.url}/p/${i}`);
  }
  urls[1500] = "ftp://example.com/file"; // a problem in its slot, in the second batch
  const results = await client.checkMany(urls, "ExampleBot");

  assert.equal(posts, 3);
  assert.equal(results.length, urls.length);
  for (const [i, result] of results.entries()) {
    if (i === 1500) {
      assert.ok(isProblem(result), "the ftp URL gets a problem, not an answer");
      assert.equal(result.type, "urn:robotsd:problem:unsupported-scheme");
      assert.equal(result.status, 400);
      continue;
    }
    assert.ok(!isProblem(result), `${urls[i]}: ${JSON.stringify(result)}`);
    assert.equal(result.url, urls[i]);
    assert.equal(result.allowed, i % 7 !== 0, urls[i]);
  }
  assert.equal(site.hits("/robots.txt"), 1);
  assert.deepEqual(await client.checkMany([], "ExampleBot"), []);
});

test("robotsd's problems are ProblemErrors with the parsed problem+json", async (t) => {
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });

  const scheme = await client.check("ftp://example.com/", "ExampleBot").then(
    () => assert.fail("an ftp URL was answered"),
    (error) => error,
  );
  assert.ok(scheme instanceof ProblemError);
  assert.ok(scheme instanceof RobotsdError);
  assert.equal(scheme.status, 400);
  assert.equal(scheme.type, "urn:robotsd:problem:unsupported-scheme");
  assert.equal(scheme.problem.title, "Unsupported URL scheme");
  assert.match(scheme.message, /Unsupported URL scheme \(400\)/);

  await assert.rejects(client.check("http://127.0.0.1:9/", "\u0007"), (error) => {
    assert.ok(error instanceof ProblemError);
    assert.equal(error.type, "urn:robotsd:problem:invalid-user-agent");
    return true;
  });
  await assert.rejects(client.robots("not a url"), (error) => {
    assert.ok(error instanceof ProblemError);
    assert.equal(error.problem.status, 400);
    assert.match(error.type, /^urn:robotsd:problem:/);
    return true;
  });
});

test("an unreachable or silent robotsd is an UnavailableError", async (t) => {
  const down = new RobotsdClient({ baseUrl: `http://127.0.0.1:${await freePort()}` });
  await assert.rejects(down.check("http://127.0.0.1:9/", "ExampleBot"), (error) => {
    assert.ok(error instanceof UnavailableError);
    assert.ok(error instanceof RobotsdError);
    assert.match(error.message, /ECONNREFUSED/);
    return true;
  });

  const silent = new RobotsdClient({ baseUrl: await startSilentServer(t), timeoutMs: 300 });
  const started = Date.now();
  await assert.rejects(silent.checkMany(["http://127.0.0.1:9/"], "ExampleBot"), (error) => {
    assert.ok(error instanceof UnavailableError);
    assert.match(error.message, /timed out/);
    return true;
  });
  assert.ok(Date.now() - started < 5_000, "the timeout cut the call short");

  const controller = new AbortController();
  const call = silent.robots("http://127.0.0.1:9/", { signal: controller.signal });
  controller.abort();
  await assert.rejects(call, UnavailableError);
});

test("an answer that is not problem+json still becomes a ProblemError", async (t) => {
  const proxy = createServer((_, res) => res.writeHead(502, { "content-type": "text/html" }).end("<h1>Bad gateway</h1>"));
  await new Promise((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise((resolve) => proxy.close(resolve)));
  const client = new RobotsdClient({ baseUrl: `http://127.0.0.1:${proxy.address().port}/` });
  await assert.rejects(client.check("http://127.0.0.1:9/", "ExampleBot"), (error) => {
    assert.ok(error instanceof ProblemError);
    assert.equal(error.status, 502);
    assert.equal(error.problem.detail, "<h1>Bad gateway</h1>");
    return true;
  });
});

test("with --api-token-file, the token is sent as a bearer token", async (t) => {
  const site = await startSite(t);
  const token = "test-token-0123456789abcdef";
  const baseUrl = await startRobotsd(t, "--api-token-file", tokenFile(t, token));

  const anonymous = new RobotsdClient({ baseUrl });
  await assert.rejects(anonymous.check(`${site.url}/p/1`, "ExampleBot"), (error) => {
    assert.ok(error instanceof ProblemError);
    assert.equal(error.status, 401);
    assert.equal(error.type, "urn:robotsd:problem:unauthorized");
    return true;
  });
  const wrong = new RobotsdClient({ baseUrl, token: "not-the-token-0123456789" });
  await assert.rejects(wrong.checkMany([`${site.url}/p/1`], "ExampleBot"), { status: 401 });

  const client = new RobotsdClient({ baseUrl, token });
  assert.equal((await client.check(`${site.url}/p/1`, "ExampleBot")).allowed, true);
  await assert.rejects(anonymous.feedback([{ url: `${site.url}/p/1`, status: 503 }]), { status: 401 });
  const [report] = await client.feedback([{ url: `${site.url}/p/1`, status: 503 }]);
  assert.equal(isProblem(report) ? report.detail : report.origin, site.url);
  const [result] = await client.checkMany([`${site.url}/private/1`], "ExampleBot");
  assert.equal(isProblem(result) ? result.detail : result.allowed, false);
  assert.equal((await client.robots(site.url)).state, "parsed");
});

test("robots shows what robotsd holds for the origin", async (t) => {
  const site = await startSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const held = await client.robots(`${site.url}/p/1`, { includeRobotsTxt: true });
  assert.equal(held.origin, site.url);
  assert.equal(held.state, "parsed");
  assert.equal(held.robots.status, 200);
  assert.equal(held.robots_txt, (await (await fetch(`${site.url}/robots.txt`)).text()));
  const groups = held.parsed?.groups ?? [];
  assert.deepEqual(
    groups.map((g) => [g.agents.map((a) => a.value), g.crawl_delay ?? null]),
    [
      [["*"], 0.01],
      [["OtherBot"], null],
    ],
  );
  const plain = await client.robots(site.url);
  assert.equal(plain.robots_txt ?? null, null);
});

test("evaluate tests a robots.txt text without touching the network", async (t) => {
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const answer = await client.evaluate({
    robotsTxt: "User-agent: *\nDisallow: /private\nAllow: /private/press\n",
    urls: ["/private/a", "/private/press/1", "/%70rivate/b"],
    ua: "ExampleBot",
    include: "parsed",
  });
  const results = answer.results.map((r) => ("error" in r ? r.error.type : [r.allowed, "rule" in r ? (r.rule?.line ?? null) : null]));
  assert.deepEqual(results, [
    [false, 2],
    [true, 3],
    [true, null], // google's matching: %70 is not p
  ]);
  assert.equal(answer.parsed?.groups.length, 1);

  const decoded = await client.evaluate({
    robotsTxt: "User-agent: *\nDisallow: /private\n",
    urls: ["/%70rivate/b"],
    ua: ["ExampleBot"],
    percentDecoding: "rfc9309",
  });
  const [only] = decoded.results;
  assert.ok(only && "allowed" in only && only.allowed === false);
});

test("a batch cut at its bound answers the verdict alone past it, each one right", async (t) => {
  // A hostile site: each full answer about it is 6 KB and more, and echoes a 4 KB URL, so
  // robotsd's answer to a batch of 1,000 reaches its 8 MiB bound and goes on in verdicts.
  const site = await startHostileSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t, ...HOSTILE_FLAGS) });
  const paths = hostilePaths();
  const results = await client.checkMany(
    paths.map((p) => site.url + p),
    "a",
  );
  const evaluation = await client.evaluate({ robotsTxt: site.robots, urls: paths, ua: "a" });
  const evaluated = evaluation.results.map((item) => ("error" in item ? item.error : item));

  for (const got of [results, evaluated]) {
    assert.equal(got.length, paths.length);
    const full = got.findIndex((r) => isProblem(r) || !isFullAnswer(r));
    assert.ok(full > 100 && full < paths.length, `${full} full answers`);
    // From the first verdict on, every answer is a verdict, and every verdict is right.
    for (const [i, result] of got.entries()) {
      assert.ok(!isProblem(result), `${i}: ${JSON.stringify(result)}`);
      assert.equal(isFullAnswer(result), i < full, `${i}`);
      if (i >= full) assert.deepEqual(Object.keys(result).sort(), ["allowed", "reason"]);
      assert.equal(result.allowed, !paths[i].startsWith("/d"), `${i}`);
      assert.equal(result.reason, "matched_rule");
    }
  }
  assert.equal(evaluation.truncated, true);

  // The bounds of each full answer: 16 of the 20 agents, each cut, and the pattern.
  const [first] = results;
  assert.ok(isFullAnswer(first) && !first.allowed);
  assert.equal(first.group?.truncated, true);
  assert.equal(first.group?.agents_total, 20);
  assert.equal(first.group?.agents.length, 16);
  assert.equal(first.rule?.directive, "disallow");
  assert.equal(first.rule?.truncated, true);
  assert.equal(first.rule?.pattern.length, 2048);
  assert.equal(site.robotsHits(), 1);
});

test("check and checkMany with pace reserve fetch slots; without it an answer has no pace", async (t) => {
  const site = await startSite(t);
  const baseUrl = await startRobotsd(t);
  const client = new RobotsdClient({ baseUrl });

  const plain = await client.check(`${site.url}/p/1`, "ExampleBot");
  assert.ok(!("pace" in plain), "no pace member without pace: true");
  const [plainItem] = await client.checkMany([`${site.url}/p/1`], "ExampleBot");
  assert.ok(!("pace" in plainItem));
  assert.equal(await reservations(baseUrl, "reserved"), 0);

  const answer = await client.check(`${site.url}/p/1`, "ExampleBot", { pace: true });
  assert.equal(answer.allowed, true);
  const { pace } = answer;
  assert.equal(pace.outcome, "reserved");
  assert.equal(pace.interval_ms, 10, "the * group's Crawl-delay: 0.01");
  assert.equal(pace.interval_source, "crawl_delay");
  assert.equal(pace.crawl_delay_line, 5);
  assert.equal(pace.capped, false);
  assert.equal(pace.slowdown, 1);
  assert.equal(pace.retry_after_until, null);
  assert.equal(pace.scope, "local", "no --redis-url: this robotsd alone");
  assert.ok(Number.isInteger(pace.wait_ms) && pace.wait_ms >= 0);
  assert.ok(!Number.isNaN(Date.parse(pace.not_before)));

  // A disallowed URL reserves nothing.
  assert.equal((await client.check(`${site.url}/private/1`, "ExampleBot", { pace: true })).pace, null);

  // A batch of one origin: staggered slots, one interval apart, and none for the disallowed URL.
  const urls = ["/p/2", "/private/2", "/p/3", "/p/4"].map((p) => site.url + p);
  const results = await client.checkMany(urls, "ExampleBot", { pace: true });
  assert.ok(results.every((r) => !isProblem(r)));
  assert.equal(results[1].pace, null);
  const slots = [results[0], results[2], results[3]].map((r) => Date.parse(r.pace.not_before));
  assert.ok(slots[1] - slots[0] >= 10 && slots[2] - slots[1] >= 10, slots.join());
  assert.equal(await reservations(baseUrl, "reserved"), 4);
});

test("reserve waits for the slot, asks again when robotsd puts it off, and stops when aborted", async (t) => {
  const site = await startSite(t);
  // OtherBot's group states no crawl-delay: robotsd's default interval, 300 ms here; a slot more
  // than 100 ms ahead is put off.
  const baseUrl = await startRobotsd(t, "--default-crawl-delay", "300ms", "--max-pace-wait", "100ms");
  const client = new RobotsdClient({ baseUrl });
  const url = `${site.url}/private/1`;

  const started = performance.now();
  const first = await client.reserve(url, "OtherBot");
  assert.equal(first.pace.outcome, "reserved");
  assert.equal(first.pace.interval_source, "default");
  const second = await client.reserve(url, "OtherBot");
  const took = performance.now() - started;
  assert.equal(second.pace.outcome, "reserved", "asked again until reserved");
  assert.ok(took >= 295, `the second slot came ${took.toFixed(0)} ms after the first`);
  assert.ok((await reservations(baseUrl, "deferred")) >= 1, "the second slot was put off first");

  // Disallowed: at once, nothing reserved.
  const refused = await client.reserve(`${site.url}/p/1`, "OtherBot");
  assert.equal(refused.allowed, false);
  assert.equal(refused.pace, null);

  await assert.rejects(client.reserve(url, "OtherBot", { signal: AbortSignal.timeout(50) }));
});

test("a deferred slot is asked for again after wait_ms and a jitter of up to a tenth of it, at most 1 s", () => {
  // The bounds, with the random draw at its ends.
  assert.equal(askAgainDelayMs(400, () => 0), 400);
  assert.equal(askAgainDelayMs(400, () => 0.999999), 400 + 0.999999 * 40);
  assert.equal(askAgainDelayMs(30_000, () => 0.5), 30_500);
  assert.equal(MAX_ASK_AGAIN_JITTER_MS, 1000);
  assert.equal(askAgainDelayMs(60_000, () => 0.999999), 60_000 + 0.999999 * 1000);
  assert.equal(askAgainDelayMs(0, () => 0.5), 0);
  // Drawn: within the bounds, and spread (a hundred workers told the same wait do not all ask
  // again at once).
  const delays = Array.from({ length: 100 }, () => askAgainDelayMs(5_000));
  assert.ok(delays.every((d) => d >= 5_000 && d < 5_500), delays.join());
  assert.ok(new Set(delays.map((d) => Math.floor(d / 50))).size >= 5, "spread over the 500 ms");
});

test("feedback tells robotsd what sites answered, and robotsd slows the origin down", async (t) => {
  const site = await startSite(t);
  const baseUrl = await startRobotsd(t);
  let posts = 0;
  const client = new RobotsdClient({
    baseUrl,
    fetch: (input, init) => {
      if (String(input).endsWith("/v1/feedback")) posts++;
      return fetch(input, init);
    },
  });

  // robotsd takes reports only about origins it holds something of: a check first.
  await client.check(`${site.url}/p/1`, "ExampleBot");
  const results = await client.feedback([
    { url: `${site.url}/p/1`, status: 429, retry_after: "2" },
    { url: `${site.url}/p/2`, timeout: true },
    { url: "ftp://example.com/x", status: 500 },
    { url: `${site.url}/p/3`, status: 200, timeout: true },
  ]);
  assert.equal(posts, 1);
  assert.equal(results.length, 4);
  const [held, timedOut, scheme, both] = results;
  assert.ok(!isProblem(held) && !isProblem(timedOut));
  assert.equal(held.origin, site.url);
  // The slowdown decays between two reports (half-life 60 s): 1.999 doubled is 3.998 a few
  // milliseconds later.
  const near = (actual, expected, why) => assert.ok(Math.abs(actual - expected) < 0.02, `${why}: ${actual}`);
  near(held.pace.slowdown, 2, "a 429 doubles the interval");
  assert.ok(!Number.isNaN(Date.parse(held.pace.retry_after_until)), "and its Retry-After holds the origin");
  near(timedOut.pace.slowdown, 4, "a timeout doubles it again");
  assert.ok(isProblem(scheme));
  assert.equal(scheme.type, "urn:robotsd:problem:unsupported-scheme");
  assert.ok(isProblem(both), "a status or timeout: true, not both");
  assert.equal(both.type, "urn:robotsd:problem:invalid-report");

  // The next slot: behind the Retry-After, at the slowed-down interval.
  const { pace } = await client.check(`${site.url}/p/4`, "ExampleBot", { pace: true });
  assert.equal(pace.interval_source, "pushback");
  assert.ok(pace.slowdown > 1);
  assert.ok(pace.retry_after_until);
  assert.ok(pace.wait_ms > 1000, `wait_ms ${pace.wait_ms}`);
  const held2 = await client.robots(site.url);
  assert.ok(held2.pace && held2.pace.slowdown > 1);

  // 1,001 reports: two requests, one result each, in order.
  posts = 0;
  const many = Array.from({ length: MAX_BATCH + 1 }, (_, i) => ({ url: `${site.url}/p/${i}`, status: 200 }));
  const eased = await client.feedback(many);
  assert.equal(posts, 2);
  assert.equal(eased.length, many.length);
  assert.ok(eased.every((r) => !isProblem(r) && r.origin === site.url));
  assert.ok(eased.at(-1).pace.slowdown < 4, "successes ease a slowdown");
  assert.deepEqual(await client.feedback([]), []);
});

test("with --rsl, an allowed URL carries the RSL license terms that cover it", async (t) => {
  const license = `<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/articles/*" server="https://license.example/">
    <license><permits type="usage">ai-input search</permits><prohibits type="usage">ai-train</prohibits>
      <payment type="crawl"><amount currency="USD">0.015</amount></payment></license>
  </content>
</rsl>`;
  let licenseHits = 0;
  const server = createServer((req, res) => {
    if (req.url === "/license.xml") {
      licenseHits++;
      res.writeHead(200, { "content-type": "application/rsl+xml" }).end(license);
      return;
    }
    const { port } = server.address();
    res
      .writeHead(200, { "content-type": "text/plain" })
      .end(`User-agent: *\nDisallow: /private/\nLicense: http://127.0.0.1:${port}/license.xml\n`);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const site = `http://127.0.0.1:${server.address().port}`;
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t, "--rsl") });

  const article = await client.check(`${site}/articles/1`, "ExampleBot");
  const [report] = article.usage?.rsl ?? [];
  assert.equal(report?.state, "covered");
  assert.equal(report.line, 3);
  assert.equal(report.contents[0].url, "/articles/*");
  assert.equal(report.contents[0].server, "https://license.example/");
  assert.deepEqual(report.contents[0].licenses[0].permits.usage, ["ai-input", "search"]);
  assert.deepEqual(report.contents[0].licenses[0].payment?.amounts, [{ value: "0.015", currency: "USD" }]);
  assert.equal(report.source?.cache, "miss");
  assert.equal((await client.check(`${site}/about`, "ExampleBot")).usage?.rsl?.[0]?.state, "not_covered");
  assert.equal((await client.check(`${site}/private/x`, "ExampleBot")).usage, null);
  assert.equal(licenseHits, 1);
});
