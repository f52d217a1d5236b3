/**
 * Crawlee integration. {@link withRobotsd} makes any Crawlee crawler class ask robotsd instead of
 * fetching robots.txt itself, through Crawlee's own robots.txt support: a disallowed request is
 * skipped, not failed. {@link robotsdPreNavigationHook} and {@link filterAllowed} are the pieces
 * for setups of your own. After the fetch, withRobotsd's `page` option (or {@link robotsdPage})
 * asks robotsd about the page itself, and a nofollow page's links are not enqueued.
 *
 * Nothing here imports Crawlee: everything is typed by the few members it uses, so it fits
 * CheerioCrawler, PlaywrightCrawler and any other crawler of Crawlee 3 without tying this
 * package to one Crawlee version.
 *
 * @packageDocumentation
 */
import {
  type BatchResult,
  type CheckAnswer,
  type CheckResponse,
  type Pace,
  type PageResponse,
  type Problem,
  type RobotsdClient,
  type Rule,
  ProblemError,
  RobotsdError,
  isFullAnswer,
  isProblem,
  isSigningProblem,
} from "./index.js";
import { type PageContext, answerPage } from "./crawlee-page.js";
export type {
  ErrorContext,
  ErrorHandler,
  PostNavigationContext,
  PostNavigationHook,
  PreNavigationContext,
  PreNavigationHook,
  RequestLike,
} from "./contexts.js";
import type {
  ErrorContext,
  ErrorHandler,
  PostNavigationContext,
  PostNavigationHook,
  PreNavigationContext,
  PreNavigationHook,
} from "./contexts.js";
import { failed, responded, started } from "./navigation.js";
import { LOCAL_PACE_GUARD_MS, Pacer, type Slot, type Warn, crawlDelayMs } from "./pacer.js";
import { NavigationSigner, UnsignedError, signMethodOf } from "./signing.js";

export { UnsignedError } from "./signing.js";

export {
  pageStats,
  robotsdPage,
  type PageContext,
  type PageStats,
  type RobotsdPageContext,
  type RobotsdPageOptions,
} from "./crawlee-page.js";

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
  /**
   * Sees every answer, allowed or not, before the request goes on: its `crawl_delay`, `usage`, ...
   * An answer from a batch robotsd cut at its bound (8 MiB) is the verdict alone
   * (`isFullAnswer(answer)` is false): `allowed`, `reason`, nothing else.
   */
  onAnswer?: (answer: CheckAnswer, url: string) => void | Promise<void>;
  /**
   * Fleet-wide pacing, on by default. Right before each fetch, robotsd reserves the fetch's slot
   * (`GET /v1/check?pace=true` for the request's URL) and the request waits for it, so that every
   * worker of a fleet that shares robotsd keeps each origin's crawl-delay together (robotsd's
   * `--default-crawl-delay`, 1 s, where robots.txt states none). A 429 or 503 (with its
   * `Retry-After`), another 5xx, a timeout (the site had the whole navigation time limit, the
   * wait for the slot excluded), or a connection refused or reset is reported to robotsd
   * (`POST /v1/feedback`), which slows the origin down for the whole fleet; every other answer
   * is reported in batches with the time the site took, so that the fleet also slows down when
   * the site answers much slower than its baseline.
   *
   * `false`: robotsd is only asked for verdicts, and the crawler keeps the crawl-delay of
   * robotsd's answer by itself, per origin, across its concurrency (none where robots.txt states
   * none); nothing is reported.
   *
   * Either way, the starts of two fetches to one origin from this process are never closer than
   * that interval, and a `Retry-After` of a 429 or 503 holds the origin back.
   */
  pace?: boolean;
  /**
   * Web Bot Auth (robotsd with `--wba-keys`; docs/bot-auth.md), off by default: each request goes
   * out signed with the fleet's key, its `Signature-Agent`, `Signature-Input` and `Signature`
   * headers made by robotsd for exactly that method and URL. The check made right before the
   * fetch (the reservation with pacing; one more `GET /v1/check` without) asks
   * `sign=<the request's method>`, and the request is sent to the answer's `sign.url` with its
   * headers (replacing any of the same name). Each redirect hop is checked and signed on its own
   * (`POST /v1/sign`, with its own slot when pacing) right before it leaves; a disallowed hop is
   * not followed. A browser crawler signs its page's navigation (Chromium only), not the page's
   * subresources. The verdicts asked ahead of time (a batch of start URLs, Crawlee's own lookup)
   * are not signed: a signature is good for one request, for a minute.
   *
   * Never sent unsigned: a request whose method is not GET or HEAD (robotsd signs those alone),
   * or that robotsd allowed without a signature, fails with an {@link UnsignedError}; robotsd's
   * `signing-off` (no keys) and `sign-other-agent` (the agent is not the fleet's product token)
   * fail it with the {@link ProblemError}, even with `failOpen`: they are configuration errors.
   * None is retried. With `failOpen`, a request robotsd cannot answer for at all (down, timed
   * out) is still fetched unchecked, and so unsigned.
   */
  sign?: boolean;
}

