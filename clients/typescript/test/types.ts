// Compiled, never run (`npm run typecheck`): withRobotsd keeps the crawler classes' own types, and
// the hook and the filter fit Crawlee's, though the package imports nothing from Crawlee.
import { CheerioCrawler } from "@crawlee/cheerio";
import { PlaywrightCrawler } from "@crawlee/playwright";

import {
  RobotsdClient,
  isFullAnswer,
  isProblem,
  type BatchResult,
  type CheckAnswer,
  type CheckResponse,
  type FeedbackResult,
  type Pace,
  type PageResponse,
  type PageRule,
  type Problem,
  type Report,
  type RslTerms,
  type Sign,
  isSigningProblem,
  type VerdictResponse,
} from "../src/index.js";
import {
  DisallowedError,
  filterAllowed,
  robotsdErrorHandler,
  robotsdPostNavigationHook,
  robotsdPreNavigationHook,
  pageStats,
  robotsdPage,
  UnsignedError,
  withRobotsd,
  type RobotsdPageContext,
  type RobotsdVerdict,
} from "../src/crawlee.js";

const client = new RobotsdClient({ baseUrl: "http://127.0.0.1:8080" });

// withRobotsd: the subclass is the crawler class itself, with its constructor's option types.
const RobotsdCheerioCrawler = withRobotsd(CheerioCrawler, client, {
  ua: "ExampleBot",
  onAnswer(answer) {
    answer satisfies CheckAnswer;
    answer.allowed satisfies boolean;
    // The rest of the answer only when it is in full (not cut from a batch at its bound).
    if (isFullAnswer(answer)) answer.crawl_delay satisfies number | null | undefined;
    // @ts-expect-error: a verdict alone has no crawl_delay
    answer.crawl_delay;
  },
  onError(_error, url) {
    url satisfies string;
  },
});
RobotsdCheerioCrawler satisfies typeof CheerioCrawler;
const cheerio = new RobotsdCheerioCrawler({
  respectRobotsTxtFile: { userAgent: "ExampleBot" },
  onSkippedRequest({ url, reason }) {
    url satisfies string;
    reason satisfies string;
  },
  async requestHandler({ request, $, enqueueLinks }) {
    $("title").text() satisfies string;
    (request.userData.robotsd as RobotsdVerdict).rule?.line satisfies number | undefined;
    (request.userData.robotsd as RobotsdVerdict).pace?.interval_ms satisfies number | undefined;
    await enqueueLinks({ strategy: "same-origin" });
  },
});
cheerio satisfies CheerioCrawler;
// @ts-expect-error: CheerioCrawler's options are still checked
new RobotsdCheerioCrawler({ requestHandler: async () => {}, noSuchOption: true });

// Pacing is on by default; one option turns it off.
withRobotsd(CheerioCrawler, client, { ua: "ExampleBot", pace: false }) satisfies typeof CheerioCrawler;
// @ts-expect-error: pace is a boolean
withRobotsd(CheerioCrawler, client, { pace: "off" });

const RobotsdPlaywrightCrawler = withRobotsd(PlaywrightCrawler, client);
new RobotsdPlaywrightCrawler({
  launchContext: { launchOptions: { executablePath: "/usr/bin/chromium", headless: true } },
  async requestHandler({ page, enqueueLinks }) {
    (await page.title()) satisfies string;
    await enqueueLinks();
  },
}) satisfies PlaywrightCrawler;
// @ts-expect-error: PlaywrightCrawler's options are still checked
new RobotsdPlaywrightCrawler({ requestHandler: async ({ $ }) => $ });

// @ts-expect-error: not a crawler class
withRobotsd(class NotACrawler {}, client);

// The hook and the filter, for setups of your own.
const hook = robotsdPreNavigationHook(client, { ua: "ExampleBot" });

