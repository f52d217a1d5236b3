/**
 * Where a paced fetch is, between the hooks Crawlee calls around a navigation (internal: not
 * exported by the package): the last pre-navigation step marks it started, the first
 * post-navigation step tells the {@link Pacer} what the site answered, and an error handler that
 * sees it still started knows it failed before any answer.
 *
 * @internal
 */
import type { ErrorContext, PostNavigationContext, PreNavigationContext } from "./crawlee.js";
import type { Pacer, Warn } from "./pacer.js";

/**
 * The requests whose fetch is under way: set by the last pre-navigation step (the fetch starts
 * next), set to `responded` by the first post-navigation step. A request still `navigating` when
 * an error handler sees it failed before the site answered: a timeout or another navigation error.
 */
const navigating = new WeakMap<object, "navigating" | "responded">();

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
 */
export async function started(
  context: PreNavigationContext,
  navigationOptions: unknown,
  pacer: Pacer,
  paced?: () => Promise<void>,
): Promise<void> {
  navigating.set(context.request, "navigating");
  if (context.page || !navigationOptions || typeof navigationOptions !== "object") {
    await paced?.();
    return;
  }
  const options = navigationOptions as { hooks?: { beforeRequest?: unknown[] } };
  const hooks = (options.hooks ??= {});
  hooks.beforeRequest = [
    ...(hooks.beforeRequest ?? []),
    // Returns nothing: a value would be taken for the response.
    async (requestOptions: { url?: unknown }): Promise<void> => {
      if (paced) await paced();
      else await pacer.send(String(requestOptions.url ?? context.request.url));
    },
  ];
}

/** Records what the site answered a request this module paced, and tells robotsd of a pushback. */
export function responded(context: PostNavigationContext, pacer: Pacer, report: boolean, warn: Warn): void {
  const { request } = context;
  if (navigating.get(request) !== "navigating") return;
  navigating.set(request, "responded");
  const response = responseOf(context);
  if (!response) return;
  if (response.sentAt !== undefined) pacer.sentAt(response.url, response.sentAt);
  pacer.response(response.url, response.status, response.retryAfter, report, warn);
}

/** Tells robotsd (and the local gate) of a fetch that failed before the site answered. */
export function failed(context: ErrorContext, pacer: Pacer, report: boolean, warn: Warn): void {
  const request = context?.request;
  if (!request || navigating.get(request) !== "navigating") return;
  navigating.delete(request);
  pacer.failed(request.url, report, warn);
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
