/**
 * Web Bot Auth for the Crawlee integration's `sign` option (internal; `./crawlee` exports
 * {@link UnsignedError}): robotsd signs each request it allows, and the signature's three headers
 * go out with exactly that request. A signature covers one method, authority, path and query, so
 * each redirect hop is checked and signed on its own (`POST /v1/sign`) in the last step before it
 * leaves: got's `beforeRequest` hook, which got runs again for every hop, in an HTTP crawler; the
 * DevTools protocol's request interception (`Fetch`), which pauses every hop of a navigation, in a
 * browser crawler (Playwright's own `page.route` is not called for redirect hops). A request that
 * cannot be signed is never sent: neither unsigned nor with another request's signature.
 *
 * @internal
 */
import type { RequestLike } from "./contexts.js";
import {
  type CheckResponse,
  type Sign,
  type SignMethod,
  ProblemError,
  RobotsdError,
  isSigningProblem,
} from "./index.js";
import type { Pacer, Warn } from "./pacer.js";

/** The headers robotsd's signature is made of, in lower case. */
const SIGN_HEADER_NAMES = ["signature-agent", "signature-input", "signature"];

/**
 * The error of a request that signing on would have sent unsigned: its method is neither GET nor
 * HEAD (robotsd signs those alone), robotsd allowed it without a signature, or the crawler offers
 * no way to attach one. It was not sent, and is not retried.
 */
export class UnsignedError extends RobotsdError {
  readonly url: string;

  constructor(url: string, why: string) {
    super(`robotsd: not sending ${url} unsigned: ${why}`);
    this.url = url;
    // Crawlee logs a failed request's stack in full; this one's frames are only the hook's.
    this.stack = `${this.name}: ${this.message}`;
  }
}

/** The method robotsd is asked to sign for `method` (GET by default), or an {@link UnsignedError}. */
export function signMethodOf(url: string, method: string | undefined): SignMethod {
  const upper = (method ?? "GET").toUpperCase();
  if (upper === "GET" || upper === "HEAD") return upper;
  throw new UnsignedError(url, `robotsd signs GET and HEAD requests only, not ${upper}`);
}

/** How a {@link NavigationSigner} refuses a hop robots.txt disallows: withRobotsd's DisallowedError. */
export type Refuse = (url: string, answer: CheckResponse) => Error;

/** What a {@link NavigationSigner} needs of the hook that made it. */
export interface SignerOptions {
  pacer: Pacer;
  ua: string | string[];
  pace: boolean;
  failOpen: boolean;
  warn: Warn;
  refuse: Refuse;
}

/**
 * The signatures of one request's navigation: its own (taken from the answer the fetch goes on
 * with), then one per redirect hop, each asked for when the hop is about to leave.
 */
export class NavigationSigner {
  readonly request: RequestLike;
  readonly method: SignMethod;
  readonly #options: SignerOptions;
  #own: Sign | undefined;

  constructor(request: RequestLike, method: SignMethod, options: SignerOptions) {
    this.request = request;
    this.method = method;
    this.#options = options;
  }

  /**
   * The answer about the request's own URL that its fetch goes on with (the last slot taken):
   * allowed, it must carry the signature, else the request is not sent.
   */
  take(answer: CheckResponse): void {
    if (!answer.allowed) return;
    if (!answer.sign) {
      this.request.noRetry = true;
      throw new UnsignedError(this.request.url, "robotsd allowed it without a signature");
    }
    this.#own = answer.sign;
  }

