/**
 * Where a paced fetch is, between the hooks Crawlee calls around a navigation (internal: not
 * exported by the package): the last pre-navigation step marks it started, the first
 * post-navigation step tells the {@link Pacer} what the site answered, and an error handler that
 * sees it still started knows it failed before any answer.
 *
 * @internal
 */
import type { ErrorContext, PostNavigationContext, PreNavigationContext } from "./contexts.js";
import { createRequire } from "node:module";

import type { Failure, Pacer, Warn } from "./pacer.js";
import { type NavigationSigner, UnsignedError, signGotOptions } from "./signing.js";

/**
 * Where a request's fetch is: `waiting` from the last pre-navigation step until the request
 * leaves (in an HTTP crawler, got's `beforeRequest` hook may still wait there for a new slot,
 * inside the navigation's time limit), `sent` once it left, `responded` once the site answered.
 * An error handler that sees it `waiting` ends the wait (`abandoned`: the request never leaves,
 * and nothing is reported, as the site never saw it); one that sees it `sent` knows it failed
 * before the site answered.
 */
interface Navigation {
  phase: "waiting" | "sent" | "responded" | "abandoned";
  /** When the navigation's time limit began (monotonic ms): the last pre-navigation step. */
  began: number;
  /** When the request left (monotonic ms). */
  sent: number;
  /** The navigation's time limit (ms), when the HTTP client's options say it. */
  limitMs: number | undefined;
  /** How much the limit was lengthened by the wait before the request left (ms). */
  extendedMs: number;
  /** Ends a browser's signing of the navigation's requests, once the page answered or failed. */
  release?: () => Promise<void>;
}

const navigating = new WeakMap<object, Navigation>();

/**
 * The part of the navigation's time limit a request may spend before it leaves with a timeout
 * still counting as the site's: a tenth of the limit (100 ms when it is not known). A request
 * that waited longer inside the limit for a new slot (its own was missed) gave the site less
 * than the fetch's time, and its timeout says nothing of the site.
 */
function sendTolerance(limitMs: number | undefined): number {
  return limitMs !== undefined && limitMs > 0 ? limitMs / 10 : 100;
}

/**
 * Crawlee's own way to lengthen the time limits it runs a navigation in (`extendTimeout` of
 * `@apify/timeout`, which Crawlee 3 depends on), found at run time as this package does not
 * depend on Crawlee: undefined when it cannot be loaded. The wait for a new slot inside got's
 * `beforeRequest` hook lengthens the navigation's limit by itself, so that the fetch keeps its
 * whole time.
 */
type Extend = (extraMillis: number) => void;
let extendTimeout: Extend | null | undefined = null;

function timeoutExtender(): Extend | undefined {
  if (extendTimeout !== null) return extendTimeout;
  extendTimeout = undefined;
  try {
    // Crawlee's copy, as Crawlee requires it (CommonJS): the ES module build keeps its limits apart.
    const ours = createRequire(import.meta.url);
    let from = ours;
    try {
      from = createRequire(ours.resolve("@crawlee/core"));
    } catch {
      // No @crawlee/core to start from: this package's own resolution.
    }
    const module = from("@apify/timeout") as { extendTimeout?: unknown };
    if (typeof module.extendTimeout === "function") extendTimeout = module.extendTimeout as Extend;
  } catch {
    // Not there: a wait inside the limit counts against it (see failed()).
  }
  return extendTimeout;
}

/** How much the navigation's limit is lengthened while the request waits in got's hook (ms). */
const WAIT_ALLOWANCE_MS = 3_600_000;

/** The error of a request whose navigation ended while it still waited for its slot. */
class AbandonedError extends Error {
  constructor(url: string) {
    super(`robotsd: the navigation to ${url} ended while it waited for its fetch slot; not sent`);
  }
}

/** What the site answered, from a post-navigation context: got's response, or Playwright's. */
function responseOf(
  context: PostNavigationContext,
): { url: string; status: number; retryAfter?: string; sentAt?: number } | undefined {
  const response = context.response as Record<string, unknown> | null | undefined;
  if (!response || typeof response !== "object") return undefined;
  const status = typeof response.status === "function" ? (response.status as () => unknown)() : response.statusCode;
  if (typeof status !== "number") return undefined;
  const headers = typeof response.headers === "function" ? (response.headers as () => unknown)() : response.headers;
  const url = typeof response.url === "function" ? (response.url as () => unknown)() : response.url;
  const retryAfter = headerValue(headers, "retry-after");
  const sentAt = sentAtOf(response);
  return {
    url: typeof url === "string" && url ? url : context.request.url,
    status,
    ...(retryAfter !== undefined ? { retryAfter } : {}),
    ...(typeof sentAt === "number" ? { sentAt } : {}),
  };
}

