/**
 * Crawlee integration. {@link withRobotsd} makes any Crawlee crawler class ask robotsd instead of
 * fetching robots.txt itself, through Crawlee's own robots.txt support: a disallowed request is
 * skipped, not failed. {@link robotsdPreNavigationHook} and {@link filterAllowed} are the pieces
 * for setups of your own.
 *
 * Nothing here imports Crawlee: everything is typed by the few members it uses, so it fits
 * CheerioCrawler, PlaywrightCrawler and any other crawler of Crawlee 3 without tying this
 * package to one Crawlee version.
 *
 * @packageDocumentation
 */
import {
  type CheckResponse,
  type Problem,
  type RobotsdClient,
  type Rule,
  ProblemError,
  RobotsdError,
  isProblem,
} from "./index.js";

/** Options of {@link withRobotsd}, {@link robotsdPreNavigationHook} and {@link filterAllowed}. */
export interface RobotsdCrawleeOptions {
  /**
   * The agent to check as: your crawler's robots.txt product token (`ExampleBot`), or several.
   * Setting it is best: robots.txt groups name crawlers, not browsers. By default the hook reads
   * the request's `User-Agent` header, else the navigation's, else the browser's
   * (`navigator.userAgent`); an HTTP crawler whose header is generated at send time has none to
   * read, and is checked as {@link DEFAULT_AGENT}, as {@link filterAllowed} always is by default.
   */
  ua?: string | string[];
  /**
   * When robotsd cannot answer (down, timed out, or a problem with the URL), let the request
   * through. By default (`false`) it is not fetched: a crawler never fetches what it could not check.
   */
  failOpen?: boolean;
  /** Sees every answer, allowed or not, before the request goes on: its `crawl_delay`, `usage`, ... */
  onAnswer?: (answer: CheckResponse, url: string) => void | Promise<void>;
}

/** What the hook records in `request.userData.robotsd`, for the request handler to read. */
export interface RobotsdVerdict {
  allowed: boolean;
  verdict: CheckResponse["verdict"];
  reason: CheckResponse["reason"];
  /** The rule that decided, or null when none matched. */
  rule: Rule | null;
  /** The applied groups' crawl-delay in seconds, or null. robotsd reports it; honouring it is yours. */
  crawlDelay: number | null;
}

/** The agent checked when none is configured and none can be read from the request. */
export const DEFAULT_AGENT = "Mozilla/5.0";

/** Options of {@link withRobotsd}. */
export interface WithRobotsdOptions extends RobotsdCrawleeOptions {
  /**
   * The agent to check as. By default, the `userAgent` of the crawler's `respectRobotsTxtFile`
   * option when it is an object, else {@link DEFAULT_AGENT}. Set your robots.txt product token.
   */
  ua?: string | string[];
  /**
   * Sees each URL robotsd could not answer for, and the error ({@link UnavailableError},
   * {@link ProblemError}, ...). The URL is then skipped, or fetched unchecked with `failOpen`.
   */
  onError?: (error: unknown, url: string) => void | Promise<void>;
}

/** A Crawlee crawler class: CheerioCrawler, PlaywrightCrawler, HttpCrawler, BasicCrawler, ... */
export type CrawlerClass = new (...args: any[]) => {
  run(...args: any[]): Promise<unknown>;
  addRequests(...args: any[]): Promise<unknown>;
};

/**
 * A subclass of the Crawlee crawler class `Crawler` that asks robotsd whether each request may
 * be fetched, and skips the ones robots.txt disallows. Use it as the class itself:
 *
 * ```js
 * const Crawler = withRobotsd(CheerioCrawler, new RobotsdClient({ baseUrl }), { ua: "ExampleBot" });
 * await new Crawler({ requestHandler }).run(["https://example.com/"]);
 * ```
 *
 * It rides on Crawlee's own robots.txt support (`respectRobotsTxtFile`, which it turns on unless
 * the options say `false`), with robotsd in place of the robots.txt files Crawlee would fetch
 * and parse itself: the crawler never fetches robots.txt. Crawlee asks before each request runs;
 * a disallowed one is skipped, not failed: it is marked handled, never retried, logged, and
 * reported to the crawler's `onSkippedRequest` with the reason `robotsTxt`. robotsd's reason and
 * rule line are logged too, and an allowed request carries the answer in
 * `request.userData.robotsd` ({@link RobotsdVerdict}) from its pre-navigation hooks on (crawlers
 * with `preNavigationHooks`; `onAnswer` sees every answer in any crawler).
 *
 * When robotsd cannot answer, the request is skipped the same way, with a warning that names the
 * error (fail closed), or fetched unchecked with `failOpen`.
 *
 * Needs Crawlee 3.13.2 or later (tested with 3.18).
 */
