// Crawls of the loopback site with Crawlee's own crawlers: through withRobotsd, and through the
// hook (and the filter).
import assert from "node:assert/strict";
import { join } from "node:path";

import { CheerioCrawler, Configuration, Log, LogLevel, Logger, log } from "@crawlee/cheerio";
import { PlaywrightCrawler } from "@crawlee/playwright";
import { chromium } from "playwright";

import { RobotsdClient, UnavailableError } from "@robotsd/client";
import { DisallowedError, filterAllowed, robotsdPreNavigationHook, withRobotsd } from "@robotsd/client/crawlee";

import { allowedPaths, freePort, sitePaths, tempDir } from "./helpers.mjs";

// Crawlee's statistics would fill the test output; failures still show.
log.setLevel(log.LEVELS.WARNING);

/**
 * A Crawlee configuration of its own for one crawl: in memory, in a scratch directory, so that
 * crawls neither share a request queue nor leave storage behind.
 */
function configuration(t) {
  process.env.CRAWLEE_STORAGE_DIR = join(tempDir(t), "storage");
  return new Configuration({ persistStorage: false, purgeOnStart: true });
}

function pathOf(url) {
  return new URL(url).pathname;
}

function outcome() {
  const fetched = new Set();
  const refused = new Set();
  const failures = [];
  return {
    fetched,
    refused,
    failures,
    requestHandled(request) {
      fetched.add(pathOf(request.loadedUrl ?? request.url));
    },
    requestFailed(request, error) {
      if (error instanceof DisallowedError) {
        // The hook records the answer where a request handler (or this one) can read it.
        if (request.userData.robotsd?.allowed !== false) failures.push(`${request.url}: no verdict recorded`);
        refused.add(pathOf(request.url));
      } else {
        failures.push(`${request.url}: ${error.message}`);
      }
    },
    result() {
      return { fetched: [...fetched].sort(), refused: [...refused].sort(), failures };
    },
  };
}

/**
 * Crawls from `start` with CheerioCrawler, enqueueing every link of the site. With `filter`, the
 * links go through filterAllowed first (refused ones counted as refused); the hook guards all.
 */
export async function cheerioCrawl(t, { client, start, hook = {}, filter = null }) {
  const result = outcome();
  const answers = [];
  const crawler = new CheerioCrawler(
    {
      preNavigationHooks: [robotsdPreNavigationHook(client, { ...hook, onAnswer: (answer) => answers.push(answer) })],
      maxConcurrency: 4,
      async requestHandler({ request, enqueueLinks, $ }) {
        result.requestHandled(request);
        if (!filter) {
          await enqueueLinks({ strategy: "same-origin" });
          return;
        }
        const base = request.loadedUrl ?? request.url;
        const links = $("a[href]")
          .map((_, a) => new URL($(a).attr("href"), base).href)
          .get();
        const allowed = await filterAllowed(client, links, {
          ...filter,
          onRefused: (url) => result.refused.add(pathOf(url)),
        });
        await enqueueLinks({ urls: allowed, strategy: "same-origin" });
      },
      failedRequestHandler({ request }, error) {
        result.requestFailed(request, error);
      },
    },
    configuration(t),
  );
  const stats = await crawler.run([start]);
  return { ...result.result(), answers, stats };
}

/**
 * One throwaway CheerioCrawler request to the paced site's `/warm`, which it does not record. A
 * crawler process's first request through its HTTP client keeps the CPU busy for some
 * milliseconds (the header generator's first use): on a loaded machine, that can hold back the
 * site's thread in timestamping the measured crawl's first request.
 */
export async function warmUp(t, site) {
  const crawler = new CheerioCrawler({ requestHandler() {} }, configuration(t));
  await crawler.run([`${site.url}/warm`]);
}

/** PlaywrightCrawler's options for Debian's Chromium, headless, sending `userAgent` if given. */
function browserOptions(userAgent) {
  return {
    maxConcurrency: 2,
    headless: true,
    // The agent the hook reads from the page: a fingerprint would replace it with a made-up one.
    browserPoolOptions: { useFingerprints: false },
    launchContext: {
      launcher: chromium,
      userAgent,
      launchOptions: {
        executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
        headless: true,
        args: [
          "--no-sandbox",
          "--disable-gpu",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--no-first-run",
        ],
      },
    },
  };
}

