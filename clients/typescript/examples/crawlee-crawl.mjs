#!/usr/bin/env node
// A CheerioCrawler that asks robotsd about every URL, for the end-to-end test the crawlers of
// every ecosystem share:
//
//   node examples/crawlee-crawl.mjs --robotsd http://127.0.0.1:PORT --start http://127.0.0.1:SITEPORT/ --ua AGENT [--no-pace] [--sign]
//
// It crawls from --start, following every <a href> on the same origin (each page once), with
// withRobotsd(CheerioCrawler): Crawlee's own robots.txt support, answered by robotsd, so that a
// disallowed URL is skipped before anything is sent to the site. When done it prints one line of
// JSON to stdout, {"fetched": [...], "disallowed": [...]}: the paths fetched and the paths robotsd
// refused, sorted. Each fetch waits for the slot robotsd reserves for it, and the site's pushback is
// reported to robotsd (withRobotsd's default); --no-pace asks robotsd for verdicts only, and the
// crawler keeps the crawl-delay by itself. --sign sends each request signed with the fleet's key
// (Web Bot Auth: robotsd run with --wba-keys signs it, redirect hops included). Logs go to stderr.
// Exit status 0, or 1 when a page could not be crawled (robotsd unreachable included: the crawler
// fails closed; with --sign, a robotsd that cannot sign too), 2 for a usage error.
//
// Run `npm ci && npm run build` in clients/typescript first.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

import { CheerioCrawler, Configuration } from "@crawlee/cheerio";
import { RobotsdClient } from "@robotsd/client";
import { withRobotsd } from "@robotsd/client/crawlee";

// Crawlee writes its info lines with console.log: stdout is kept for the result line alone.
console.log = console.error;

const usage = "usage: crawlee-crawl.mjs --robotsd URL --start URL --ua AGENT [--no-pace] [--sign]";
let options;
try {
  options = parseArgs({
    options: {
      robotsd: { type: "string" },
      start: { type: "string" },
      ua: { type: "string" },
      "no-pace": { type: "boolean" },
      sign: { type: "boolean" },
    },
    strict: true,
  }).values;
} catch (error) {
  console.error(`${error.message}\n${usage}`);
  process.exit(2);
}
if (!options.robotsd || !options.start || !options.ua) {
  console.error(usage);
  process.exit(2);
}
const { ua } = options;
const start = new URL(options.start);

const client = new RobotsdClient({ baseUrl: options.robotsd });
const fetched = new Set();
const disallowed = new Set();
let failures = 0;

// Crawlee keeps its queue in memory (persistStorage: false); the directory only keeps it from
// touching ./storage wherever this is run.
const storage = mkdtempSync(join(tmpdir(), "crawlee-crawl-"));
process.env.CRAWLEE_STORAGE_DIR = storage;

const Crawler = withRobotsd(CheerioCrawler, client, {
  ua,
  pace: !options["no-pace"],
  sign: Boolean(options.sign),
  onAnswer: (answer, url) => {
    if (!answer.allowed) disallowed.add(new URL(url).pathname);
  },
  // The URL is skipped (fail closed); the crawl did not do what was asked.
  onError: () => failures++,
});

const crawler = new Crawler(
  {
    preNavigationHooks: [
      // Sites see the crawler's own name, as robots.txt addresses it.
      (_context, gotOptions) => {
        gotOptions.headers = { ...gotOptions.headers, "user-agent": ua };
      },
    ],
    // Every allowed URL counts as fetched, whatever it holds.
    additionalMimeTypes: ["*/*"],
    async requestHandler({ request, $, enqueueLinks }) {
      fetched.add(new URL(request.loadedUrl ?? request.url).pathname);
      if (typeof $ !== "function") return; // not HTML: no links to follow
      // Links to other origins never become requests: robotsd is not asked about them (nor
      // fetches their robots.txt).
      await enqueueLinks({ strategy: "same-origin" });
    },
    failedRequestHandler() {
      failures++;
    },
  },
  new Configuration({ persistStorage: false }),
);

try {
  await crawler.run([start.href]);
} finally {
  rmSync(storage, { recursive: true, force: true });
}

const sorted = (set) => [...set].sort();
process.stdout.write(`${JSON.stringify({ fetched: sorted(fetched), disallowed: sorted(disallowed) })}\n`);
process.exitCode = failures ? 1 : 0;