/** What the hook records in `request.userData.robotsd`, for the request handler to read. */
export interface RobotsdVerdict {
  allowed: boolean;
  verdict: CheckResponse["verdict"];
  reason: CheckResponse["reason"];
  /** The rule that decided, or null when none matched (or when the answer was the verdict alone). */
  rule: Rule | null;
  /**
   * The applied groups' crawl-delay in seconds, or null (none, or not said: an answer that was
   * the verdict alone). The fetch keeps it (see the `pace` option).
   */
  crawlDelay: number | null;
  /**
   * The slot robotsd reserved for this fetch (pacing on), once the request has waited for it:
   * its `interval_ms`, `slowdown`, ... Null before that, when pacing is off, or when robotsd
   * could not reserve one (`failOpen`).
   */
  pace: Pace | null;
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
  /**
   * After each response the crawler let through, ask robotsd about the page itself
   * (`POST /v1/page`: its `X-Robots-Tag` headers and robots `meta` tags for the agent, its AI-use
   * statements, robots.txt's answer for its URL), before the request handler runs. The answer is
   * on the crawling context as `robotsdPage` ({@link RobotsdPageContext}), and on a page that says
   * `nofollow` (or `none`) for the agent, the context's `enqueueLinks` enqueues nothing (each
   * such call is logged, and counted in {@link pageStats}). Off by default.
   *
   * HTTP crawlers send the body as the crawler decoded it (CheerioCrawler's `body`); browser
   * crawlers the rendered page (`page.content()`); both with the response's headers. If robotsd
   * cannot answer, the request is not failed: a warning is logged, `robotsdPage` is null, and
   * `enqueueLinks` works as ever.
   */
  page?: boolean;
  /** With `page`, sees each page answer before the request handler does. An error it throws is logged, and changes nothing. */
  onPage?: (answer: PageResponse, url: string) => void | Promise<void>;
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
 * Pacing is on by default (the `pace` option): in crawlers with `preNavigationHooks` (HTTP and
 * browser crawlers), each request waits for the slot robotsd reserves for it, right before its
 * fetch, and a site's pushback (429, 5xx, timeouts) is reported to robotsd, as is every other
 * answer with the time the site took (a site answering much slower slows the fleet too). With `pace: false`
 * the crawler keeps the crawl-delay itself. Either way, two fetches to one origin never start
 * closer than the interval. A request whose slot robotsd cannot reserve fails (Crawlee retries
 * it when robotsd could not be reached; a problem robotsd answered, its own 503 after the
 * client's retries included, is final), or is fetched with the last interval known with `failOpen`.
 *
 * With `page: true`, robotsd is also asked about each page fetched (its `X-Robots-Tag` and robots
 * `meta` tags), its answer is on the crawling context as `robotsdPage`, and a nofollow page's
 * `enqueueLinks` enqueues nothing; see the option.
 *
 * Needs Crawlee 3.13.2 or later (tested with 3.18).
 */
export function withRobotsd<C extends CrawlerClass>(Crawler: C, client: RobotsdClient, options: WithRobotsdOptions = {}): C {
  if (typeof (Crawler?.prototype as Partial<CrawleeInternals> | undefined)?.getRobotsTxtFileForUrl !== "function") {
    throw new TypeError(
      "withRobotsd: expected a Crawlee crawler class with robots.txt support (respectRobotsTxtFile, Crawlee 3.13.2 or later)",
    );
  }
  const pacer = Pacer.for(client);
  const pace = options.pace !== false;
  const sign = options.sign === true;
  const RobotsdCrawler = class extends Crawler {
    readonly #answers = new AnswerCache();
    readonly #agent: string | string[];
    readonly #warn: Warn = (message) => (this as unknown as CrawleeInternals).log?.warning(message);

    constructor(...args: any[]) {
      const [crawlerOptions, ...rest] = args as [Record<string, unknown> | undefined, ...unknown[]];
      const respect = crawlerOptions?.respectRobotsTxtFile as CrawleeInternals["respectRobotsTxtFile"] | undefined;
      // Without checks nothing would be signed: every request would go out unsigned.
      if (sign && respect === false) throw new TypeError("withRobotsd: sign needs robots.txt checks (respectRobotsTxtFile)");
      super({ ...crawlerOptions, respectRobotsTxtFile: respect ?? true }, ...rest);
      this.#agent = options.ua ?? (typeof respect === "object" ? respect?.userAgent : undefined) ?? DEFAULT_AGENT;
      const crawler = this as unknown as CrawleeInternals;
      // New arrays, as the user's may be shared. The answer is recorded first, so that the user's
      // own hooks can read it; the wait for the slot comes last, right before the fetch.
      if (Array.isArray(crawler.preNavigationHooks)) {
        crawler.preNavigationHooks = [
          (context: PreNavigationContext) => this.#record(context),
          ...crawler.preNavigationHooks,
          (context: PreNavigationContext, navigationOptions: unknown) => this.#pace(context, navigationOptions),
        ];
        // First: what the site answered counts even if a later hook throws.
        crawler.postNavigationHooks = [
          (context: PostNavigationContext) => responded(context, pacer, pace, this.#warn),
          ...(crawler.postNavigationHooks ?? []),
        ];
        // A navigation that failed (timed out, reset, refused) reaches these instead: Crawlee calls
        // errorHandler before a retry, failedRequestHandler after the last attempt.
        const warn = this.#warn;
        for (const name of ["errorHandler", "failedRequestHandler"] as const) {
          const handler = crawler[name];
          crawler[name] = function (this: unknown, context: ErrorContext, error: unknown) {
            failed(context, error, pacer, pace, warn);
            return handler?.call(this, context, error);
          };
        }
      }
      if (options.page) this.#askPages();
    }

    /**
     * The `page` option: the user's request handler (a browser crawler keeps it in
     * `userProvidedRequestHandler`, and hands Crawlee a wrapper of its own) runs after robotsd's
     * answer about the page is on its context.
     */
    #askPages(): void {
      const crawler = this as unknown as CrawleeInternals;
      const name = typeof crawler.userProvidedRequestHandler === "function" ? "userProvidedRequestHandler" : "requestHandler";
      const handler = crawler[name];
      if (typeof handler !== "function") return;
      userHandlers.set(this, handler);
      const agent = this.#agent;
      const log = { info: (message: string, data?: Record<string, unknown>) => crawler.log?.info(message, data), warning: this.#warn };
      const onPage = options.onPage;
      crawler[name] = async function (this: unknown, ...args: unknown[]) {
        await answerPage(client, args[0] as PageContext, { ua: agent, log, onPage });
        return handler.apply(this, args);
      };
    }

    /**
     * The request handler as the user gave it (a Router, say), not the wrapper of the `page`
     * option: Crawlee reads router-aware metadata (a label's `userData` schema) off it.
     */
    get userRequestHandler(): unknown {
      return userHandlers.get(this) ?? Reflect.get(Crawler.prototype, "userRequestHandler", this);
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
      let results: BatchResult[];
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
    async #settle(url: string, answerOrError: CheckAnswer | unknown): Promise<Outcome> {
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
          line: ruleOf(answer)?.line ?? null,
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

    /**
     * The last pre-navigation hook: waits until the fetch may start. With pacing, for the slot
     * robotsd reserves for it now (not when it was enqueued: a slot is for one fetch, right
     * away); without, for the crawl-delay of the answer the request was let through with.
     */
    async #pace(context: PreNavigationContext, navigationOptions: unknown): Promise<void> {
      const { request } = context;
      const url = request.url;
      if (!(this as unknown as CrawleeInternals).respectRobotsTxtFile) return;
      // robots.txt is always allowed, unasked; with signing it is asked about like any other
      // request, so as to go out signed.
      if (isRobotsTxt(url) && !sign) return;
      const outcome = await this.#answers.peek(url);
      const known = outcome && "answer" in outcome ? outcome.answer : undefined;
      const signer = sign
        ? signerFor(request, { pacer, ua: this.#agent, pace, failOpen: Boolean(options.failOpen), warn: this.#warn })
        : undefined;
      if (!pace) {
        // A verdict alone does not say the crawl-delay: the interval last kept for the origin.
        const delay = known && isFullAnswer(known) ? crawlDelayMs(known.crawl_delay) : pacer.intervalFor(url);
        await pacer.claim(url, delay, 0, LOCAL_PACE_GUARD_MS);
        if (signer) {
          // The verdict the request was let through with carries no signature: ask for one now.
          let answer: CheckResponse;
          try {
            answer = await client.check(url, this.#agent, { sign: signer.method });
          } catch (error) {
            this.#cannot(`sign ${url}`, request, error);
            await started(context, navigationOptions, pacer);
            return;
          }
          if (!answer.allowed) {
            // robots.txt changed since the request was let through: it is not fetched.
            request.noRetry = true;
            throw new DisallowedError(url, answer);
          }
          signer.take(answer);
        }
        await started(context, navigationOptions, pacer, undefined, signer);
        return;
      }
      let slot: Slot;
      try {
        slot = await pacer.slot(url, this.#agent, await pacer.reserve(url, this.#agent, signer?.method), signer?.method);
      } catch (error) {
        this.#cannot(`reserve a slot for ${url}`, request, error, "with local pacing only");
        await pacer.claim(url, pacer.intervalFor(url, known && isFullAnswer(known) ? known.crawl_delay : undefined), 0, LOCAL_PACE_GUARD_MS);
        await started(context, navigationOptions, pacer);
        return;
      }
      const verdict = request.userData.robotsd as RobotsdVerdict | undefined;
      const take = (taken: Slot) => {
        if (!taken.answer.allowed) {
          // robots.txt changed since the request was let through: it is not fetched.
          request.noRetry = true;
          throw new DisallowedError(url, taken.answer);
        }
        signer?.take(taken.answer);
        if (verdict) verdict.pace = taken.answer.pace ?? null;
      };
      take(slot);
      await started(
        context,
        navigationOptions,
        pacer,
        async () => take((slot = await pacer.keep(url, this.#agent, slot, signer?.method))),
        signer,
      );
    }

    /**
     * robotsd could not do what the fetch needs (`what`). Returns when `failOpen` lets the
     * request go on (unchecked, and unsigned); throws the error otherwise, and always for
     * robotsd's refusal to sign, a configuration error that failing open would hide.
     */
    #cannot(what: string, request: PreNavigationContext["request"], error: unknown, how = ""): void {
      if (!options.failOpen || isSigningProblem(error)) {
        this.#warn(`robotsd could not ${what}, not fetching it now: ${messageOf(error)}`);
        // robotsd may come back: Crawlee's retries are for that. An answer is final: a problem
        // with the URL will not change, and robotsd's own 503 was retried by the client already
        // (one budget per call, not one more for each of Crawlee's attempts).
        if (error instanceof ProblemError) request.noRetry = true;
        throw error;
      }
      const unsigned = sign ? ", unsigned" : "";
      this.#warn(`robotsd could not ${what}, fetching it${how ? ` ${how}` : ""}${unsigned} (failOpen): ${messageOf(error)}`);
    }
  };
  // Crawlee names the crawler's log after its class: the logs read as the base crawler's.
  Object.defineProperty(RobotsdCrawler, "name", { value: Crawler.name });
  return RobotsdCrawler;
}

/** The user's request handlers that the `page` option wrapped, by crawler. */
const userHandlers = new WeakMap<object, (...args: unknown[]) => unknown>();

/** The members of a Crawlee crawler that {@link withRobotsd} uses besides the overridden method. */
interface CrawleeInternals {
  respectRobotsTxtFile: boolean | { userAgent?: string };
  log?: {
    info(message: string, data?: Record<string, unknown>): void;
    warning(message: string, data?: Record<string, unknown>): void;
  };
  preNavigationHooks?: unknown[];
  postNavigationHooks?: unknown[];
  errorHandler?: (context: ErrorContext, error: unknown) => unknown;
  failedRequestHandler?: (context: ErrorContext, error: unknown) => unknown;
  /** The request handler Crawlee calls (an HTTP crawler's is the user's own, or the router). */
  requestHandler?: (...args: unknown[]) => unknown;
  /** A browser crawler's: the user's own, which its `requestHandler` calls after the navigation. */
  userProvidedRequestHandler?: (...args: unknown[]) => unknown;
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

type Outcome = { answer: CheckAnswer } | { error: unknown };

function isAnswer(value: unknown): value is CheckAnswer {
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
  /** robotsd's answer: in full, or the verdict alone when it came in a batch cut at its bound. */
  readonly answer: CheckAnswer;

  constructor(url: string, answer: CheckAnswer) {
    super(`robotsd: ${url} is disallowed ${because(answer)}`);
    this.url = url;
    this.answer = answer;
    // Crawlee logs a failed request's stack in full; this one's frames are only the hook's.
    this.stack = `${this.name}: ${this.message}`;
  }
}

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
 * Pacing is on by default (the `pace` option): the check reserves the fetch's slot
 * (`pace=true`) and the hook waits for it, so put the hook last among `preNavigationHooks`, right
 * before the fetch. With `pace: false` the hook keeps the answer's crawl-delay itself. Either way,
 * two fetches to one origin never start closer than the interval, in this process. Add
 * {@link robotsdPostNavigationHook} and {@link robotsdErrorHandler} to report to robotsd what the
 * sites answered.
 *
 * Prefer {@link withRobotsd}, which skips a disallowed request instead of failing it, and reports.
 *
 * A request for `/robots.txt` itself goes through unasked: it is always allowed (RFC 9309 §2.5).
 */
export function robotsdPreNavigationHook(client: RobotsdClient, options: RobotsdCrawleeOptions = {}): PreNavigationHook {
  const pacer = Pacer.for(client);
  const pace = options.pace !== false;
  return async (context, navigationOptions) => {
    const { request } = context;
    const url = request.url;
    // Always allowed, unasked; with signing it is asked about like any other request, so as to go out signed.
    if (isRobotsTxt(url) && !options.sign) return;
    const ua = options.ua ?? (await agentOf(context, navigationOptions));
    const signer = options.sign
      ? signerFor(request, { pacer, ua, pace, failOpen: Boolean(options.failOpen), warn: warnOf(context) })
      : undefined;
    /**
     * robotsd could not answer: with failOpen, the fetch goes on (unchecked, unsigned) with the
     * interval last kept; else it throws, as it does for robotsd's refusal to sign.
     */
    const unanswered = async (error: unknown): Promise<void> => {
      if (options.failOpen && error instanceof RobotsdError && !isSigningProblem(error)) {
        context.log?.info(`robotsd: fetching ${url} unchecked${signer ? " and unsigned" : ""} (failOpen): ${(error as Error).message}`);
        await pacer.claim(url, pacer.intervalFor(url), 0, LOCAL_PACE_GUARD_MS);
        await started(context, navigationOptions, pacer);
        return;
      }
      // An unavailable robotsd may come back: Crawlee's retries are for that. An answer is
      // final: a problem with the URL will not change, and robotsd's own 503 was retried by the
      // client already (one budget per call, not one more for each of Crawlee's attempts).
      if (error instanceof ProblemError) request.noRetry = true;
      throw error;
    };
    let answer: CheckResponse;
    try {
      answer = pace ? await pacer.reserve(url, ua, signer?.method) : await client.check(url, ua, { sign: signer?.method });
    } catch (error) {
      return unanswered(error);
    }
    const verdict = verdictOf(answer) satisfies RobotsdVerdict;
    request.userData.robotsd = verdict;
    await options.onAnswer?.(answer, url);
    let slot: Slot | undefined;
    if (answer.allowed && pace) {
      try {
        slot = await pacer.slot(url, ua, answer, signer?.method);
      } catch (error) {
        return unanswered(error);
      }
      answer = slot.answer;
    }
    /** The answer the fetch goes on with: records it, or throws if it disallows. */
    const take = (taken: CheckResponse) => {
      if (taken.allowed) {
        signer?.take(taken);
        if (pace) verdict.pace = taken.pace ?? null;
        return;
      }
      // Also when robots.txt changed while the request waited for its slot.
      request.userData.robotsd = verdictOf(taken);
      context.log?.info(`robotsd: skipping ${url}: disallowed ${because(taken)}`, {
        reason: taken.reason,
        line: ruleOf(taken)?.line ?? null,
      });
      request.noRetry = true;
      throw new DisallowedError(url, taken);
    };
    take(answer);
    if (!slot) {
      if (!pace) await pacer.claim(url, crawlDelayMs(answer.crawl_delay), 0, LOCAL_PACE_GUARD_MS);
      await started(context, navigationOptions, pacer, undefined, signer);
      return;
    }
    let held = slot;
    await started(
      context,
      navigationOptions,
      pacer,
      async () => {
        held = await pacer.keep(url, ua, held, signer?.method);
        take(held.answer);
      },
      signer,
    );
  };
}

/**
 * A hook for `postNavigationHooks`, to go with {@link robotsdPreNavigationHook}: tells robotsd
 * what the site answered a fetch the pre-navigation hook paced. A 429 or 503 (with its
 * `Retry-After`) or another 5xx is reported at once (`POST /v1/feedback`): robotsd slows the
 * origin down for the whole fleet, and slots this process reserved before it are given up. Other
 * statuses are reported in batches, with the time the site took (from the request leaving to this
 * hook): robotsd slows the fleet down when a site answers much slower than its baseline. A report
 * that fails is logged as a warning; it never fails the crawl. Put it first among
 * `postNavigationHooks`. With `pace: false` it reports nothing, and only keeps the `Retry-After`
 * of a 429 or 503 for this process.
 */
export function robotsdPostNavigationHook(client: RobotsdClient, options: Pick<RobotsdCrawleeOptions, "pace"> = {}): PostNavigationHook {
  const pacer = Pacer.for(client);
  const pace = options.pace !== false;
  return async (context) => responded(context, pacer, pace, warnOf(context));
}

/**
 * For Crawlee's `errorHandler`, to go with {@link robotsdPreNavigationHook}: when a fetch the
 * hook paced failed before the site answered, it tells robotsd, which slows the origin down for
 * the whole fleet: `timeout: true` when the site did not answer within the navigation's time
 * limit (a request that spent part of the limit waiting for its slot, a new one when it missed
 * its own, is not reported: the site never had the fetch's time), `connection: "refused"` or
 * `"reset"`. Other errors are not reported. Crawlee calls `errorHandler` before each retry and
 * `failedRequestHandler` after the last attempt only, so call it from your
 * `failedRequestHandler` too: one failure is reported once. It never throws, and the error is
 * its second argument: pass it on.
 */
export function robotsdErrorHandler(client: RobotsdClient, options: Pick<RobotsdCrawleeOptions, "pace"> = {}): ErrorHandler {
  const pacer = Pacer.for(client);
  const pace = options.pace !== false;
  return async (context, error) => failed(context, error, pacer, pace, warnOf(context));
}

/**
 * The signer of a request's navigation (the `sign` option), or an {@link UnsignedError} for a
 * method robotsd does not sign: such a request is never sent, nor retried.
 */
function signerFor(
  request: PreNavigationContext["request"],
  options: { pacer: Pacer; ua: string | string[]; pace: boolean; failOpen: boolean; warn: Warn },
): NavigationSigner {
  try {
    return new NavigationSigner(request, signMethodOf(request.url, request.method), {
      ...options,
      refuse: (url, answer) => new DisallowedError(url, answer),
    });
  } catch (error) {
    request.noRetry = true;
    throw error;
  }
}

function warnOf(context: { log?: { warning?(message: string): void } }): Warn {
  return (message) => context.log?.warning?.(message);
}

/** What the pacing of {@link withRobotsd} and the hooks did for one client, in this process. */
export interface PacingStats {
  /**
   * Slots given up because their fetch would have started too late for them (a busy event loop,
   * got's first use; see `slotLatenessMs`): each took one more reservation.
   */
  lateSlots: number;
}

/** What the pacing of the crawlers and hooks that use `client` did so far. */
export function pacingStats(client: RobotsdClient): PacingStats {
  return { lateSlots: Pacer.for(client).late };
}

/** Options of {@link filterAllowed}. */
export interface FilterOptions extends RobotsdCrawleeOptions {
  /** Sees each URL left out: the answer that disallowed it, or the problem robotsd had with it. */
  onRefused?: (url: string, why: CheckAnswer | Problem) => void | Promise<void>;
}

/**
 * The URLs among `urls` that robots.txt allows, in order, asked in batches of 1,000 (one call for
 * a page's links). Give the result to `enqueueLinks({ urls })` or `addRequests`, and disallowed
 * URLs never become requests. A URL robotsd has a problem with is left out, unless `failOpen`.
 * When robotsd cannot answer for the whole batch this throws (unless `failOpen`): the
 * {@link UnavailableError}, or the {@link ProblemError} (robotsd's own 503 after the client's
 * retries), so that Crawlee retries the page, and its links with it, rather than losing them.
 * Each of Crawlee's attempts is a call of its own, with its own retries.
 */
export async function filterAllowed(
  client: RobotsdClient,
  urls: readonly string[],
  options: FilterOptions = {},
): Promise<string[]> {
  const asked = urls.filter((url) => !isRobotsTxt(url));
  let results: BatchResult[];
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

function verdictOf(answer: CheckAnswer): RobotsdVerdict {
  const full = isFullAnswer(answer) ? answer : undefined;
  return {
    allowed: answer.allowed,
    verdict: answer.allowed ? "allow" : "disallow",
    reason: answer.reason,
    rule: full?.rule ?? null,
    crawlDelay: full?.crawl_delay ?? null,
    pace: null,
  };
}

/** The rule that decided, when the answer says it (a verdict alone does not). */
function ruleOf(answer: CheckAnswer): Rule | null {
  return isFullAnswer(answer) ? (answer.rule ?? null) : null;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function because(answer: CheckAnswer): string {
  const rule = ruleOf(answer);
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