new CheerioCrawler({
  preNavigationHooks: [hook],
  async requestHandler({ request, enqueueLinks, $ }) {
    const verdict = request.userData.robotsd as RobotsdVerdict;
    verdict.crawlDelay satisfies number | null;
    const links = $("a[href]")
      .map((_, a) => new URL($(a).attr("href") ?? "", request.loadedUrl ?? request.url).href)
      .get();
    await enqueueLinks({ urls: await filterAllowed(client, links, { ua: "ExampleBot" }) });
  },
  failedRequestHandler(_context, error) {
    if (error instanceof DisallowedError && isFullAnswer(error.answer)) error.answer.rule?.line satisfies number | undefined;
  },
});

new PlaywrightCrawler({ preNavigationHooks: [hook], requestHandler: async () => {} });

// The hooks that report what the sites answered fit Crawlee's own hook and handler types.
const reportFailure = robotsdErrorHandler(client);
new CheerioCrawler({
  preNavigationHooks: [robotsdPreNavigationHook(client, { ua: "ExampleBot", pace: false })],
  postNavigationHooks: [robotsdPostNavigationHook(client)],
  errorHandler: reportFailure,
  async failedRequestHandler(context, error) {
    await reportFailure(context, error);
  },
  async requestHandler() {},
});
new PlaywrightCrawler({
  preNavigationHooks: [hook],
  postNavigationHooks: [robotsdPostNavigationHook(client, { pace: true })],
  errorHandler: reportFailure,
  requestHandler: async () => {},
});

// Pacing in the client: a slot with the check, the wait for it, and reports.
const paced = await client.check("https://example.com/", "ExampleBot", { pace: true });
const pace: Pace | null | undefined = paced.pace;
if (pace) {
  pace.wait_ms satisfies number;
  pace.outcome satisfies "reserved" | "deferred";
  pace.interval_source satisfies "crawl_delay" | "default" | "pushback";
}
(await client.reserve("https://example.com/", ["ExampleBot"])).pace?.not_before satisfies string | undefined;
const sent: Report[] = [
  { url: "https://example.com/a", status: 429, retry_after: "3" },
  { url: "https://example.com/b", timeout: true },
];
const fed: Array<FeedbackResult | Problem> = await client.feedback(sent);
for (const result of fed) {
  if (isProblem(result)) result.type satisfies string;
  else result.pace.slowdown satisfies number;
}

const results: BatchResult[] = await client.checkMany(["https://example.com/"], "ExampleBot");
for (const result of results) {
  if (isProblem(result)) result.type satisfies string;
  else if (isFullAnswer(result)) {
    result satisfies CheckResponse;
    result.rule?.truncated satisfies boolean | null | undefined;
    result.group?.agents_total satisfies number | null | undefined;
    result.group?.truncated satisfies boolean | null | undefined;
    result.usage?.truncated satisfies boolean | null | undefined;
  } else {
    // Past the bound of a batch's answer: the verdict alone.
    result satisfies VerdictResponse;
    result.allowed satisfies boolean;
    result.reason satisfies string;
  }
}
// @ts-expect-error: an item of a batch may be the verdict alone
const _full: CheckResponse[] = await client.checkMany([], "ExampleBot");
(await client.evaluate({ robotsTxt: "", urls: [], ua: "a" })).truncated satisfies boolean | null | undefined;

// RSL license terms (`--rsl`): one entry per License: line, each with a typed state.
const licensed = await client.check("https://example.com/articles/1", "ExampleBot");
const terms: RslTerms[] | null | undefined = licensed.usage?.rsl;
for (const report of terms ?? []) {
  report.state satisfies "covered" | "not_covered" | "fetch_failed" | "invalid" | "refused" | "not_fetched";
  for (const content of report.contents) {
    content.server satisfies string | null | undefined;
    content.licenses[0]?.permits.usage satisfies string[] | undefined;
  }
}