/**
 * The fetch of the context's request starts now: it is `navigating` until the site answers. In
 * an HTTP crawler (got's options as the hook's second argument), the start is kept once more by
 * a `beforeRequest` hook of got, which runs last, right before the request leaves: `paced` (the
 * fetch's slot is still on time, else a new one is waited for) with pacing, else the local gap
 * ({@link Pacer.send}). In a browser crawler, `paced` runs here, the last step before the page
 * navigates.
 *
 * With `signer` (the `sign` option), the request leaves with its signature: got's hook puts it on
 * the request, and signs each redirect hop anew (got runs `beforeRequest` again for every hop); a
 * browser's main-frame requests are intercepted until the page answered
 * ({@link NavigationSigner.intercept}).
 */
export async function started(
  context: PreNavigationContext,
  navigationOptions: unknown,
  pacer: Pacer,
  paced?: () => Promise<void>,
  signer?: NavigationSigner,
): Promise<void> {
  const navigation: Navigation = { phase: "waiting", began: performance.now(), sent: 0, limitMs: undefined, extendedMs: 0 };
  navigating.set(context.request, navigation);
  const leaves = (limit: unknown) => {
    if (navigation.phase === "abandoned") throw new AbandonedError(context.request.url);
    navigation.phase = "sent";
    navigation.sent = performance.now();
    navigation.limitMs = typeof limit === "number" ? limit : undefined;
  };
  if (context.page || !navigationOptions || typeof navigationOptions !== "object") {
    if (signer) {
      if (!context.page) {
        throw new UnsignedError(context.request.url, "this crawler's requests cannot be signed (neither got nor a browser)");
      }
      // Before the wait for the slot: setting up the interception takes the slot's time otherwise.
      navigation.release = await signer.intercept(context.page);
    }
    await paced?.();
    // A browser crawler's pre-navigation hooks run before the navigation's time limit begins.
    navigation.began = performance.now();
    leaves((navigationOptions as { timeout?: unknown } | undefined)?.timeout);
    return;
  }
  const options = navigationOptions as { hooks?: { beforeRequest?: unknown[] } };
  const hooks = (options.hooks ??= {});
  let requests = 0;
  hooks.beforeRequest = [
    ...(hooks.beforeRequest ?? []),
    // Returns nothing: a value would be taken for the response.
    async (requestOptions: {
      url?: unknown;
      method?: string;
      headers?: Record<string, unknown>;
      timeout?: { request?: unknown };
    }): Promise<void> => {
      // got runs this hook again before each redirect hop.
      const hop = requests++ > 0;
      // The wait here (a new slot when the request's own was missed, or the local gap) is inside
      // the navigation's time limit: the limit is lengthened by it, so that the site still gets
      // the whole limit (got's own timer starts after this hook).
      const extend = timeoutExtender();
      const waitFrom = performance.now();
      extend?.(WAIT_ALLOWANCE_MS);
      try {
        const url = String(requestOptions.url ?? context.request.url);
        if (signer && hop) {
          // The previous hop's signature covers the previous URL alone: this one gets its own
          // (with its own slot when pacing), or is not sent.
          const sign = await signer.hop(url, requestOptions.method);
          if (!paced) await pacer.send(url);
          signGotOptions(requestOptions, sign);
        } else {
          if (paced) await paced();
          else await pacer.send(url);
          if (signer) signGotOptions(requestOptions, signer.own());
        }
      } finally {
        const waited = performance.now() - waitFrom;
        extend?.(-(WAIT_ALLOWANCE_MS - waited));
        if (extend) navigation.extendedMs += waited;
      }
      leaves(requestOptions.timeout?.request);
    },
  ];
}

/**
 * Records what the site answered a request this module paced, and tells robotsd: a pushback at
 * once, any other answer in a batch, with the time the site took.
 */
