// withRobotsd with CheerioCrawler: Crawlee's own robots.txt support, answered by robotsd.
import assert from "node:assert/strict";
import { test } from "node:test";

import { CheerioCrawler, Configuration } from "@crawlee/cheerio";
import { RobotsdClient, isFullAnswer } from "@robotsd/client";
import { RobotsdAnswerFile, pacingStats, withRobotsd } from "@robotsd/client/crawlee";

import { assertFailsClosedUnlessFailOpen, assertSkipsWhatRobotsdDisallows, capturingLog, robotsdCrawl } from "./crawl.mjs";
import {
  HOSTILE_FLAGS,
  allowedPaths,
  hostilePaths,
  requestsTo,
  reservations,
  sitePaths,
  startHostileSite,
  startRobotsd,
  startSite,
} from "./helpers.mjs";

test("withRobotsd(CheerioCrawler) fetches what robotsd allows and skips the rest, failing none", async (t) => {
  const site = await startSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const crawl = await robotsdCrawl(t, { Crawler: CheerioCrawler, client, start: `${site.url}/`, robotsd: { ua: "ExampleBot" } });

  const allowed = await assertSkipsWhatRobotsdDisallows(crawl, { client, site, ua: "ExampleBot" });
  // 1 index + 30 pages + 5 under /private/public; 10 private and 5 PDFs refused, never fetched.
  assert.equal(allowed.length, 36);
  assert.ok(crawl.answers.every(([, answer]) => answer.crawl_delay === 0.01));
  // Crawlee logs the skip itself, as a warning; the crawler's log is named after CheerioCrawler.
  assert.ok(crawl.lines.some((l) => /^Skipping request .*\/private\/1 .*robots\.txt/.test(l.message)));
});

test("withRobotsd checks as respectRobotsTxtFile's userAgent, and respectRobotsTxtFile: false turns it off", async (t) => {
  const site = await startSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const crawl = await robotsdCrawl(t, {
    Crawler: CheerioCrawler,
    client,
    start: `${site.url}/`,
    crawlerOptions: { respectRobotsTxtFile: { userAgent: "OtherBot" } },
  });

  // OtherBot has a group of its own (Disallow: /p/): another set than the * group's.
  const allowed = await assertSkipsWhatRobotsdDisallows(crawl, { client, site, ua: "OtherBot" });
  assert.notDeepEqual(allowed, await allowedPaths(client, site, "ExampleBot"));
  assert.ok(crawl.answers.every(([, answer]) => answer.agent.tokens[0] === "OtherBot"));

  const off = await robotsdCrawl(t, {
    Crawler: CheerioCrawler,
    client,
    start: `${site.url}/`,
    crawlerOptions: { respectRobotsTxtFile: false },
  });
  assert.deepEqual(off.fetched, sitePaths().sort());
  assert.deepEqual(off.answers, [], "robotsd is not asked");
  assert.equal(site.hits("/robots.txt"), 1, "nor does Crawlee fetch robots.txt");
});

test("withRobotsd skips a disallowed start URL when it is added", async (t) => {
  const site = await startSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const crawl = await robotsdCrawl(t, {
    Crawler: CheerioCrawler,
    client,
    start: `${site.url}/private/1`,
    robotsd: { ua: "ExampleBot" },
  });
  assert.deepEqual(crawl.fetched, []);
  assert.deepEqual(crawl.skipped, [["/private/1", "robotsTxt"]]);
  assert.equal(crawl.stats.requestsFailed, 0);
  assert.deepEqual(site.pages(), []);
  // Crawlee's batch warning for addRequests.
  assert.ok(crawl.lines.some((l) => /skipped because they were disallowed/.test(l.message)));
});

test("the file withRobotsd hands Crawlee answers for its URL only, and has no sitemaps", async (t) => {
  const site = await startSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const Crawler = withRobotsd(CheerioCrawler, client, { ua: "ExampleBot" });
  const crawler = new Crawler({ requestHandler() {} }, new Configuration({ persistStorage: false }));
  assert.ok(crawler instanceof CheerioCrawler);
  assert.equal(Crawler.name, "CheerioCrawler");

  // Crawlee's own extension point, called as Crawlee calls it.
  const refused = await crawler.getRobotsTxtFileForUrl(`${site.url}/private/1`);
  assert.ok(refused instanceof RobotsdAnswerFile);
  assert.equal(refused.isAllowed(`${site.url}/private/1`, "*"), false);
  // A page's links: enqueued, and each asked about when its request runs.
  assert.equal(refused.isAllowed(`${site.url}/private/2`, "*"), true);
  assert.deepEqual(refused.getSitemaps(), []);
  assert.deepEqual(await refused.parseUrlsFromSitemaps(), []);
  assert.equal((await crawler.getRobotsTxtFileForUrl(`${site.url}/p/1`)).isAllowed(`${site.url}/p/1`), true);
  // robots.txt itself is always allowed, unasked.
  assert.equal((await crawler.getRobotsTxtFileForUrl(`${site.url}/robots.txt`)).allowed, true);
  assert.equal(site.hits("/robots.txt"), 1);
  assert.deepEqual(site.pages(), []);

  assert.throws(() => withRobotsd(class NotACrawler {}, client), TypeError);
});

