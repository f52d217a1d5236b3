// withRobotsd's `page` option: after each response it let through, robotsd's answer about the page
// is on the crawling context (robotsdPage), and a nofollow page's enqueueLinks enqueues nothing.
// Crawls of a loopback site with CheerioCrawler and with PlaywrightCrawler (Debian's Chromium).
import assert from "node:assert/strict";
import { test } from "node:test";

import { CheerioCrawler, Configuration, createCheerioRouter } from "@crawlee/cheerio";
import { PlaywrightCrawler } from "@crawlee/playwright";
import { RobotsdClient } from "@robotsd/client";
import { pageStats, robotsdPage, withRobotsd } from "@robotsd/client/crawlee";

import { robotsdCrawl } from "./crawl.mjs";
import { startPageSite, startRobotsd } from "./helpers.mjs";

const HTML = ["Content-Type", "text/html; charset=utf-8"];

/** A page: its `meta` tags first (line 1), then its links. */
function html(path, { meta = "", links = [] } = {}) {
  // The empty icon keeps a browser from asking for /favicon.ico, which no crawler decided to fetch.
  const anchors = links.map((href) => `<a href="${href}">${href}</a>`).join("");
  return `${meta}<!doctype html><title>${path}</title><link rel="icon" href="data:,">\n<body>${anchors}</body>`;
}

/**
 * The site: `/nofollow` says nofollow in a meta tag, `/header-nofollow` says it to ExampleBot in
 * an X-Robots-Tag header, `/other-agent` says it to OtherBot only; `/follow` says nothing. Each
 * links to pages of its own; robots.txt disallows `/private/`.
 */
function pages() {
  const leaf = (path) => ({ headers: [HTML], body: html(path) });
  return {
    "/": {
      headers: [HTML],
      body: html("/", { links: ["/follow", "/nofollow", "/header-nofollow", "/other-agent", "/private/1"] }),
    },
    "/follow": { headers: [HTML], body: html("/follow", { links: ["/follow/1"] }) },
    "/nofollow": {
      headers: [HTML],
      body: html("/nofollow", { meta: '<meta name="robots" content="nofollow">', links: ["/nofollow/1", "/nofollow/2"] }),
    },
    "/header-nofollow": {
      headers: [HTML, ["X-Robots-Tag", "ExampleBot: nofollow"]],
      body: html("/header-nofollow", { links: ["/header-nofollow/1"] }),
    },
    "/other-agent": {
      headers: [HTML],
      body: html("/other-agent", { meta: '<meta name="OtherBot" content="nofollow, noindex">', links: ["/other-agent/1"] }),
    },
    "/private/1": leaf("/private/1"),
    ...Object.fromEntries(
      ["/follow/1", "/nofollow/1", "/nofollow/2", "/header-nofollow/1", "/other-agent/1"].map((p) => [p, leaf(p)]),
    ),
  };
}

const ROBOTS = "User-agent: *\nDisallow: /private/\n";
const FOLLOWED = ["/", "/follow", "/follow/1", "/header-nofollow", "/nofollow", "/other-agent", "/other-agent/1"];
const NOT_FOLLOWED = ["/header-nofollow/1", "/nofollow/1", "/nofollow/2"];

/** Crawls the site through withRobotsd with the page option, recording each context's page answer. */
async function pageCrawl(t, { Crawler, client, site, robotsd = {} }) {
  const onContext = new Map();
  const onPage = [];
  const crawl = await robotsdCrawl(t, {
    Crawler,
    client,
    start: `${site.url}/`,
    robotsd: { ua: "ExampleBot", page: true, onPage: (answer, url) => onPage.push([new URL(url).pathname, answer]), ...robotsd },
    onContext: ({ request, robotsdPage: answer }) => onContext.set(new URL(request.loadedUrl ?? request.url).pathname, answer),
  });
  return { ...crawl, onContext, onPage };
}