export function responded(context: PostNavigationContext, pacer: Pacer, report: boolean, warn: Warn): void {
  const { request } = context;
  const navigation = navigating.get(request);
  void navigation?.release?.();
  if (!navigation || navigation.phase === "responded") return;
  navigation.phase = "responded";
  const response = responseOf(context);
  if (!response) return;
  if (response.sentAt !== undefined) pacer.sentAt(response.url, response.sentAt);
  // From the moment the request left to the crawler's post-navigation hooks, the same way for
  // every page of one crawler: what robotsd compares with the site's baseline.
  const tookMs = navigation.sent > 0 ? performance.now() - navigation.sent : undefined;
  pacer.response(response.url, response.status, response.retryAfter, report, warn, tookMs);
}

/**
 * Tells robotsd (and the local gate) of a fetch that got no answer from the site, once per
 * failure (Crawlee calls errorHandler before a retry, failedRequestHandler after the last
 * attempt): a timeout, only when the request had left and the site had the navigation's time
 * limit (less at most {@link sendTolerance}: a wait inside the limit that could not lengthen it
 * makes a timeout the fetch's, not the site's); a connection refused or reset. Any other error (a
 * name that does not resolve, TLS, the crawler's own) is not the site pushing back, and is not
 * reported. A request still waiting for its slot is not sent at all.
 */
export function failed(context: ErrorContext, error: unknown, pacer: Pacer, report: boolean, warn: Warn): void {
  const request = context?.request;
  const navigation = request ? navigating.get(request) : undefined;
  void navigation?.release?.();
  if (!request || !navigation || navigation.phase === "responded") return;
  navigating.delete(request);
  if (navigation.phase !== "sent") {
    navigation.phase = "abandoned";
    return;
  }
  const failure = failureOf(error);
  if (failure === undefined) return;
  // The part of the limit spent before the request left, beyond what lengthened it.
  const spent = navigation.sent - navigation.began - navigation.extendedMs;
  if (failure === "timeout" && spent > sendTolerance(navigation.limitMs)) return;
  pacer.failed(request.url, failure, report, warn);
}

/**
 * How a navigation error says the site did not answer: got's and Node's error codes, Crawlee's
 * wrappings of them (a `SessionError` whose message names ECONNREFUSED or ECONNRESET; "request
 * timed out after" for its own time limit and got's), a browser's `net::ERR_...`.
 */
export function failureOf(error: unknown): Failure | undefined {
  for (let cause = error, depth = 0; cause && typeof cause === "object" && depth < 5; depth++) {
    const { code, name, message } = cause as { code?: unknown; name?: unknown; message?: unknown };
    const text = typeof message === "string" ? message : "";
    if (code === "ECONNREFUSED" || /\bECONNREFUSED\b|ERR_CONNECTION_REFUSED/.test(text)) return "refused";
    if (code === "ECONNRESET" || /\bECONNRESET\b|socket hang up|ERR_CONNECTION_RESET|ERR_EMPTY_RESPONSE|ERR_CONNECTION_CLOSED/.test(text)) {
      return "reset";
    }
    if (
      code === "ETIMEDOUT" ||
      name === "TimeoutError" ||
      cause.constructor?.name === "TimeoutError" ||
      /request timed out after|ERR_TIMED_OUT/.test(text)
    ) {
      return "timeout";
    }
    cause = (cause as { cause?: unknown }).cause;
  }
  return undefined;
}

/** When the request went out (wall-clock ms): got's `timings.upload`, or Playwright's request timing. */
function sentAtOf(response: Record<string, unknown>): number | undefined {
  const upload = (response.timings as { upload?: unknown } | undefined)?.upload;
  if (typeof upload === "number") return upload;
  if (typeof response.request !== "function") return undefined;
  try {
    const request = (response.request as () => { timing?: () => { startTime?: unknown; requestStart?: unknown } })();
    const timing = typeof request?.timing === "function" ? request.timing() : undefined;
    if (typeof timing?.startTime !== "number" || timing.startTime <= 0) return undefined;
    const offset = typeof timing.requestStart === "number" && timing.requestStart > 0 ? timing.requestStart : 0;
    return timing.startTime + offset;
  } catch {
    return undefined;
  }
}

function headerValue(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== "object") return undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    if (typeof value === "string") return value;
    if (Array.isArray(value) && typeof value[0] === "string") return value[0];
  }
  return undefined;
}