// After the fetch: the page's own rules (POST /v1/page), from bytes or text, with headers in any form.
const pageAnswer: PageResponse = await client.page({
  url: "https://example.com/a",
  ua: "ExampleBot",
  headers: [["X-Robots-Tag", "noindex"]],
  body: new Uint8Array(0),
});
pageAnswer.allowed satisfies boolean;
pageAnswer.document_cut satisfies boolean | null | undefined;
pageAnswer.robots?.follow satisfies boolean | undefined;
pageAnswer.robots?.max_snippet satisfies number | null | undefined;
const firstRule: PageRule | undefined = pageAnswer.robots?.rules[0];
firstRule?.header satisfies number | null | undefined;
pageAnswer.usage?.content_usage_header.headers satisfies number[] | undefined;
pageAnswer.usage?.tdm.reservation satisfies boolean | null | undefined;
await client.page({ url: "https://example.com/a", ua: ["ExampleBot"], headers: ["X-Robots-Tag", "noindex"], body: "<p>" });
await client.page({ url: "https://example.com/a", ua: "ExampleBot", headers: [{ name: "X-Robots-Tag", value: "noindex" }] });
await client.page({ url: "https://example.com/a", ua: "ExampleBot", headers: new Headers(), body: new ArrayBuffer(0), contentType: "text/html" });
await client.page({ url: "https://example.com/a", ua: "ExampleBot", headers: { "x-robots-tag": "noindex", "set-cookie": ["a", "b"] } });
// @ts-expect-error: a body is bytes or text
await client.page({ url: "https://example.com/a", ua: "ExampleBot", body: 1 });

// The page option of withRobotsd, and the answer on the crawling context.
const PagedCrawler = withRobotsd(CheerioCrawler, client, {
  ua: "ExampleBot",
  page: true,
  onPage(answer, url) {
    answer.robots?.index satisfies boolean | undefined;
    url satisfies string;
  },
});
const paged = new PagedCrawler({
  async requestHandler(context) {
    const { robotsdPage: answer } = context as typeof context & RobotsdPageContext;
    if (answer?.robots?.index === false) return;
    await context.enqueueLinks();
  },
});
pageStats(paged).enqueueLinksSkipped satisfies number;
// @ts-expect-error: page is a boolean
withRobotsd(CheerioCrawler, client, { page: "yes" });
new PlaywrightCrawler({
  async requestHandler(context) {
    (await robotsdPage(client, context, { ua: "ExampleBot" }))?.robots?.follow satisfies boolean | undefined;
  },
});
new CheerioCrawler({
  async requestHandler(context) {
    await robotsdPage(client, context, { ua: "ExampleBot" });
  },
});

// Web Bot Auth: one option signs every request of the integration; the client's checks ask for it.
withRobotsd(CheerioCrawler, client, { ua: "ExampleBot", sign: true }) satisfies typeof CheerioCrawler;
withRobotsd(PlaywrightCrawler, client, { ua: "ExampleBot", sign: true, pace: false }) satisfies typeof PlaywrightCrawler;
// @ts-expect-error: sign is a boolean
withRobotsd(CheerioCrawler, client, { sign: "GET" });
new CheerioCrawler({
  preNavigationHooks: [robotsdPreNavigationHook(client, { ua: "ExampleBot", sign: true })],
  failedRequestHandler(_context, error) {
    if (error instanceof UnsignedError) error.url satisfies string;
    if (isSigningProblem(error)) error.type satisfies string;
  },
});
const signed: Sign | null | undefined = (await client.check("https://example.com/", "ExampleBot", { sign: "GET" })).sign;
signed?.headers["Signature-Input"] satisfies string | undefined;
(await client.reserve("https://example.com/", "ExampleBot", { sign: "HEAD" })).sign?.expires satisfies string | undefined;
(await client.checkMany(["https://example.com/"], "ExampleBot", { sign: "GET" }))[0] satisfies BatchResult | undefined;
(await client.sign({ url: "https://example.com/next", ua: "ExampleBot", method: "HEAD", pace: true })).sign?.url satisfies
  | string
  | undefined;
// @ts-expect-error: robotsd signs GET and HEAD only
await client.check("https://example.com/", "ExampleBot", { sign: "POST" });