export function withRobotsd<C extends CrawlerClass>(Crawler: C, client: RobotsdClient, options: WithRobotsdOptions = {}): C {
  if (typeof (Crawler?.prototype as Partial<CrawleeInternals> | undefined)?.getRobotsTxtFileForUrl !== "function") {
    throw new TypeError(
      "withRobotsd: expected a Crawlee crawler class with robots.txt support (respectRobotsTxtFile, Crawlee 3.13.2 or later)",
    );
  }
  const RobotsdCrawler = class extends Crawler {
    readonly #answers = new AnswerCache();
    readonly #agent: string | string[];

    constructor(...args: any[]) {
      const [crawlerOptions, ...rest] = args as [Record<string, unknown> | undefined, ...unknown[]];
      const respect = crawlerOptions?.respectRobotsTxtFile as CrawleeInternals["respectRobotsTxtFile"] | undefined;
      super({ ...crawlerOptions, respectRobotsTxtFile: respect ?? true }, ...rest);
      this.#agent = options.ua ?? (typeof respect === "object" ? respect?.userAgent : undefined) ?? DEFAULT_AGENT;
      const crawler = this as unknown as CrawleeInternals;
      // First, so that the user's own hooks can read it; a new array, as the user's may be shared.
      if (Array.isArray(crawler.preNavigationHooks)) {
        crawler.preNavigationHooks = [(context: PreNavigationContext) => this.#record(context), ...crawler.preNavigationHooks];
      }
    }

    /**
     * Crawlee's own extension point (a protected method of BasicCrawler): where it would fetch and
     * parse the robots.txt of `url`'s origin, robotsd is asked about `url` itself. Crawlee calls
     * it before a request runs, for each URL given to `addRequests`, and for the page's own URL
     * when `enqueueLinks` filters the page's links.
     */
    protected async getRobotsTxtFileForUrl(url: string): Promise<RobotsdAnswerFile | undefined> {
      if (!(this as unknown as CrawleeInternals).respectRobotsTxtFile) return undefined;
      return new RobotsdAnswerFile(url, await this.#allowed(url));
    }

    /**
     * Where Crawlee is handed many URLs at once (`run(urls)`, `addRequests(urls)`), they are asked
     * about in batches of 1,000 (`POST /v1/check`) before Crawlee asks about them one at a time,
     * which those answers then serve. A batch that fails, or an item of it, leaves those URLs to
     * be asked about on their own.
     */
    override async addRequests(requests: unknown, ...rest: unknown[]): Promise<unknown> {
      if (Array.isArray(requests) && (this as unknown as CrawleeInternals).respectRobotsTxtFile) {
        await this.#askMany(requests);
      }
      return super.addRequests(requests, ...rest);
    }

    async #askMany(requests: readonly unknown[]): Promise<void> {
      const urls = [...new Set(requests.map(urlOf))]
        .filter((url): url is string => url !== undefined && !isRobotsTxt(url) && !this.#answers.peek(url))
        // More would push the first out of the cache before Crawlee reaches them.
        .slice(0, AnswerCache.maxEntries);
      if (urls.length < 2) return;
      let results: Array<CheckResponse | Problem>;
      try {
        results = await client.checkMany(urls, this.#agent);
      } catch {
        return;
      }
      for (const [index, result] of results.entries()) {
        // A problem with one item (batch-deadline: its origin was still being fetched) is left
        // to the ask of its own, which gives the answer or the problem for that URL alone.
        if (isProblem(result)) continue;
        const url = urls[index] as string;
        void this.#answers.get(url, () => this.#settle(url, result));
      }
    }

    async #allowed(url: string): Promise<boolean> {
      // Always allowed (RFC 9309 §2.5); robotsd is not asked.
      if (isRobotsTxt(url)) return true;
      const outcome = await this.#answers.get(url, () => this.#ask(url));
      return "answer" in outcome ? outcome.answer.allowed : Boolean(options.failOpen);
    }

    async #ask(url: string): Promise<Outcome> {
      let answer: CheckResponse;
      try {
        answer = await client.check(url, this.#agent);
      } catch (error) {
        return this.#settle(url, error);
      }
      return this.#settle(url, answer);
    }

    /** Logs and reports an answer, or an error robotsd gave instead, once per ask. */
    async #settle(url: string, answerOrError: CheckResponse | unknown): Promise<Outcome> {
      const log = (this as unknown as CrawleeInternals).log;
      if (!isAnswer(answerOrError)) {
        const error = answerOrError;
        const then = options.failOpen ? "fetching it unchecked (failOpen)" : "skipping it (fail closed)";
        log?.warning(`robotsd could not check ${url}, ${then}: ${messageOf(error)}`);
        await this.#callback("onError", () => options.onError?.(error, url));
        return { error };
      }
      const answer = answerOrError;
      if (!answer.allowed) {
        log?.info(`robotsd: ${url} is disallowed ${because(answer)}`, {
          reason: answer.reason,
          line: answer.rule?.line ?? null,
        });
      }
      await this.#callback("onAnswer", () => options.onAnswer?.(answer, url));
      return { answer };
    }

    /**
     * Runs a callback of the options. Crawlee does not expect its robots.txt lookup to throw (it
     * would end the crawl), so a callback's error is logged, and the verdict stands.
     */
    async #callback(name: string, call: () => void | Promise<void>): Promise<void> {
      try {
        await call();
      } catch (error) {
        (this as unknown as CrawleeInternals).log?.warning(`robotsd: ${name} failed: ${messageOf(error)}`);
      }
    }

    async #record(context: PreNavigationContext): Promise<void> {
      const outcome = await this.#answers.peek(context.request.url);
      if (outcome && "answer" in outcome) context.request.userData.robotsd = verdictOf(outcome.answer);
    }
  };
  // Crawlee names the crawler's log after its class: the logs read as the base crawler's.
  Object.defineProperty(RobotsdCrawler, "name", { value: Crawler.name });
  return RobotsdCrawler;
}

