/**
 * After the fetch (`POST /v1/page`): what a crawler sends robotsd about a page it fetched, and
 * the types of robotsd's answer. {@link RobotsdClient.page} sends it; {@link pageRequest} builds
 * it. The page's robots rules (`X-Robots-Tag` headers and robots `meta` tags, combined for the
 * crawler), its AI-use statements (`Content-Usage`, TDMRep) and robots.txt's answer for its URL.
 * See robotsd's `docs/page.md`.
 *
 * @packageDocumentation
 */
import type { components } from "./openapi.js";

type Schemas = components["schemas"];

/** What `POST /v1/page` takes: the page's URL, the agent, its headers and its document. */
export type PageRequest = Schemas["PageRequest"];
/**
 * robotsd's answer about a fetched page: robots.txt's answer for its URL (`check`, `allowed`),
 * and, when robots.txt allows it, the page's robots rules for the crawler (`robots`) and its
 * AI-use statements (`usage`); both are null when robots.txt disallows the URL.
 */
export type PageResponse = Schemas["PageResponse"];
/** The page's robots rules in force for the crawler: `index`, `follow`, `snippet`, `max_snippet`, ... and `rules`. */
export type PageRobots = Schemas["PageRobotsJson"];
/** One robots rule, and where it was written: `header` (a position in the headers sent) or `line` (a `meta` tag's). */
export type PageRule = Schemas["PageRuleJson"];
/** The page's AI-use statements: its `Content-Usage` header, TDMRep, robots.txt's, and all of them combined. */
export type PageUsage = Schemas["PageUsageJson"];
/** The page's `Content-Usage` header: `state`, `categories`, and `headers` (positions in the headers sent). */
export type ContentUsageHeader = Schemas["ContentUsageHeaderJson"];
/** TDMRep: `reservation`, `policy` and where each came from (`header` or `meta`). */
export type Tdm = Schemas["TdmJson"];
/** One aipref category (`train-ai`, `search`) combined over robots.txt and the page's header. */
export type CombinedPreference = Schemas["CombinedJson"];

/**
 * The response headers robotsd reads (lower case): only these are sent. Positions in an answer
 * (`rules[*].header`, `content_usage_header.headers`) count among the headers sent, not among
 * all the headers the page came with.
 */
export const PAGE_HEADER_NAMES: readonly string[] = Object.freeze([
  "robots-tag",
  "x-robots-tag",
  "content-usage",
  "tdm-reservation",
  "tdm-policy",
  "content-type",
]);

/** How much of a document robotsd reads, as Googlebot reads HTML: its first 2 MiB (of bytes). */
export const MAX_PAGE_DOCUMENT_BYTES = 2 * 1024 * 1024;

/** The media types whose documents are sent (robots `meta` tags are HTML's). */
export const HTML_MEDIA_TYPES: readonly string[] = Object.freeze(["text/html", "application/xhtml+xml"]);

/**
 * A response's headers, in any of the forms crawlers have them:
 *
 * - `[name, value]` pairs, as received (each field line, in order, repeated ones kept): best;
 * - `{ name, value }` objects, as Playwright's `response.headersArray()` gives them: as good;
 * - Node's `rawHeaders`, a flat list (`name, value, name, value, ...`): as good;
 * - a fetch `Headers`, or a record such as Node's `response.headers` or Playwright's
 *   `response.headers()`: these join a repeated field's lines with commas (and a `Headers` sorts
 *   the names), so positions are those of the joined fields, and an agent named in one
 *   `X-Robots-Tag` line (`otherbot: noindex`) then reaches the rules of the next line too.
 */
