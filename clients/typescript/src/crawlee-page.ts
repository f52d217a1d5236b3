/**
 * The page answer in Crawlee: after each response a crawler let through, robotsd is asked about
 * the page (`POST /v1/page`, {@link RobotsdClient.page}), its answer is put on the crawling
 * context as `robotsdPage`, and the `enqueueLinks` of a page that says `nofollow` enqueues
 * nothing. {@link withRobotsd}'s `page` option does it before each request handler runs;
 * {@link robotsdPage} is the piece for setups of your own. Exported by `@robotsd/client/crawlee`.
 *
 * A failure to get the answer (robotsd down, a problem with the page) never fails the request:
 * it is logged as a warning, `robotsdPage` is null, and `enqueueLinks` is left as it was.
 *
 * @packageDocumentation
 */
import type { PageBody, PageInput, PageResponse, PageRule, RobotsdClient } from "./index.js";
import { isHtmlType, pageHeaders } from "./page.js";

/**
 * What a request handler finds on its crawling context with {@link withRobotsd}'s `page` option
 * (or after {@link robotsdPage}): robotsd's answer about the page, or null when there is none
 * (robotsd could not be asked, or the request had no response: `skipNavigation`, a
 * `BasicCrawler`). Crawlee's context types do not know it: read it as
 * `(context as RobotsdPageContext).robotsdPage`.
 */
export interface RobotsdPageContext {
  robotsdPage?: PageResponse | null;
}

/**
 * The parts of a Crawlee crawling context the page answer uses. HTTP crawlers (CheerioCrawler,
 * HttpCrawler, ...) have `response` (got's: `rawHeaders`, `headers`), `body` and `contentType`;
 * browser crawlers have `response` (Playwright's or Puppeteer's: `headersArray()`, `headers()`)
 * and `page` (`content()`).
 */
export interface PageContext extends RobotsdPageContext {
  request: { url: string; loadedUrl?: string | null; skipNavigation?: boolean };
  response?: unknown;
  body?: unknown;
  contentType?: { type?: string; encoding?: string } | null;
  page?: unknown;
  enqueueLinks?: (...args: any[]) => Promise<unknown>;
  crawler?: object;
  log?: { info?(message: string, data?: Record<string, unknown>): void; warning?(message: string): void };
}

/** Options of {@link robotsdPage}. */
export interface RobotsdPageOptions {
  /** The agent(s) the page's rules are read for: your robots.txt product token. Default: `Mozilla/5.0`. */
  ua?: string | string[];
  /** Sees each answer, before the request handler goes on. An error it throws is logged, and changes nothing. */
  onPage?: (answer: PageResponse, url: string) => void | Promise<void>;
}

/** What the page answers did for one crawler, in this process ({@link pageStats}). */
export interface PageStats {
  /** Pages robotsd answered about. */
  answered: number;
  /** Pages it could not answer about (each logged as a warning): they went on without an answer. */
  unanswered: number;
  /** Answered pages that say `nofollow` (or `none`) for the crawler. */
  nofollow: number;
  /** Calls of `enqueueLinks` on those pages, each of which enqueued nothing. */
  enqueueLinksSkipped: number;
}

const stats = new WeakMap<object, PageStats>();
/** The stats of contexts without a crawler. */
const detached: object = {};

/** What the page answers did for `crawler` (a crawler of {@link withRobotsd} with `page: true`, or one using {@link robotsdPage}). */
export function pageStats(crawler: object): PageStats {
  return { ...statsOf(crawler) };
}

function statsOf(crawler: object | undefined): PageStats {
  const key = crawler ?? detached;
  let found = stats.get(key);
  if (!found) stats.set(key, (found = { answered: 0, unanswered: 0, nofollow: 0, enqueueLinksSkipped: 0 }));
  return found;
}

/** The agent when none is given: the integration's `DEFAULT_AGENT`. */
const DEFAULT_PAGE_AGENT = "Mozilla/5.0";

/**
 * Asks robotsd about the page of a crawling context (call it first in your request handler), puts
 * the answer on the context as `robotsdPage` ({@link RobotsdPageContext}), and, when the page
 * says `nofollow` (or `none`) for the agent, makes the context's `enqueueLinks` enqueue nothing
 * (each such call is logged, and counted in {@link pageStats}). Resolves to the answer, or to
 * null when the request had no response, or robotsd could not answer: that is logged as a
 * warning and never throws, so that the request goes on without the answer.
 *
 * {@link withRobotsd}'s `page` option does this before each request handler runs.
 */
export async function robotsdPage(
  client: RobotsdClient,
  context: PageContext,
  options: RobotsdPageOptions = {},
): Promise<PageResponse | null> {
  return answerPage(client, context, {
    ua: options.ua ?? DEFAULT_PAGE_AGENT,
    onPage: options.onPage,
    log: context.log,
  });
}

/** How {@link answerPage} is told what to do. */
export interface AnswerPageOptions {
  ua: string | string[];
  onPage?: ((answer: PageResponse, url: string) => void | Promise<void>) | undefined;
  log?: PageContext["log"] | undefined;
}

/**
 * {@link robotsdPage}, with the crawler's own log (withRobotsd's).
 *
 * @internal
 */