/** The members of a Crawlee crawler that {@link withRobotsd} uses besides the overridden method. */
interface CrawleeInternals {
  respectRobotsTxtFile: boolean | { userAgent?: string };
  log?: {
    info(message: string, data?: Record<string, unknown>): void;
    warning(message: string, data?: Record<string, unknown>): void;
  };
  preNavigationHooks?: unknown[];
  getRobotsTxtFileForUrl(url: string): Promise<unknown>;
}

/**
 * What {@link withRobotsd}'s crawler hands Crawlee where Crawlee expects a parsed robots.txt
 * (its `RobotsTxtFile`): robotsd's verdict for the one URL it was asked about.
 */
export class RobotsdAnswerFile {
  /** The URL robotsd was asked about. */
  readonly url: string;
  /** Whether it may be fetched: robotsd's verdict, or the `failOpen` choice when robotsd could not answer. */
  readonly allowed: boolean;

  constructor(url: string, allowed: boolean) {
    this.url = url;
    this.allowed = allowed;
  }

  /**
   * The verdict for the URL asked about; `true` for any other URL. Crawlee calls this
   * synchronously, and robotsd is asked over the network, so only the asked URL has an answer
   * here. The others are the page's links, which `enqueueLinks` filters with the page's own
   * file: they are enqueued, and each is asked about on its own before its request runs, where a
   * disallowed one is skipped before anything is sent to the site.
   */
  isAllowed(url: string, _userAgent?: string): boolean {
    return url === this.url ? this.allowed : true;
  }

  /**
   * None: robotsd does not hand robots.txt over. Crawlee 3.18 calls nothing but `isAllowed` on
   * a crawler's file; the sitemaps robotsd read are in {@link RobotsdClient.robots}' `sitemaps`.
   */
  getSitemaps(): string[] {
    return [];
  }