/** Crawls from `start` with PlaywrightCrawler and Debian's Chromium, through the hook. */
export async function playwrightCrawl(t, { client, start, hook = {}, userAgent }) {
  const result = outcome();
  const answers = [];
  const crawler = new PlaywrightCrawler(
    {
      ...browserOptions(userAgent),
      preNavigationHooks: [robotsdPreNavigationHook(client, { ...hook, onAnswer: (answer) => answers.push(answer) })],
      async requestHandler({ request, enqueueLinks }) {
        result.requestHandled(request);
        await enqueueLinks({ strategy: "same-origin" });
      },
      failedRequestHandler({ request }, error) {
        result.requestFailed(request, error);
      },
    },
    configuration(t),
  );
  const stats = await crawler.run([start]);
  return { ...result.result(), answers, stats };
}

/** A Crawlee log that keeps its lines (errors also go to stderr). */
export function capturingLog() {
  const lines = [];
  class Capture extends Logger {
    _log(level, message, data) {
      lines.push({ level, message, data });
      if (level <= LogLevel.ERROR) console.error(message, data ?? "");
    }
  }
  return { log: new Log({ level: LogLevel.INFO, logger: new Capture() }), lines };
}

/**
 * Crawls from `start` (a URL, or several) with `withRobotsd(Crawler, client, robotsd)`, a CheerioCrawler or a
 * PlaywrightCrawler, enqueueing every link of the site. Returns what the request handler saw
 * (`fetched`, `unrecorded`: fetched requests without the answer in userData, and `paces`: each
 * fetched request's path and slot, `userData.robotsd.pace`), what
 * onSkippedRequest saw (`skipped`), what onAnswer and onError saw, the failures (messages, and
 * `failedErrors`: each failed request's path and error), the crawler's
 * log lines, its statistics and the crawler itself. `onContext(context)`, if given, sees each
 * request handler's context first.
 */
export async function robotsdCrawl(t, { Crawler, client, start, robotsd = {}, crawlerOptions = {}, onContext }) {
  const fetched = new Set();
  const unrecorded = [];
  const paces = [];
  const skipped = [];
  const answers = [];
  const errors = [];
  const failures = [];
  const failedErrors = [];
  const { log: crawlerLog, lines } = capturingLog();
  const RobotsdCrawler = withRobotsd(Crawler, client, {
    ...robotsd,
    onAnswer: (answer, url) => answers.push([pathOf(url), answer]),
    onError: (error, url) => errors.push([pathOf(url), error]),
  });
  const crawler = new RobotsdCrawler(
    {
      ...(Crawler === PlaywrightCrawler ? browserOptions() : { maxConcurrency: 4 }),
      ...crawlerOptions,
      log: crawlerLog,
      onSkippedRequest: ({ url, reason }) => skipped.push([pathOf(url), reason]),
      async requestHandler(context) {
        const { request, enqueueLinks } = context;
        await onContext?.(context);
        fetched.add(pathOf(request.loadedUrl ?? request.url));
        if (request.userData.robotsd?.allowed !== true) unrecorded.push(pathOf(request.url));
        paces.push([pathOf(request.url), request.userData.robotsd?.pace ?? null]);
        await enqueueLinks({ strategy: "same-origin" });
      },
      failedRequestHandler({ request }, error) {
        failures.push(`${request.url}: ${error.message}`);
        failedErrors.push([pathOf(request.url), error]);
      },
    },
    configuration(t),
  );
  const stats = await crawler.run(Array.isArray(start) ? start : [start]);
  return {
    fetched: [...fetched].sort(),
    unrecorded,
    paces,
    skipped: skipped.sort(([a], [b]) => a.localeCompare(b)),
    answers,
    errors,
    failures,
    failedErrors,
    lines,
    stats,
    crawler,
  };
}