export async function answerPage(client: RobotsdClient, context: PageContext, options: AnswerPageOptions): Promise<PageResponse | null> {
  const { log } = options;
  context.robotsdPage = null;
  const counts = statsOf(context.crawler);
  let input: Omit<PageInput, "ua"> | undefined;
  let answer: PageResponse;
  try {
    input = await pageOf(context);
    if (!input) return null;
    answer = await client.page({ ...input, ua: options.ua });
  } catch (error) {
    counts.unanswered++;
    const url = input?.url ?? context.request.loadedUrl ?? context.request.url;
    log?.warning?.(`robotsd could not answer about the page ${url}, going on without its rules: ${messageOf(error)}`);
    return null;
  }
  counts.answered++;
  context.robotsdPage = answer;
  const url = input.url;
  try {
    await options.onPage?.(answer, url);
  } catch (error) {
    log?.warning?.(`robotsd: onPage failed: ${messageOf(error)}`);
  }
  if (answer.robots?.follow === false) {
    counts.nofollow++;
    const where = nofollowSource(answer.robots.rules);
    context.enqueueLinks = async () => {
      counts.enqueueLinksSkipped++;
      log?.info?.(`robotsd: enqueueLinks enqueued nothing: ${url} says nofollow${where ? ` (${where})` : ""}`, {
        url,
        nofollow: where ?? null,
      });
      // What Crawlee's own enqueueLinks resolves to when it enqueued nothing.
      return { processedRequests: [], unprocessedRequests: [] };
    };
  }
  return answer;
}

/**
 * What the context's response was: its URL (after redirects), headers as received, and document.
 * Undefined when there is no response.
 */
async function pageOf(context: PageContext): Promise<Omit<PageInput, "ua"> | undefined> {
  const { request } = context;
  const response = context.response as Record<string, unknown> | null | undefined;
  if (request.skipNavigation || !response || typeof response !== "object") return undefined;
  const responseUrl = call(response, "url") ?? response.url;
  const url = request.loadedUrl || (typeof responseUrl === "string" && responseUrl) || request.url;
  const headers = await headersOf(response);
  const page = context.page as { content?: () => Promise<unknown> } | undefined;
  if (page && typeof page.content === "function") {
    // A browser crawler: the page as the browser rendered it (`page.content()`), text. Meta tags a
    // script added count, as they do for Google, which renders pages; a tag's `line` is its line
    // in that serialization. Asked for only when the response says HTML.
    if (!isHtmlType(lastHeader(headers, "content-type"))) return { url, headers };
    const content = await page.content();
    return { url, headers, body: typeof content === "string" ? content : null };
  }
  return { url, headers, body: bodyOf(context), contentType: contentTypeOf(context, headers) };
}

/**
 * An HTTP crawler's document, as the crawler read it: CheerioCrawler's `body` is text (Crawlee
 * decoded it, in the header's charset, else UTF-8), HttpCrawler's a Buffer in `contentType.encoding`
 * (Crawlee re-encodes other charsets to UTF-8), so it is decoded so too. The text goes as `html`:
 * robotsd reads what the crawler's own parser read.
 */
function bodyOf(context: PageContext): PageBody | null {
  const { body } = context;
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) {
    const encoding = context.contentType?.encoding;
    const buffer = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    return buffer.toString(encoding && Buffer.isEncoding(encoding) ? encoding : "utf8");
  }
  return null;
}

/** The media type Crawlee went by (from the header, else from the URL's extension), when the headers say none. */
function contentTypeOf(context: PageContext, headers: ReadonlyArray<[string, string]>): string | undefined {
  if (lastHeader(headers, "content-type") !== undefined) return undefined;
  const type = context.contentType?.type;
  return typeof type === "string" && type ? type : undefined;
}

/**
 * The response's headers, in the most faithful form it has: Playwright's `headersArray()` and
 * Node's `rawHeaders` keep each field line in order; `headers()` (Playwright) and `headers`
 * (got, Node) join repeated ones.
 */
async function headersOf(response: Record<string, unknown>): Promise<Array<[string, string]>> {
  let headers: unknown;
  if (typeof response.headersArray === "function") headers = await (response.headersArray as () => Promise<unknown>).call(response);
  else if (Array.isArray(response.rawHeaders)) headers = response.rawHeaders;
  else headers = call(response, "headers") ?? response.headers;
  return pageHeaders(headers && typeof headers === "object" ? (headers as Parameters<typeof pageHeaders>[0]) : null);
}

function call(target: Record<string, unknown>, name: string): unknown {
  const method = target[name];
  return typeof method === "function" ? (method as () => unknown).call(target) : undefined;
}

function lastHeader(headers: ReadonlyArray<[string, string]>, name: string): string | undefined {
  let found: string | undefined;
  for (const [key, value] of headers) if (key.toLowerCase() === name) found = value;
  return found;
}

/** Where the nofollow came from: `X-Robots-Tag header 2`, `meta line 7` (for `examplebot`). */
function nofollowSource(rules: readonly PageRule[]): string | undefined {
  const places: string[] = [];
  for (const rule of rules) {
    if (rule.ignored || !/^\s*(nofollow|none)\s*$/i.test(rule.rule)) continue;
    const where = typeof rule.header === "number" ? `X-Robots-Tag header ${rule.header}` : `meta line ${rule.line}`;
    places.push(rule.agent ? `${where}, for ${rule.agent}` : where);
  }
  return places.length ? places.join("; ") : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