  /** None, as {@link RobotsdAnswerFile.getSitemaps}. */
  async parseUrlsFromSitemaps(): Promise<string[]> {
    return [];
  }
}

type Outcome = { answer: CheckResponse } | { error: unknown };

function isAnswer(value: unknown): value is CheckResponse {
  return typeof value === "object" && value !== null && "allowed" in value && !(value instanceof Error);
}

/** The URL of an item given to `addRequests`: a string, or a request (options) with a `url`. */
function urlOf(request: unknown): string | undefined {
  if (typeof request === "string") return request;
  const url = (request as { url?: unknown } | null)?.url;
  return typeof url === "string" ? url : undefined;
}

/**
 * The outcomes of recent asks, by URL. Crawlee asks about one URL up to three times while it
 * handles it (when it is added, before it runs, and when its page's links are enqueued); robotsd
 * is asked once, and concurrent asks share one call. Entries last a minute, and at most 1,000 are
 * kept: this dedupes, robotsd caches.
 */
class AnswerCache {
  static readonly ttlMs = 60_000;
  static readonly maxEntries = 1000;
  readonly #entries = new Map<string, { outcome: Promise<Outcome>; expires: number }>();

  get(url: string, ask: () => Promise<Outcome>): Promise<Outcome> {
    const cached = this.peek(url);
    if (cached) return cached;
    const outcome = ask();
    this.#entries.set(url, { outcome, expires: Date.now() + AnswerCache.ttlMs });
    // A Map iterates in insertion order: the first key is the oldest.
    if (this.#entries.size > AnswerCache.maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
    return outcome;
  }

  peek(url: string): Promise<Outcome> | undefined {
    const entry = this.#entries.get(url);
    if (!entry) return undefined;
    if (entry.expires > Date.now()) return entry.outcome;
    this.#entries.delete(url);
    return undefined;
  }
}

/** The error of a request robots.txt disallows: it was not fetched. */
export class DisallowedError extends RobotsdError {
  readonly url: string;
  readonly answer: CheckResponse;