/**
 * What every crawl through withRobotsd must hold: it fetched exactly what robotsd allows `ua`
 * (asked of robotsd in one batch), each page once, and skipped the rest (reason `robotsTxt`, each
 * once), failing none; robotsd was asked once per URL; every fetched request carries its answer;
 * robots.txt was fetched once, by robotsd, and never by the crawler. Returns the allowed paths.
 */
export async function assertSkipsWhatRobotsdDisallows(crawl, { client, site, ua }) {
  const allowed = await allowedPaths(client, site, ua);
  const refused = sitePaths().filter((p) => !allowed.includes(p)).sort();
  assert.deepEqual(crawl.failures, []);
  assert.deepEqual(crawl.errors, []);
  assert.deepEqual(crawl.fetched, allowed);
  assert.deepEqual(site.pages(), allowed, "the site saw exactly the allowed pages");
  for (const path of allowed) assert.equal(site.hits(path), 1, `${path} fetched once`);
  assert.ok(refused.length > 0, "the site has pages robotsd refuses");
  assert.deepEqual(
    crawl.skipped,
    refused.map((path) => [path, "robotsTxt"]),
    "onSkippedRequest saw each refused URL, once",
  );
  assert.equal(crawl.stats.requestsFailed, 0, "a skipped request is not a failed one");
  assert.equal(crawl.stats.requestsFinished, allowed.length);
  assert.deepEqual(crawl.unrecorded, [], "request.userData.robotsd holds each fetched request's answer");
  assert.deepEqual(
    crawl.answers.map(([path]) => path).sort(),
    sitePaths().sort(),
    "robotsd was asked once about each URL",
  );
  assert.equal(site.hits("/robots.txt"), 1, "robots.txt is fetched once, by robotsd; the crawler never does");
  assert.match(site.robotsAgents[0], /^robotsd\//);
  // robotsd's reason and rule line are logged for each refused URL.
  for (const [path, answer] of crawl.answers) {
    if (answer.allowed) continue;
    const line = crawl.lines.find((l) => l.message.includes(`${site.url}${path} is disallowed`));
    assert.ok(line, `no log line for ${path}`);
    assert.match(line.message, new RegExp(`by robots\\.txt line ${answer.rule.line} \\(disallow: `));
    assert.deepEqual(line.data, { reason: answer.reason, line: answer.rule.line });
  }
  return allowed;
}

/**
 * What every crawler class through withRobotsd must do with robotsd down: fail closed (the start
 * URL skipped, nothing fetched, a warning naming the error, onError told), and with failOpen
 * fetch everything unchecked; never fetch robots.txt itself.
 */
export async function assertFailsClosedUnlessFailOpen(t, { Crawler, site }) {
  const down = new RobotsdClient({ baseUrl: `http://127.0.0.1:${await freePort()}`, timeoutMs: 2_000 });

  const closed = await robotsdCrawl(t, { Crawler, client: down, start: `${site.url}/`, robotsd: { ua: "ExampleBot" } });
  assert.deepEqual(closed.fetched, []);
  assert.deepEqual(site.pages(), [], "nothing was fetched unchecked");
  assert.deepEqual(closed.skipped, [["/", "robotsTxt"]]);
  assert.equal(closed.stats.requestsFailed, 0);
  assert.ok(closed.errors.length > 0 && closed.errors.every(([path, error]) => path === "/" && error instanceof UnavailableError));
  const warning = closed.lines.find((l) => l.message.startsWith("robotsd could not check"));
  assert.match(warning?.message ?? "", /, skipping it \(fail closed\): .*ECONNREFUSED/);

  const open = await robotsdCrawl(t, { Crawler, client: down, start: `${site.url}/`, robotsd: { ua: "ExampleBot", failOpen: true } });
  assert.deepEqual(open.failures, []);
  assert.deepEqual(open.fetched, sitePaths().sort(), "failOpen fetches everything, unchecked");
  assert.deepEqual(open.skipped, []);
  assert.equal(open.unrecorded.length, sitePaths().length, "no answer to record");
  assert.ok(open.lines.some((l) => /could not check .*, fetching it unchecked \(failOpen\)/.test(l.message)));
  assert.equal(site.hits("/robots.txt"), 0, "the crawler never fetches robots.txt, even with robotsd down");
}
