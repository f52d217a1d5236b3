/**
 * The parts of Crawlee's requests and crawling contexts the integration uses (`./crawlee` exports
 * them): types only, below both the hooks (`crawlee.ts`) and what they do around a navigation
 * (`navigation.ts`), so that neither imports the other's types.
 */

/** The parts of a Crawlee `Request` the hook uses. */
export interface RequestLike {
  url: string;
  /** The HTTP method, `GET` by default. */
  method?: string;
  headers?: Record<string, string>;
  userData: Record<string, unknown>;
  noRetry: boolean;
}

/** The parts of a Crawlee crawling context the hook uses (`page` only in browser crawlers). */
export interface PreNavigationContext {
  request: RequestLike;
  log?: { info(message: string, data?: Record<string, unknown>): void; warning?(message: string): void };
  page?: { evaluate(expression: string): Promise<unknown> };
}

/**
 * The parts of a Crawlee crawling context `robotsdPostNavigationHook` uses: `response` is
 * got's (`statusCode`, `headers`) in HTTP crawlers, Playwright's or Puppeteer's (`status()`,
 * `headers()`) in browser crawlers.
 */
export interface PostNavigationContext {
  request: RequestLike;
  response?: unknown;
  log?: { warning?(message: string): void };
}

/** The parts of a Crawlee crawling context `robotsdErrorHandler` uses. */
export interface ErrorContext {
  request: RequestLike;
  log?: { warning?(message: string): void };
}

/** A Crawlee pre-navigation hook. */
export type PreNavigationHook = (context: PreNavigationContext, navigationOptions?: unknown) => Promise<void>;
/** A Crawlee post-navigation hook. */
export type PostNavigationHook = (context: PostNavigationContext) => Promise<void>;
/** A Crawlee `errorHandler` or `failedRequestHandler`. */
export type ErrorHandler = (context: ErrorContext, error?: unknown) => Promise<void>;