/** What every crawler class must do with the page option, robotsd answering. */
async function assertNofollowPagesEnqueueNothing(t, Crawler) {
  const site = await startPageSite(t, { robots: ROBOTS, pages: pages() });
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const crawl = await pageCrawl(t, { Crawler, client, site });

  assert.deepEqual(crawl.failures, []);
  assert.deepEqual(crawl.fetched, FOLLOWED);
  assert.deepEqual(site.pages(), FOLLOWED, "the links of the nofollow pages were never fetched");
  for (const path of NOT_FOLLOWED) assert.equal(site.hits(path), 0, path);
  assert.deepEqual(crawl.skipped, [["/private/1", "robotsTxt"]]);
  assert.equal(crawl.stats.requestsFailed, 0);

  // Every request handler had its page's answer on its context.
  assert.deepEqual([...crawl.onContext.keys()].sort(), FOLLOWED);
  for (const [path, answer] of crawl.onContext) {
    assert.ok(answer, `${path}: no robotsdPage`);
    assert.equal(answer.allowed, true, path);
    assert.equal(answer.check.url, site.url + path);
    const nofollow = path === "/nofollow" || path === "/header-nofollow";
    assert.equal(answer.robots.follow, !nofollow, path);
    assert.equal(answer.robots.index, true, `${path}: OtherBot's noindex is not ExampleBot's`);
  }
  assert.deepEqual(crawl.onContext.get("/header-nofollow").robots.rules, [{ rule: "nofollow", agent: "ExampleBot", header: 1 }]);
  assert.deepEqual(
    crawl.onContext.get("/nofollow").robots.rules.map((r) => [r.rule, r.agent]),
    [["nofollow", null]],
  );
  assert.deepEqual(crawl.onContext.get("/other-agent").robots.rules, [], "OtherBot's rules are not ExampleBot's");
  assert.deepEqual(crawl.onPage.map(([path]) => path).sort(), FOLLOWED, "onPage saw each answer");

  // Counted, and logged where each nofollow came from.
  assert.deepEqual(pageStats(crawl.crawler), { answered: 7, unanswered: 0, nofollow: 2, enqueueLinksSkipped: 2 });
  const skips = crawl.lines.filter((l) => l.message.startsWith("robotsd: enqueueLinks enqueued nothing"));
  assert.equal(skips.length, 2);
  const header = skips.find((l) => l.data.url === `${site.url}/header-nofollow`);
  assert.match(header.message, /says nofollow \(X-Robots-Tag header 1, for ExampleBot\)$/);
  const meta = skips.find((l) => l.data.url === `${site.url}/nofollow`);
  assert.match(meta.message, /says nofollow \(meta line \d+\)$/);
}

test("withRobotsd(CheerioCrawler, { page: true }) puts each page's answer on the context, and enqueues no link of a nofollow page", async (t) => {
  await assertNofollowPagesEnqueueNothing(t, CheerioCrawler);
});

test("withRobotsd(PlaywrightCrawler, { page: true }) puts each page's answer on the context, and enqueues no link of a nofollow page", async (t) => {
  await assertNofollowPagesEnqueueNothing(t, PlaywrightCrawler);
});

test("when robotsd cannot answer about a page, the request goes on without the answer, and its links are enqueued", async (t) => {
  const site = await startPageSite(t, { robots: ROBOTS, pages: pages() });
  const baseUrl = await startRobotsd(t);
  // robotsd answers the checks, but POST /v1/page never reaches it.
  const client = new RobotsdClient({
    baseUrl,
    fetch: (input, init) =>
      String(input).endsWith("/v1/page") ? Promise.reject(new TypeError("fetch failed")) : fetch(input, init),
  });
  const crawl = await pageCrawl(t, { Crawler: CheerioCrawler, client, site });

  const all = [...FOLLOWED, ...NOT_FOLLOWED].sort();
  assert.deepEqual(crawl.failures, []);
  assert.equal(crawl.stats.requestsFailed, 0);
  assert.deepEqual(crawl.fetched, all, "enqueueLinks works as ever: the nofollow pages' links too");
  assert.deepEqual([...crawl.onContext.values()], all.map(() => null), "robotsdPage is null");
  assert.deepEqual(crawl.onPage, []);
  assert.deepEqual(pageStats(crawl.crawler), { answered: 0, unanswered: all.length, nofollow: 0, enqueueLinksSkipped: 0 });
  const warnings = crawl.lines.filter((l) => l.message.startsWith("robotsd could not answer about the page"));
  assert.equal(warnings.length, all.length);
  assert.match(warnings[0].message, /going on without its rules: robotsd: POST .*\/v1\/page failed: fetch failed/);
});