export type PageHeaders =
  | Iterable<readonly [string, string]>
  | Iterable<{ readonly name: string; readonly value: string }>
  | readonly string[]
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** A fetched document: its bytes (`Uint8Array`, Node's `Buffer`, `ArrayBuffer`), or its text. */
export type PageBody = ArrayBuffer | ArrayBufferView | string;

/** The input of {@link RobotsdClient.page}. */
export interface PageInput {
  /** The page's URL: the one whose response this is (after redirects). */
  url: string;
  /** The agent(s) to answer for, as {@link RobotsdClient.check} takes them. */
  ua: string | string[];
  /** The response's headers ({@link PageHeaders}); only those robotsd reads are sent. */
  headers?: PageHeaders | null;
  /**
   * The document. Sent only when it is HTML (`text/html`, `application/xhtml+xml`, by
   * `contentType`), and at most its first 2 MiB. Bytes are best: robotsd decodes them in the
   * page's own charset (byte order mark, `Content-Type`, `meta` charset) as a browser does.
   */
  body?: PageBody | null;
  /**
   * The response's `Content-Type`, when `headers` has none (it is then sent as one, after the
   * others, for its charset), or to override the headers' for telling whether the document is
   * HTML. By default, the last `Content-Type` of `headers`. Without either, no document is sent.
   */
  contentType?: string | null;
  /** Aborts the call (the client's own timeout still applies). */
  signal?: AbortSignal;
}

/** What {@link pageRequest} builds: the request's body, and whether the document was cut to its first 2 MiB. */
export interface BuiltPageRequest {
  request: PageRequest;
  /** The document was longer than {@link MAX_PAGE_DOCUMENT_BYTES}, and only its first 2 MiB are sent. */
  cut: boolean;
}

/**
 * The body of `POST /v1/page` for a fetched page: the headers robotsd reads ({@link pageHeaders}),
 * and the document when it is HTML, at most its first 2 MiB (of bytes: of its UTF-8 encoding
 * when it is text), in its own charset when it is bytes.
 */
export function pageRequest(input: PageInput): BuiltPageRequest {
  const headers = pageHeaders(input.headers);
  const declared = lastContentType(headers);
  const contentType = input.contentType ?? declared;
  if (input.contentType && declared === undefined) headers.push(["Content-Type", input.contentType]);
  const request: PageRequest = { url: input.url, ua: input.ua, headers };
  let cut = false;
  const body = input.body;
  if (body !== undefined && body !== null && isHtmlType(contentType)) {
    if (typeof body === "string") {
      // Text, when that is all the caller has (a browser's DOM, a crawler that decoded the body):
      // sent as `html` and read as it is, so its charset is whatever decoded it made of it. Bytes
      // (`html_base64`, below) let robotsd decode them in the page's own charset, as a browser would.
      const text = cutText(body, MAX_PAGE_DOCUMENT_BYTES);
      request.html = text.text;
      cut = text.cut;
    } else {
      const bytes = toBytes(body);
      cut = bytes.byteLength > MAX_PAGE_DOCUMENT_BYTES;
      // The bytes as they came, base64: robotsd decodes them in the page's own charset (byte
      // order mark, then the Content-Type sent with them, then a meta charset, else UTF-8 or
      // windows-1252), which text decoded here could only guess.
      request.html_base64 = base64(cut ? bytes.subarray(0, MAX_PAGE_DOCUMENT_BYTES) : bytes);
    }
  }
  return { request, cut };
}

/**
 * The headers robotsd reads ({@link PAGE_HEADER_NAMES}, compared without regard to case), as
 * `[name, value]` pairs in the order given, repeated ones kept, names as written.
 */
export function pageHeaders(headers: PageHeaders | null | undefined): Array<[string, string]> {
  const kept: Array<[string, string]> = [];
  const keep = (name: unknown, value: unknown) => {
    if (typeof name !== "string" || !PAGE_HEADER_NAMES.includes(name.toLowerCase())) return;
    if (typeof value === "string") kept.push([name, value]);
    else if (typeof value === "number") kept.push([name, String(value)]);
  };
  if (!headers) return kept;
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] !== "function") {
    for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
      if (Array.isArray(value)) for (const item of value) keep(name, item);
      else keep(name, value);
    }
    return kept;
  }
  const items = [...(headers as Iterable<unknown>)];
  if (items.every((item) => typeof item === "string")) {
    // Node's rawHeaders: name, value, name, value, ...
    for (let i = 0; i + 1 < items.length; i += 2) keep(items[i], items[i + 1]);
    return kept;
  }
  for (const item of items) {
    if (Array.isArray(item)) keep(item[0], item[1]);
    else if (item && typeof item === "object") keep((item as { name?: unknown }).name, (item as { value?: unknown }).value);
  }
  return kept;
}

/** Whether a `Content-Type` is HTML's (`text/html`, `application/xhtml+xml`), parameters aside. */
export function isHtmlType(contentType: string | null | undefined): boolean {
  if (!contentType) return false;
  const essence = (contentType.split(";", 1)[0] ?? "").trim().toLowerCase();
  return HTML_MEDIA_TYPES.includes(essence);
}

/** The last `Content-Type` among the headers (the one a browser goes by). */
function lastContentType(headers: ReadonlyArray<readonly [string, string]>): string | undefined {
  let found: string | undefined;
  for (const [name, value] of headers) if (name.toLowerCase() === "content-type") found = value;
  return found;
}

function toBytes(body: ArrayBuffer | ArrayBufferView): Uint8Array {
  if (body instanceof Uint8Array) return body;
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  return new Uint8Array(body);
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

const encoder = new TextEncoder();

/**
 * The text's first `max` bytes of UTF-8, cut between characters, and always well formed: a lone
 * surrogate (which JSON carries as an escape robotsd would refuse) becomes U+FFFD.
 */
function cutText(text: string, max: number): { text: string; cut: boolean } {
  // At most 3 bytes of UTF-8 per UTF-16 code unit: a short text fits whole.
  if (text.length * 3 <= max && isWellFormed(text)) return { text, cut: false };
  const buffer = new Uint8Array(Math.min(max, text.length * 3));
  const { read, written } = encoder.encodeInto(text, buffer);
  const cut = read < text.length;
  if (!cut && isWellFormed(text)) return { text, cut };
  return { text: new TextDecoder().decode(buffer.subarray(0, written)), cut };
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function isWellFormed(text: string): boolean {
  const native = (text as { isWellFormed?: () => boolean }).isWellFormed;
  return typeof native === "function" ? native.call(text) : !LONE_SURROGATE.test(text);
}