  constructor(url: string, answer: CheckResponse) {
    super(`robotsd: ${url} is disallowed ${because(answer)}`);
    this.url = url;
    this.answer = answer;
    // Crawlee logs a failed request's stack in full; this one's frames are only the hook's.
    this.stack = `${this.name}: ${this.message}`;
  }
}

/** The parts of a Crawlee `Request` the hook uses. */
export interface RequestLike {
  url: string;
  headers?: Record<string, string>;
  userData: Record<string, unknown>;
  noRetry: boolean;
}

/** The parts of a Crawlee crawling context the hook uses (`page` only in browser crawlers). */
export interface PreNavigationContext {
  request: RequestLike;
  log?: { info(message: string, data?: Record<string, unknown>): void };
  page?: { evaluate(expression: string): Promise<unknown> };
}

/** A Crawlee pre-navigation hook. */
export type PreNavigationHook = (context: PreNavigationContext, navigationOptions?: unknown) => Promise<void>;

/**
 * A hook for `preNavigationHooks` of any Crawlee crawler (CheerioCrawler, PlaywrightCrawler, ...):
 * before each navigation it asks robotsd whether the request's URL may be fetched, records the
 * answer in `request.userData.robotsd` ({@link RobotsdVerdict}), and stops a disallowed request
 * before anything is sent, with a {@link DisallowedError} that carries the reason and the rule's
 * line and is never retried.
 *
 * Crawlee 3 reads `request.skipNavigation` before it runs the pre-navigation hooks, so a hook
 * cannot turn a navigation into a skip: the stopped request reaches `failedRequestHandler` (tell
 * it apart with `error instanceof DisallowedError`) and counts among the failed ones. Filter the
 * links you enqueue with {@link filterAllowed} and a disallowed URL never becomes a request at all;
 * the hook then guards the rest (start URLs, `addRequests`).
 *
 * Prefer {@link withRobotsd}, which skips a disallowed request instead of failing it.
 *
 * A request for `/robots.txt` itself goes through unasked: it is always allowed (RFC 9309 §2.5).
 */
export function robotsdPreNavigationHook(client: RobotsdClient, options: RobotsdCrawleeOptions = {}): PreNavigationHook {
  return async (context, navigationOptions) => {
    const { request } = context;
    const url = request.url;
    if (isRobotsTxt(url)) return;
    const ua = options.ua ?? (await agentOf(context, navigationOptions));
    let answer: CheckResponse;
    try {
      answer = await client.check(url, ua);
    } catch (error) {
      if (options.failOpen && error instanceof RobotsdError) {
        context.log?.info(`robotsd: fetching ${url} unchecked (failOpen): ${(error as Error).message}`);
        return;
      }
      // An unavailable robotsd may come back: Crawlee's retries are for that. A problem with
      // the URL itself (4xx) will not change.
      if (error instanceof ProblemError && error.status < 500) request.noRetry = true;
      throw error;
    }
    request.userData.robotsd = verdictOf(answer) satisfies RobotsdVerdict;
    await options.onAnswer?.(answer, url);
    if (!answer.allowed) {
      context.log?.info(`robotsd: skipping ${url}: disallowed ${because(answer)}`, {
        reason: answer.reason,
        line: answer.rule?.line ?? null,
      });
      request.noRetry = true;
      throw new DisallowedError(url, answer);
    }
  };
}

/** Options of {@link filterAllowed}. */
export interface FilterOptions extends RobotsdCrawleeOptions {
  /** Sees each URL left out: the answer that disallowed it, or the problem robotsd had with it. */
  onRefused?: (url: string, why: CheckResponse | Problem) => void | Promise<void>;
}

/**
 * The URLs among `urls` that robots.txt allows, in order, asked in batches of 1,000 (one call for
 * a page's links). Give the result to `enqueueLinks({ urls })` or `addRequests`, and disallowed
 * URLs never become requests. A URL robotsd has a problem with is left out, unless `failOpen`.
 * When robotsd cannot answer at all this throws (unless `failOpen`), so that Crawlee retries the
 * page, and its links with it, rather than losing them.
 */
export async function filterAllowed(
  client: RobotsdClient,
  urls: readonly string[],
  options: FilterOptions = {},
): Promise<string[]> {
  const asked = urls.filter((url) => !isRobotsTxt(url));
  let results: Array<CheckResponse | Problem>;
  try {
    results = asked.length ? await client.checkMany(asked, options.ua ?? DEFAULT_AGENT) : [];
  } catch (error) {
    if (options.failOpen && error instanceof RobotsdError) return [...urls];
    throw error;
  }
  const allowed = new Set<string>();
  for (const [index, result] of results.entries()) {
    const url = asked[index] as string;
    if (isProblem(result)) {
      if (options.failOpen) allowed.add(url);
      else await options.onRefused?.(url, result);
      continue;
    }
    await options.onAnswer?.(result, url);
    if (result.allowed) allowed.add(url);
    else await options.onRefused?.(url, result);
  }
  return urls.filter((url) => isRobotsTxt(url) || allowed.has(url));
}

function verdictOf(answer: CheckResponse): RobotsdVerdict {
  return {
    allowed: answer.allowed,
    verdict: answer.verdict,
    reason: answer.reason,
    rule: answer.rule ?? null,
    crawlDelay: answer.crawl_delay ?? null,
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function because(answer: CheckResponse): string {
  const rule = answer.rule;
  if (rule) return `by robots.txt line ${rule.line} (${rule.directive}: ${rule.pattern})`;
  return `(${answer.reason})`;
}

async function agentOf(context: PreNavigationContext, navigationOptions: unknown): Promise<string> {
  const fromHeaders =
    userAgentHeader(context.request.headers) ??
    userAgentHeader((navigationOptions as { headers?: unknown } | undefined)?.headers);
  if (fromHeaders) return fromHeaders;
  if (context.page) {
    const agent = await context.page.evaluate("navigator.userAgent");
    if (typeof agent === "string" && agent) return agent;
  }
  return DEFAULT_AGENT;
}

function userAgentHeader(headers: unknown): string | undefined {
  if (!headers || typeof headers !== "object") return undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === "user-agent" && typeof value === "string" && value) return value;
  }
  return undefined;
}

function isRobotsTxt(url: string): boolean {
  try {
    return new URL(url).pathname === "/robots.txt";
  } catch {
    return false;
  }
}