test("robotsdPage, in a request handler of your own, does the same for one context", async (t) => {
  const site = await startPageSite(t, { robots: ROBOTS, pages: pages() });
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const enqueued = [];
  const infos = [];
  const context = {
    request: { url: `${site.url}/header-nofollow`, loadedUrl: `${site.url}/header-nofollow` },
    // got's response, as an HTTP crawler has it: each field line in rawHeaders.
    response: {
      url: `${site.url}/header-nofollow`,
      rawHeaders: ["Date", "today", "Content-Type", "text/html", "X-Robots-Tag", "ExampleBot: nofollow"],
      headers: {},
    },
    body: html("/header-nofollow", { links: ["/header-nofollow/1"] }),
    contentType: { type: "text/html", encoding: "utf-8" },
    enqueueLinks: async () => enqueued.push("called"),
    log: { info: (message) => infos.push(message), warning: (message) => assert.fail(message) },
  };
  const answer = await robotsdPage(client, context, { ua: "ExampleBot" });
  assert.equal(context.robotsdPage, answer);
  assert.equal(answer.robots.follow, false);
  assert.deepEqual(answer.robots.rules, [{ rule: "nofollow", agent: "ExampleBot", header: 1 }]);
  assert.deepEqual(await context.enqueueLinks({ strategy: "same-origin" }), { processedRequests: [], unprocessedRequests: [] });
  assert.deepEqual(enqueued, [], "the context's own enqueueLinks was not called");
  assert.equal(infos.length, 1);

  // As another agent, the page is followed: enqueueLinks is left alone.
  const other = { ...context, enqueueLinks: async () => enqueued.push("called") };
  assert.equal((await robotsdPage(client, other, { ua: "OtherBot" })).robots.follow, true);
  await other.enqueueLinks();
  assert.deepEqual(enqueued, ["called"]);

  // No response (skipNavigation): nothing to ask about.
  const skipped = { request: { url: `${site.url}/follow`, skipNavigation: true } };
  assert.equal(await robotsdPage(client, skipped), null);
  assert.equal(skipped.robotsdPage, null);
});

test("the page option wraps the user's request handler, and Crawlee still reads that handler (a Router's metadata)", async (t) => {
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const config = new Configuration({ persistStorage: false });
  const router = createCheerioRouter();
  const Cheerio = withRobotsd(CheerioCrawler, client, { page: true });
  const cheerio = new Cheerio({ requestHandler: router }, config);
  assert.notEqual(cheerio.requestHandler, router, "Crawlee calls the wrapper");
  assert.equal(cheerio.userRequestHandler, router, "and reads the router's metadata off the router itself");

  const handler = async () => {};
  const Playwright = withRobotsd(PlaywrightCrawler, client, { page: true });
  const playwright = new Playwright({ requestHandler: handler }, config);
  assert.notEqual(playwright.userProvidedRequestHandler, handler);
  assert.equal(playwright.userRequestHandler, handler);
  await playwright.browserPool.destroy();

  // Without the option, nothing is wrapped.
  const plain = new (withRobotsd(CheerioCrawler, client))({ requestHandler: handler }, config);
  assert.equal(plain.requestHandler, handler);
  assert.equal(plain.userRequestHandler, handler);
});