test("withRobotsd fails closed when robotsd cannot answer, or fetches everything with failOpen", async (t) => {
  await assertFailsClosedUnlessFailOpen(t, { Crawler: CheerioCrawler, site: await startSite(t) });
});

test("a throwing onAnswer is logged, and the crawl goes on", async (t) => {
  const site = await startSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const { log, lines } = capturingLog();
  const fetched = [];
  const Crawler = withRobotsd(CheerioCrawler, client, {
    ua: "ExampleBot",
    onAnswer() {
      throw new Error("boom");
    },
  });
  const crawler = new Crawler(
    {
      log,
      async requestHandler({ request, enqueueLinks }) {
        fetched.push(new URL(request.url).pathname);
        await enqueueLinks();
      },
    },
    new Configuration({ persistStorage: false }),
  );
  const stats = await crawler.run([`${site.url}/`]);
  assert.deepEqual(fetched.sort(), await allowedPaths(client, site, "ExampleBot"));
  assert.equal(stats.requestsFailed, 0);
  assert.equal(lines.filter((l) => l.message === "robotsd: onAnswer failed: boom").length, sitePaths().length);
});


test("withRobotsd asks about the URLs handed to run() in one batch", async (t) => {
  const site = await startSite(t);
  const baseUrl = await startRobotsd(t);
  const client = new RobotsdClient({ baseUrl });
  const start = sitePaths().map((p) => site.url + p);
  const crawl = await robotsdCrawl(t, { Crawler: CheerioCrawler, client, start, robotsd: { ua: "ExampleBot" } });

  const gets = await requestsTo(baseUrl, "GET", "/v1/check");
  const reserved = await reservations(baseUrl, "reserved");
  // 51 URLs: one POST /v1/check, and no check of its own for any of them.
  assert.equal(await requestsTo(baseUrl, "POST", "/v1/check"), 1);
  const allowed = await allowedPaths(client, site, "ExampleBot");
  // Pacing (on by default) reserves each fetched page's slot right before its fetch, one
  // GET /v1/check?pace=true each (and one more for a slot the fetch would have been too late
  // for), and nothing for a refused URL; the batch reserved nothing.
  const late = pacingStats(client).lateSlots;
  assert.equal(gets, allowed.length + late);
  assert.equal(reserved, allowed.length + late);
  assert.deepEqual(crawl.failures, []);
  assert.deepEqual(crawl.fetched, allowed);
  assert.deepEqual(site.pages(), allowed, "the site saw exactly the allowed pages");
  // A refused start URL is skipped when it is added, and again when the index's links are
  // enqueued (Crawlee's own robots.txt support reports it there too): each refused URL, only.
  const refused = sitePaths().filter((p) => !allowed.includes(p)).sort();
  assert.deepEqual([...new Set(crawl.skipped.map(([path]) => path))].sort(), refused);
  assert.ok(crawl.skipped.every(([, reason]) => reason === "robotsTxt"));
  assert.equal(crawl.stats.requestsFailed, 0);
  assert.equal(site.hits("/robots.txt"), 1);
});

test("withRobotsd skips exactly the disallowed URLs of a batch robotsd cut at its bound", async (t) => {
  // 1,000 URLs handed over at once are asked about in one batch, whose answer reaches its bound
  // (8 MiB) on this site: the URLs past it get the verdict alone, which serves Crawlee as well.
  const site = await startHostileSite(t);
  const baseUrl = await startRobotsd(t, ...HOSTILE_FLAGS);
  const client = new RobotsdClient({ baseUrl });
  const urls = hostilePaths().map((p) => site.url + p);
  const answers = [];
  const skipped = [];
  const { log } = capturingLog();
  const Crawler = withRobotsd(CheerioCrawler, client, { ua: "a", onAnswer: (answer) => answers.push(answer) });
  const crawler = new Crawler(
    { log, requestHandler() {}, onSkippedRequest: ({ url, reason }) => skipped.push([url, reason]) },
    new Configuration({ persistStorage: false }),
  );
  await crawler.addRequests(urls);

  const disallowed = urls.filter((u) => u.startsWith(`${site.url}/d`));
  assert.deepEqual(
    skipped.map(([url]) => url).sort(),
    disallowed.sort(),
  );
  assert.ok(skipped.every(([, reason]) => reason === "robotsTxt"));
  assert.equal(answers.length, urls.length);
  const verdicts = answers.filter((a) => !isFullAnswer(a)).length;
  assert.ok(verdicts > 0 && verdicts < urls.length - 100, `${verdicts} verdicts alone`);
  // One batch, and no URL asked about again on its own.
  assert.equal(await requestsTo(baseUrl, "POST", "/v1/check"), 1);
  assert.equal(await requestsTo(baseUrl, "GET", "/v1/check"), 0);
  assert.equal(site.robotsHits(), 1);
});
