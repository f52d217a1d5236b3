import assert from "node:assert/strict";
import { test } from "node:test";

import { RobotsdClient, UnavailableError, isFullAnswer } from "@robotsd/client";
import { DEFAULT_AGENT, DisallowedError, filterAllowed, robotsdPreNavigationHook } from "@robotsd/client/crawlee";

import { cheerioCrawl } from "./crawl.mjs";
import {
  HOSTILE_FLAGS,
  allowedPaths,
  freePort,
  hostilePaths,
  sitePaths,
  startHostileSite,
  startRobotsd,
  startSite,
} from "./helpers.mjs";

function assertOnlyRobotsdFetchedRobotsTxt(site) {
  assert.equal(site.hits("/robots.txt"), 1, "robots.txt is fetched once, by robotsd; the crawler never does");
  assert.match(site.robotsAgents[0], /^robotsd\//);
}

test("CheerioCrawler through the hook fetches exactly what robotsd allows", async (t) => {
  const site = await startSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const crawl = await cheerioCrawl(t, { client, start: `${site.url}/`, hook: { ua: "ExampleBot" } });

  const allowed = await allowedPaths(client, site, "ExampleBot");
  assert.deepEqual(crawl.failures, []);
  assert.deepEqual(crawl.fetched, allowed);
  assert.deepEqual(site.pages(), allowed, "the site saw exactly the allowed pages");
  assert.deepEqual(crawl.refused, sitePaths().filter((p) => !allowed.includes(p)).sort());
  // 1 index + 30 pages + 5 under /private/public; 10 private and 5 PDFs refused, never fetched.
  assert.equal(allowed.length, 36);
  assert.equal(crawl.refused.length, 15);
  for (const path of crawl.refused) assert.equal(site.hits(path), 0, path);
  // Crawlee counts a request a hook stopped as failed (it has no way to skip from a hook), once.
  assert.equal(crawl.stats.requestsFailed, 15);
  assert.equal(crawl.stats.requestsFinished, 36);
  assertOnlyRobotsdFetchedRobotsTxt(site);
  assert.equal(crawl.answers.length, 51);
  assert.ok(crawl.answers.every((answer) => answer.crawl_delay === 0.01));
});

test("CheerioCrawler with filterAllowed never enqueues a disallowed URL", async (t) => {
  const site = await startSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const crawl = await cheerioCrawl(t, {
    client,
    start: `${site.url}/`,
    hook: { ua: "ExampleBot" },
    filter: { ua: "ExampleBot" },
  });

  const allowed = await allowedPaths(client, site, "ExampleBot");
  assert.deepEqual(crawl.failures, []);
  assert.deepEqual(crawl.fetched, allowed);
  assert.deepEqual(site.pages(), allowed);
  assert.deepEqual(crawl.refused, sitePaths().filter((p) => !allowed.includes(p)).sort());
  assert.equal(crawl.stats.requestsFailed, 0, "nothing disallowed reached the queue");
  assert.equal(crawl.stats.requestsFinished, allowed.length);
  assertOnlyRobotsdFetchedRobotsTxt(site);
});

test("the hook checks as the request's agent, records the verdict, and stops a disallowed request", async (t) => {
  const site = await startSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const hook = robotsdPreNavigationHook(client);
  const logged = [];
  const log = { info: (message, data) => logged.push([message, data]) };

  // OtherBot's group disallows /p/; the agent comes from the request's own header.
  const refused = { url: `${site.url}/p/1`, headers: { "User-Agent": "OtherBot/1.0" }, userData: {}, noRetry: false };
  const error = await hook({ request: refused, log }).then(() => assert.fail("not stopped"), (e) => e);
  assert.ok(error instanceof DisallowedError);
  assert.equal(error.answer.rule?.line, 8);
  assert.match(error.message, /disallowed by robots\.txt line 8 \(disallow: \/p\/\)/);
  assert.equal(refused.noRetry, true, "a disallowed request is never retried");
  assert.deepEqual(refused.userData.robotsd, {
    allowed: false,
    verdict: "disallow",
    reason: "matched_rule",
    rule: { directive: "disallow", pattern: "/p/", line: 8 },
    crawlDelay: null,
    // Pacing (on by default) reserves nothing for a disallowed URL.
    pace: null,
  });
  assert.deepEqual(logged[0][1], { reason: "matched_rule", line: 8 });

  // An HTTP crawler's headers for the navigation are the hook's second argument.
  const allowed = { url: `${site.url}/p/1`, userData: {}, noRetry: false };
  await hook({ request: allowed }, { headers: { "user-agent": "ExampleBot/2.0" } });
  assert.equal(allowed.userData.robotsd.allowed, true);
  assert.equal(allowed.userData.robotsd.crawlDelay, 0.01);
  // The slot the hook waited for (pacing is on by default): the * group's crawl-delay, line 5.
  assert.equal(allowed.userData.robotsd.pace.outcome, "reserved");
  assert.equal(allowed.userData.robotsd.pace.interval_ms, 10);
  assert.equal(allowed.userData.robotsd.pace.crawl_delay_line, 5);

  // With nothing to read, the default agent (the * group here).
  const fallback = { url: `${site.url}/private/1`, userData: {}, noRetry: false };
  await assert.rejects(hook({ request: fallback }), DisallowedError);
  assert.equal(fallback.userData.robotsd.rule.line, 2);
  assert.match(DEFAULT_AGENT, /^Mozilla/);

  // A problem with the URL is not retried either.
  const bad = { url: "ftp://example.com/", userData: {}, noRetry: false };
  await assert.rejects(hook({ request: bad }), { type: "urn:robotsd:problem:unsupported-scheme" });
  assert.equal(bad.noRetry, true);

  for (const path of ["/p/1", "/private/1"]) assert.equal(site.hits(path), 0);
});

test("when robotsd cannot answer, the crawl fails closed unless failOpen", async (t) => {
  const site = await startSite(t);
  const down = new RobotsdClient({ baseUrl: `http://127.0.0.1:${await freePort()}`, timeoutMs: 2_000 });

  const closed = await cheerioCrawl(t, { client: down, start: `${site.url}/`, hook: { ua: "ExampleBot" } });
  assert.deepEqual(closed.fetched, []);
  assert.deepEqual(site.pages(), [], "nothing was fetched unchecked");
  assert.equal(closed.failures.length, 1);
  assert.match(closed.failures[0], /ECONNREFUSED/);

  // robots.txt itself needs no check; other requests do.
  const hook = robotsdPreNavigationHook(down);
  await hook({ request: { url: `${site.url}/robots.txt`, userData: {}, noRetry: false } });
  const request = { url: `${site.url}/p/1`, userData: {}, noRetry: false };
  await assert.rejects(hook({ request }), UnavailableError);
  assert.equal(request.noRetry, false, "robotsd may come back: Crawlee's retries are for that");

  await assert.rejects(filterAllowed(down, [`${site.url}/p/1`], { ua: "ExampleBot" }), UnavailableError);
  const links = [`${site.url}/p/1`, `${site.url}/private/1`];
  assert.deepEqual(await filterAllowed(down, links, { ua: "ExampleBot", failOpen: true }), links);

  const open = await cheerioCrawl(t, { client: down, start: `${site.url}/`, hook: { ua: "ExampleBot", failOpen: true } });
  assert.deepEqual(open.failures, []);
  assert.deepEqual(open.fetched, sitePaths().sort(), "failOpen fetches everything, unchecked");
});

test("filterAllowed keeps order, lets robots.txt through, and leaves out what robotsd has a problem with", async (t) => {
  const site = await startSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const urls = [
    `${site.url}/p/2`,
    `${site.url}/private/2`,
    "ftp://example.com/x",
    `${site.url}/robots.txt`,
    `${site.url}/docs/2.pdf`,
    `${site.url}/private/public/2`,
  ];
  const refused = [];
  const seen = [];
  const allowed = await filterAllowed(client, urls, {
    ua: "ExampleBot",
    onAnswer: (answer, url) => seen.push([url, answer.allowed]),
    onRefused: (url, why) => refused.push([url, "allowed" in why ? why.rule?.line : why.type]),
  });
  assert.deepEqual(allowed, [`${site.url}/p/2`, `${site.url}/robots.txt`, `${site.url}/private/public/2`]);
  assert.deepEqual(refused, [
    [`${site.url}/private/2`, 2],
    ["ftp://example.com/x", "urn:robotsd:problem:unsupported-scheme"],
    [`${site.url}/docs/2.pdf`, 4],
  ]);
  assert.equal(seen.length, 4);
  assert.deepEqual(
    await filterAllowed(client, urls, { ua: "ExampleBot", failOpen: true }),
    urls.filter((u) => !/private\/2|pdf/.test(u)),
  );
  assert.equal(site.hits("/robots.txt"), 1);
});

test("filterAllowed keeps and refuses each URL of a batch robotsd cut at its bound", async (t) => {
  // Past the bound of the batch's answer (8 MiB), robotsd gives the verdict alone.
  const site = await startHostileSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t, ...HOSTILE_FLAGS) });
  const urls = hostilePaths().map((p) => site.url + p);
  const answers = [];
  const refused = [];
  const allowed = await filterAllowed(client, urls, {
    ua: "a",
    onAnswer: (answer) => answers.push(answer),
    onRefused: (url, why) => refused.push([url, why]),
  });
  assert.deepEqual(
    allowed,
    urls.filter((u) => !u.startsWith(`${site.url}/d`)),
  );
  assert.equal(answers.length, urls.length);
  const verdicts = answers.filter((a) => !isFullAnswer(a)).length;
  assert.ok(verdicts > 0 && verdicts < urls.length - 100, `${verdicts} verdicts alone`);
  assert.equal(refused.length, urls.length - allowed.length);
  assert.ok(refused.every(([, why]) => why.allowed === false && why.reason === "matched_rule"));
});
