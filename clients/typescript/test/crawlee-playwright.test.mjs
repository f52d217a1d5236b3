import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { test } from "node:test";

import { PlaywrightCrawler } from "@crawlee/playwright";
import { RobotsdClient } from "@robotsd/client";

import { assertFailsClosedUnlessFailOpen, assertSkipsWhatRobotsdDisallows, playwrightCrawl, robotsdCrawl } from "./crawl.mjs";
import { allowedPaths, sitePaths, startRobotsd, startSite } from "./helpers.mjs";

const chromium = process.env.CHROMIUM || "/usr/bin/chromium";

test("Chromium is installed for PlaywrightCrawler", () => {
  assert.ok(existsSync(chromium), `${chromium} is missing: apt-get install chromium, or set CHROMIUM`);
});

test("withRobotsd(PlaywrightCrawler) fetches what robotsd allows and skips the rest, failing none", async (t) => {
  const site = await startSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const crawl = await robotsdCrawl(t, { Crawler: PlaywrightCrawler, client, start: `${site.url}/`, robotsd: { ua: "ExampleBot" } });

  const allowed = await assertSkipsWhatRobotsdDisallows(crawl, { client, site, ua: "ExampleBot" });
  assert.equal(allowed.length, 36);
});

test("withRobotsd(PlaywrightCrawler) fails closed when robotsd cannot answer, or fetches everything with failOpen", async (t) => {
  await assertFailsClosedUnlessFailOpen(t, { Crawler: PlaywrightCrawler, site: await startSite(t) });
});

test("PlaywrightCrawler through the hook fetches exactly what robotsd allows", async (t) => {
  const site = await startSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const crawl = await playwrightCrawl(t, { client, start: `${site.url}/`, hook: { ua: "ExampleBot" } });

  const allowed = await allowedPaths(client, site, "ExampleBot");
  assert.deepEqual(crawl.failures, []);
  assert.deepEqual(crawl.fetched, allowed);
  assert.deepEqual(site.pages(), allowed, "the browser requested exactly the allowed pages");
  assert.deepEqual(crawl.refused, sitePaths().filter((p) => !allowed.includes(p)).sort());
  assert.equal(allowed.length, 36);
  for (const path of crawl.refused) assert.equal(site.hits(path), 0, path);
  assert.equal(site.hits("/robots.txt"), 1, "robots.txt is fetched once, by robotsd; the crawler never does");
  assert.match(site.robotsAgents[0], /^robotsd\//);
  assert.ok(crawl.answers.length === 51 && crawl.answers.every((answer) => answer.crawl_delay === 0.01));
});

test("without a ua option, the hook checks as the browser's User-Agent", async (t) => {
  const site = await startSite(t);
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });
  const userAgent = "Mozilla/5.0 (compatible; OtherBot/1.0; +https://other.example/bot)";
  const crawl = await playwrightCrawl(t, { client, start: `${site.url}/`, userAgent });

  // OtherBot has a group of its own (Disallow: /p/): another set than the * group's.
  const allowed = await allowedPaths(client, site, "OtherBot");
  assert.notDeepEqual(allowed, await allowedPaths(client, site, "ExampleBot"));
  assert.deepEqual(crawl.failures, []);
  assert.deepEqual(crawl.fetched, allowed);
  assert.deepEqual(site.pages(), allowed);
  assert.ok(crawl.answers.every((answer) => answer.agent.tokens[0] === "OtherBot"));
  assert.equal(site.hits("/robots.txt"), 1);
});