  /** The signature of the request's own URL. */
  own(): Sign {
    if (!this.#own) throw new UnsignedError(this.request.url, "no signature was taken for it");
    return this.#own;
  }

  /**
   * A redirect's next hop (or, in a browser, another navigation of the page while the request is
   * handled): checked and signed on its own (`POST /v1/sign`, with its own slot when pacing, which
   * it waits for). Resolves to its signature; to undefined when robotsd cannot answer and
   * `failOpen` lets it through, unsigned like any request fetched unchecked. Throws when it must
   * not be sent: disallowed, a method robotsd does not sign, robotsd's problem (a signing problem
   * even with `failOpen`: a configuration error), or robotsd unavailable.
   */
  async hop(url: string, method: string | undefined): Promise<Sign | undefined> {
    const { pacer, ua, pace, failOpen, warn, refuse } = this.#options;
    const signMethod = signMethodOf(url, method);
    let answer: CheckResponse;
    try {
      answer = await pacer.signHop(url, ua, signMethod, pace);
      if (pace && answer.allowed) {
        const slot = await pacer.slot(url, ua, answer, signMethod);
        answer = (await pacer.keep(url, ua, slot, signMethod)).answer;
      }
    } catch (error) {
      if (failOpen && error instanceof RobotsdError && !isSigningProblem(error)) {
        warn(`robotsd could not sign the redirect to ${url}, sending it unsigned and unchecked (failOpen): ${messageOf(error)}`);
        return undefined;
      }
      // As for the request itself: an answer (a problem, robotsd's own 503 after the client's
      // retries) is final, an unavailable robotsd may come back.
      if (error instanceof ProblemError) this.request.noRetry = true;
      throw error;
    }
    if (!answer.allowed) {
      this.request.noRetry = true;
      throw refuse(url, answer);
    }
    if (!answer.sign) {
      this.request.noRetry = true;
      throw new UnsignedError(url, "robotsd allowed the redirect without a signature");
    }
    return answer.sign;
  }

  /**
   * A browser crawler's navigation: from now until the returned function is called (once the
   * page answered), every request for the page's main-frame document is paused before it leaves
   * (the DevTools protocol's `Fetch` domain), and sent with its signature: the first with the
   * request's own, each redirect hop (and any other navigation of the page meanwhile) with one of
   * its own. A hop that cannot be signed is failed (`BlockedByClient`), with a warning saying
   * why. Subresources (images, scripts, frames) are not pages robotsd checked: they go out as
   * ever, unsigned. Needs Chromium: another browser offers no DevTools session, and the request
   * is not sent.
   */
  async intercept(page: unknown): Promise<() => Promise<void>> {
    const session = await devtoolsSession(page);
    if (!session) {
      this.request.noRetry = true;
      throw new UnsignedError(this.request.url, "signing a browser's navigation needs Chromium (a DevTools session)");
    }
    const { frameTree } = (await session.send("Page.getFrameTree")) as { frameTree: { frame: { id: string } } };
    const mainFrame = frameTree.frame.id;
    const warn = this.#options.warn;
    let first = true;
    let done = false;
    const onPaused = async (event: PausedRequest): Promise<void> => {
      const { requestId, request } = event;
      try {
        if (done || event.frameId !== mainFrame || event.resourceType !== "Document") {
          await session.send("Fetch.continueRequest", { requestId });
          return;
        }
        const own = first && !event.redirectedRequestId;
        first = false;
        const sign = own ? this.own() : await this.hop(request.url, request.method);
        await session.send("Fetch.continueRequest", {
          requestId,
          headers: signedHeaders(request.headers, sign),
          ...(sign && !sameUrl(request.url, sign.url) ? { url: sign.url } : {}),
        });
      } catch (error) {
        warn(`robotsd: not sending ${request.url}: ${messageOf(error)}`);
        await session.send("Fetch.failRequest", { requestId, errorReason: "BlockedByClient" }).catch(() => undefined);
      }
    };
    session.on("Fetch.requestPaused", (event) => void onPaused(event as PausedRequest));
    await session.send("Fetch.enable", { patterns: [{ urlPattern: "*", resourceType: "Document", requestStage: "Request" }] });
    return async () => {
      if (done) return;
      done = true;
      await session.send("Fetch.disable").catch(() => undefined);
      await session.detach().catch(() => undefined);
    };
  }
}

/**
 * Puts the signature on got's options for the request about to leave: its three headers, in place
 * of any of the same name (a redirect hop's options carry the previous hop's), and its URL when
 * robotsd's differs from the one got would send. No signature (`failOpen` with robotsd
 * unavailable): the previous hop's headers are removed, never sent again.
 */
export function signGotOptions(options: { url?: unknown; headers?: Record<string, unknown> }, sign: Sign | undefined): void {
  const headers = (options.headers ??= {});
  for (const name of Object.keys(headers)) {
    if (SIGN_HEADER_NAMES.includes(name.toLowerCase())) delete headers[name];
  }
  if (!sign) return;
  for (const [name, value] of Object.entries(sign.headers)) headers[name.toLowerCase()] = value;
  if (!sameUrl(String(options.url), sign.url)) options.url = new URL(sign.url);
}

/** The request's headers with the signature's in place of any of the same name, as CDP takes them. */
function signedHeaders(headers: Record<string, string>, sign: Sign | undefined): Array<{ name: string; value: string }> {
  const kept = Object.entries(headers)
    .filter(([name]) => !SIGN_HEADER_NAMES.includes(name.toLowerCase()))
    .map(([name, value]) => ({ name, value }));
  return sign ? [...kept, ...Object.entries(sign.headers).map(([name, value]) => ({ name, value }))] : kept;
}

/** Whether two URLs are the same request target (the fragment is never sent). */
function sameUrl(a: string, b: string): boolean {
  try {
    const [x, y] = [new URL(a), new URL(b)];
    x.hash = "";
    y.hash = "";
    return x.href === y.href;
  } catch {
    return a === b;
  }
}

/** What the DevTools protocol says of a paused request (`Fetch.requestPaused`), as used here. */
interface PausedRequest {
  requestId: string;
  request: { url: string; method: string; headers: Record<string, string> };
  frameId: string;
  resourceType: string;
  redirectedRequestId?: string;
}

/** A DevTools protocol session: Playwright's `CDPSession`, or Puppeteer's. */
interface DevtoolsSession {
  send(method: string, params?: Record<string, unknown>): Promise<unknown>;
  on(event: string, listener: (event: unknown) => void): unknown;
  detach(): Promise<void>;
}

/** A DevTools session on `page` (Playwright's on Chromium, or Puppeteer's), or undefined. */
async function devtoolsSession(page: unknown): Promise<DevtoolsSession | undefined> {
  const candidate = page as {
    context?: () => { newCDPSession?: (page: unknown) => Promise<DevtoolsSession> };
    createCDPSession?: () => Promise<DevtoolsSession>;
  } | null;
  try {
    const context = typeof candidate?.context === "function" ? candidate.context() : undefined;
    if (typeof context?.newCDPSession === "function") return await context.newCDPSession(page);
    if (typeof candidate?.createCDPSession === "function") return await candidate.createCDPSession();
  } catch {
    // Playwright's Firefox and WebKit have no DevTools protocol.
  }
  return undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
