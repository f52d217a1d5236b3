/**
 * The politeness the Crawlee integration keeps (internal: not exported by the package). One
 * {@link Pacer} per {@link RobotsdClient}, so that every crawler and hook of a process that shares
 * a client also shares each origin's gap:
 *
 * - with pacing (robotsd's `pace=true`), it waits for the slot robotsd reserved for a fetch, asks
 *   again when the slot was deferred or the site pushed back meanwhile, and reports what the site
 *   answered (`POST /v1/feedback`);
 * - always, it keeps the interval between the starts of two fetches to one origin itself, in this
 *   process (the slot's interval, or the crawl-delay when pacing is off), and holds an origin back
 *   for a `Retry-After` the site sent.
 *
 * @internal
 */
import {
  type CheckResponse,
  type Pace,
  type RobotsdClient,
  type Report,
  type SignMethod,
  askAgainDelayMs,
  slotLatenessMs,
} from "./index.js";

/** The longest response time robotsd takes in a report (ten minutes). */
const MAX_RESPONSE_MS = 600_000;

/**
 * A response time as a report carries it: whole milliseconds, rounded up so that a fast answer
 * is still a sample, within the bound robotsd takes.
 */
export function reportedMs(ms: number): number {
  return Math.min(MAX_RESPONSE_MS, Math.max(1, Math.ceil(ms)));
}

/** The longest interval kept locally: robotsd's own default cap (`--max-crawl-delay`, 60 s). */
export const MAX_LOCAL_INTERVAL_MS = 60_000;
/** The longest `Retry-After` honoured locally: robotsd's own default cap (`--max-retry-after`, 10 min). */
export const MAX_HOLD_MS = 600_000;
/** How long reports of successes wait to be batched. */
const SUCCESS_FLUSH_MS = 1_000;
/**
 * What {@link Pacer.send} adds to the interval: the requests handed to the network one interval
 * apart do not reach the site exactly one interval apart (the connection, the event loops of
 * both ends), and got's timings of when a request went out are in whole milliseconds.
 */
const SEND_MARGIN_MS = 5;
/**
 * What a crawl-delay kept here alone (`pace: false`, or robotsd unreachable with `failOpen`) gets
 * on top, as robotsd puts its `--pace-guard` between the slots it hands out: a fetch that starts
 * or reaches the site a little late (a busy event loop, a busy machine) followed by one on time
 * still leaves the site the whole crawl-delay.
 */
export const LOCAL_PACE_GUARD_MS = 50;
/** Origins kept before the ones that no longer matter are swept out. */
const SWEEP_AT = 10_000;

/**
 * A reserved slot, or an answer without one: `at` is when the slot is (`performance.now()` ms),
 * undefined when nothing was reserved (the URL is disallowed).
 */
export interface Slot {
  answer: CheckResponse;
  at: number | undefined;
}

/** How a fetch got no answer from the site, as robotsd is told: timed out, refused or reset. */
export type Failure = "timeout" | "refused" | "reset";

/** What the Pacer tells the crawler's log. */
export type Warn = (message: string) => void;

interface OriginPace {
  /** When the last claimed fetch start is (monotonic ms): the horizon of the starts handed out. */
  last: number;
  /** When the last fetch that claimed a start actually went on (monotonic ms). */
  started: number;
  /** When the last request was handed to the network (monotonic ms), where that can be seen. */
  sent: number;
  /** No fetch starts before this (monotonic ms): a Retry-After the site sent. */
  hold: number;
  /** How many times the site pushed back, as seen here: a slot reserved before one is given up. */
  pushbacks: number;
  /** The last interval known for the origin (ms): a slot's, else the crawl-delay. */
  interval: number | undefined;
  /** The pushback reports on their way: robotsd hears of them before this process reserves again. */
  reporting: Promise<void>;
}

const pacers = new WeakMap<RobotsdClient, Pacer>();

export class Pacer {
  readonly #client: RobotsdClient;
  readonly #origins = new Map<string, OriginPace>();
  #successes: Report[] = [];
  #late = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  private constructor(client: RobotsdClient) {
    this.#client = client;
  }

  /** The pacer of `client`, shared by everything of this process that uses it. */
  static for(client: RobotsdClient): Pacer {
    let pacer = pacers.get(client);
    if (!pacer) pacers.set(client, (pacer = new Pacer(client)));
    return pacer;
  }

  /**
   * Waits for the slot of `answer` (a `pace=true` answer about `url`): `wait_ms`, then asks again
   * if it was deferred, or if the site pushed back while this worker waited (the slot was handed
   * out before robotsd knew); then keeps the local floor. Resolves to the slot the fetch takes,
   * or to a disallowing answer (robots.txt changed meanwhile: nothing reserved). Throws what
   * {@link RobotsdClient.check} throws. With `sign`, each slot asked for again is signed too.
   */
  async slot(url: string, ua: string | string[], answer: CheckResponse, sign?: SignMethod): Promise<Slot> {
    const origin = originOf(url);
    for (;;) {
      const pace: Pace | null | undefined = answer.pace;
      if (!answer.allowed || !pace) return { answer, at: undefined };
      const reserved = pace.outcome === "reserved";
      const at = performance.now() + pace.wait_ms;
      const state = this.#state(origin);
      const pushbacks = state.pushbacks;
      // A deferred slot is asked for again with a jitter, so that the workers told the same
      // not_before do not all ask at once.
      await sleepUntil(reserved ? at : performance.now() + askAgainDelayMs(pace.wait_ms));
      if (reserved && state.pushbacks === pushbacks) {
        // robotsd's slots keep the interval; the local gate only keeps two starts of this
        // process from bunching up, with room for the lateness {@link Pacer.keep} allows, so
        // that it never holds an on-time fetch back (a delay here would pass on to the next).
        await this.claim(url, pace.interval_ms, 2 * slotLatenessMs(pace.interval_ms));
        return { answer, at };
      }
      // Deferred, or the site pushed back since: robotsd hears of it first, then hands out a slot.
      await state.reporting;
      answer = await this.#client.check(url, ua, { pace: true, sign });
    }
  }

  /**
   * The last step before a paced fetch leaves: if its slot was missed by more than
   * {@link slotLatenessMs} (the event loop, the HTTP client's first use, a browser page taking its
   * time), the slot is given up and another one waited for. Resolves to the slot the fetch
   * takes, which may disallow it (robots.txt changed meanwhile).
   */
  async keep(url: string, ua: string | string[], slot: Slot, sign?: SignMethod): Promise<Slot> {
    for (;;) {
      if (slot.at === undefined) return slot;
      const now = performance.now();
      if (now - slot.at <= slotLatenessMs(slot.answer.pace?.interval_ms ?? 0)) {
        this.#state(originOf(url)).sent = now;
        return slot;
      }
      this.#late++;
      slot = await this.slot(url, ua, await this.reserve(url, ua, sign), sign);
    }
  }

  /** How many slots were given up because the fetch would have started too late for them. */
  get late(): number {
    return this.#late;
  }

  /**
   * Asks robotsd about `url` with a reservation, after any pushback report on its way for the
   * origin (so that the slot reflects it). With `sign`, the request is signed too.
   */
  async reserve(url: string, ua: string | string[], sign?: SignMethod): Promise<CheckResponse> {
    await this.#state(originOf(url)).reporting;
    return this.#client.check(url, ua, { pace: true, sign });
  }

  /**
   * Checks and signs a redirect's next hop (`POST /v1/sign`), with a reservation when `pace`,
   * after any pushback report on its way for the origin.
   */
  async signHop(url: string, ua: string | string[], method: SignMethod, pace: boolean): Promise<CheckResponse> {
    if (pace) await this.#state(originOf(url)).reporting;
    return this.#client.sign({ url, ua, method, pace });
  }

  /**
   * The local gate: waits until the fetch may start, at least `intervalMs` (less `slackMs`, plus
   * `guardMs` when there is an interval) after the start of the previous fetch to the origin
   * claimed here (by any crawler or hook of this client) and after any Retry-After hold, and
   * claims that start.
   */
  async claim(url: string, intervalMs: number, slackMs = 0, guardMs = 0): Promise<void> {
    const state = this.#state(originOf(url));
    state.interval = Math.min(Math.max(0, intervalMs), MAX_LOCAL_INTERVAL_MS);
    const interval = state.interval > 0 ? Math.max(0, state.interval - slackMs) + guardMs : 0;
    const after = (state: OriginPace) => Math.max(state.started + interval, state.sent + interval + SEND_MARGIN_MS);
    let start = Math.max(performance.now(), state.last + interval, after(state), state.hold);
    state.last = start;
    for (;;) {
      await sleepUntil(start);
      const now = performance.now();
      if (state.hold > now) {
        // A Retry-After that arrived while this worker waited holds it back too, behind every
        // start claimed so far.
        start = Math.max(state.last + interval, state.hold);
        state.last = start;
      } else if (after(state) > now) {
        // The fetch before went on later than it was meant to (its timer fired late, or the
        // request left later, as measured since): this one keeps the interval after it.
        start = after(state);
      } else {
        state.started = now;
        return;
      }
    }
  }

  /**
   * The last step before a request goes out, where the HTTP client lets it be seen (got's
   * `beforeRequest` hooks): between {@link Pacer.claim} and the request leaving, the crawler spends
   * a few milliseconds, once much more (the HTTP client's first use), and not the same for every
   * request. So the start is kept once more here, against the last request actually sent to the
   * origin, with the interval last kept for it (and a margin). The wait is that difference, a few
   * milliseconds.
   */
  async send(url: string): Promise<void> {
    const state = this.#state(originOf(url));
    for (;;) {
      const interval = state.interval ?? 0;
      const start = interval > 0 ? state.sent + interval + SEND_MARGIN_MS : -Infinity;
      const now = performance.now();
      // What is recorded is the time the request actually goes on, not the time it was meant to:
      // a timer that fires late (the event loop was busy) must not shorten the next gap.
      if (start <= now) {
        state.sent = now;
        return;
      }
      await sleepUntil(start);
    }
  }

  /**
   * When a request to `url` actually went out (wall-clock ms), as the HTTP client or the browser
   * measured it once the site answered (got's `timings.upload`, Playwright's request timing):
   * later than it was let go when a connection had to be opened, the client was first used, or a
   * browser page took its time. The next request to the origin keeps the interval after that.
   */
  sentAt(url: string, epochMs: number): void {
    const state = this.#origins.get(originOf(url));
    if (!state) return;
    // Measured back from now on the wall clock, so that the two clocks' drift does not matter.
    const at = performance.now() - Math.max(0, Date.now() - epochMs);
    state.sent = Math.max(state.sent, at);
  }

  /**
   * The interval to keep for `url` when robotsd could not reserve a slot: the last one kept for
   * the origin here, else the crawl-delay if known, else none.
   */
  intervalFor(url: string, crawlDelay?: number | null): number {
    return this.#origins.get(originOf(url))?.interval ?? crawlDelayMs(crawlDelay);
  }

  /**
   * What the site answered a fetch of `url`. A 429 or 5xx is a pushback: slots reserved before
   * it are given up, a Retry-After holds the origin back here, and with `report` robotsd hears of
   * it at once (the whole fleet slows down). With `report`, any other status is reported too, in
   * batches, with `responseMs`, the time the site took: robotsd keeps the site's baseline of them
   * and slows the fleet down when the site answers much slower; while the origin is slowed down,
   * each also eases the slowdown.
   */
  response(url: string, status: number, retryAfter: string | undefined, report: boolean, warn: Warn, responseMs?: number): void {
    const state = this.#state(originOf(url));
    if (!isPushback(status)) {
      if (report) this.#success({ url, status, ...(responseMs !== undefined ? { response_ms: reportedMs(responseMs) } : {}) }, warn);
      return;
    }
    state.pushbacks++;
    const holdMs = status === 429 || status === 503 ? retryAfterMs(retryAfter) : undefined;
    if (holdMs !== undefined) state.hold = Math.max(state.hold, performance.now() + Math.min(holdMs, MAX_HOLD_MS));
    if (report) this.#report(state, { url, status, ...(retryAfter !== undefined ? { retry_after: retryAfter } : {}) }, warn);
  }

  /**
   * The fetch of `url` got no answer from the site: it timed out (the site had the fetch's whole
   * time limit), or the connection was refused or reset. A pushback, reported as such.
   */
  failed(url: string, failure: Failure, report: boolean, warn: Warn): void {
    const state = this.#state(originOf(url));
    state.pushbacks++;
    if (report) this.#report(state, failure === "timeout" ? { url, timeout: true } : { url, connection: failure }, warn);
  }

  /** Sends a pushback at once, with the successes waiting; the crawl never waits for it nor fails by it. */
  #report(state: OriginPace, report: Report, warn: Warn): void {
    const reports = [...this.#takeSuccesses(), report];
    const sent = this.#send(reports, warn);
    state.reporting = Promise.all([state.reporting, sent]).then(() => undefined);
  }

  #success(report: Report, warn: Warn): void {
    this.#successes.push(report);
    if (this.#successes.length >= 100) {
      void this.#send(this.#takeSuccesses(), warn);
    } else if (!this.#timer) {
      this.#timer = setTimeout(() => void this.#send(this.#takeSuccesses(), warn), SUCCESS_FLUSH_MS);
      // Successes left unsent when the crawl ends are not worth keeping the process alive for.
      this.#timer.unref?.();
    }
  }

  #takeSuccesses(): Report[] {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    return this.#successes.splice(0);
  }

  async #send(reports: Report[], warn: Warn): Promise<void> {
    if (reports.length === 0) return;
    try {
      const results = await this.#client.feedback(reports);
      for (const [index, result] of results.entries()) {
        if (!("origin" in result)) {
          warn(`robotsd did not take the report about ${reports[index]?.url}: ${result.detail}`);
        }
      }
    } catch (error) {
      warn(`robotsd: reporting what ${reports.length === 1 ? "a site" : "sites"} answered failed: ${messageOf(error)}`);
    }
  }

  #state(origin: string): OriginPace {
    let state = this.#origins.get(origin);
    if (!state) {
      if (this.#origins.size >= SWEEP_AT) this.#sweep();
      state = { last: -Infinity, started: -Infinity, sent: -Infinity, hold: -Infinity, pushbacks: 0, interval: undefined, reporting: Promise.resolve() };
      this.#origins.set(origin, state);
    }
    return state;
  }

  /** Forgets the origins whose last start and hold are past mattering. */
  #sweep(): void {
    const now = performance.now();
    for (const [origin, state] of this.#origins) {
      if (Math.max(state.last, state.sent) + MAX_LOCAL_INTERVAL_MS < now && state.hold < now) this.#origins.delete(origin);
    }
  }
}

/** A 429 (too many requests) or any 5xx: the site pushes back. */
export function isPushback(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

/** A crawl-delay in seconds as whole milliseconds, never shorter; 0 when there is none. */
export function crawlDelayMs(crawlDelay: number | null | undefined): number {
  return typeof crawlDelay === "number" && crawlDelay > 0 ? Math.ceil(crawlDelay * 1000) : 0;
}

/** A Retry-After header (RFC 9110 §10.2.3), delay-seconds or an HTTP date, in ms from now. */
export function retryAfterMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** The origin (scheme, host, port) of `url`, as robotsd keys pacing; the URL itself if it has none. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/**
 * Resolves once `performance.now()` has reached `deadline`. A timer alone can fire a little early
 * (Node measures it from the event loop's cached time), so it checks the clock and waits again.
 */
async function sleepUntil(deadline: number): Promise<void> {
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0) return;
    await new Promise((resolve) => setTimeout(resolve, Math.ceil(left)));
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
