// The client's page answer (POST /v1/page) against the real robotsd: pages fetched from a loopback
// site with node:http, as a crawler fetches them, and handed over with their raw headers and bytes.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  MAX_PAGE_DOCUMENT_BYTES,
  PAGE_HEADER_NAMES,
  ProblemError,
  RobotsdClient,
  UnavailableError,
  pageHeaders,
} from "@robotsd/client";

import { fetchRaw, freePort, startPageSite, startRobotsd } from "./helpers.mjs";

const ROBOTS = "User-agent: *\nDisallow: /private/\n";
const HTML = ["Content-Type", "text/html; charset=utf-8"];

/**
 * A client that keeps the body of each POST /v1/page it sends (parsed), to see what went out;
 * the answers are robotsd's own.
 */
function recordingClient(baseUrl) {
  const sent = [];
  const client = new RobotsdClient({
    baseUrl,
    fetch: (input, init) => {
      if (String(input).endsWith("/v1/page")) sent.push(JSON.parse(init.body));
      return fetch(input, init);
    },
  });
  return { client, sent };
}

/** Fetches `path` of the site and asks robotsd about it as `ua`, with its raw headers and bytes. */
async function askAbout(client, site, path, ua) {
  const { rawHeaders, body } = await fetchRaw(site.url + path);
  return client.page({ url: site.url + path, ua, headers: rawHeaders, body });
}

test("page answers a page's X-Robots-Tag headers and robots meta tags for the crawler, each with where it was written", async (t) => {
  const site = await startPageSite(t, {
    robots: ROBOTS,
    pages: {
      "/article": {
        headers: [
          HTML,
          ["X-Robots-Tag", "OtherBot: noindex"],
          ["X-Robots-Tag", "max-snippet:50"],
          ["Content-Usage", "train-ai=n"],
        ],
        body: [
          "<!doctype html><html><head>",
          '<meta name="robots" content="noimageindex">',
          '<meta name="ExampleBot" content="nofollow">',
          '<meta name="OtherBot" content="nosnippet">',
          "</head><body><p>text</p></body></html>",
        ].join("\n"),
      },
    },
  });
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });

  const answer = await askAbout(client, site, "/article", "ExampleBot");
  assert.equal(answer.allowed, true);
  assert.equal(answer.check.allowed, true);
  assert.equal(answer.check.url, `${site.url}/article`);
  assert.equal(answer.encoding, "UTF-8");
  assert.equal(answer.document_cut ?? null, null);
  const { robots } = answer;
  // ExampleBot's rules and every crawler's, summed; OtherBot's noindex and nosnippet are not its.
  assert.equal(robots.index, true);
  assert.equal(robots.follow, false);
  assert.equal(robots.snippet, true);
  assert.equal(robots.max_snippet, 50);
  assert.equal(robots.image_index, false);
  // Positions among the headers sent: Content-Type 0, the X-Robots-Tag lines 1 and 2.
  assert.deepEqual(robots.rules, [
    { rule: "max-snippet:50", agent: null, header: 2 },
    { rule: "noimageindex", agent: null, line: 2 },
    // A meta name is compared without regard to case, and shown so.
    { rule: "nofollow", agent: "examplebot", line: 3 },
  ]);
  assert.deepEqual(answer.usage.content_usage_header, { state: "stated", categories: { "train-ai": "n" }, headers: [3] });
  assert.deepEqual(answer.usage.combined["train-ai"], { value: "n", sources: ["header"] });
  assert.deepEqual(answer.usage.combined.search, { value: null, sources: [] });

  // The same page for OtherBot: its own rules, and every crawler's.
  const other = await askAbout(client, site, "/article", "Mozilla/5.0 (compatible; OtherBot/2.1)");
  assert.equal(other.robots.index, false);
  assert.equal(other.robots.follow, true);
  assert.equal(other.robots.snippet, false);
  assert.equal(other.robots.max_snippet, 0);
  assert.deepEqual(
    other.robots.rules.map((r) => [r.rule, r.agent, r.header ?? r.line]),
    [
      ["noindex", "OtherBot", 1],
      ["max-snippet:50", null, 2],
      ["noimageindex", null, 2],
      ["nosnippet", "otherbot", 4],
    ],
  );
  assert.equal(site.hits("/robots.txt"), 1, "robotsd fetched robots.txt once, and answered from its cache");
});

test("page sends only the headers robotsd reads, in order, repeated ones kept; positions count among those", async (t) => {
  const site = await startPageSite(t, {
    robots: ROBOTS,
    pages: {
      "/mixed": {
        headers: [
          ["Date", "Wed, 03 Dec 2025 13:09:53 GMT"],
          ["x-robots-tag", "noarchive"],
          ["Set-Cookie", "session=1"],
          ["Server", "loopback"],
          ["Content-Usage", "search=y"],
          ["Set-Cookie", "theme=dark"],
          ["X-ROBOTS-TAG", "ExampleBot: noindex"],
          ["Cache-Control", "no-store"],
          ["TDM-Reservation", "1"],
          ["tdm-policy", "https://policy.example/tdm.json"],
          ["Content-Type", "text/html"],
          ["Content-Usage", "train-ai=n"],
        ],
        body: '<meta name="robots" content="nofollow">',
      },
    },
  });
  const { client, sent } = recordingClient(await startRobotsd(t));

  const answer = await askAbout(client, site, "/mixed", "ExampleBot");
  const expected = [
    ["x-robots-tag", "noarchive"],
    ["Content-Usage", "search=y"],
    ["X-ROBOTS-TAG", "ExampleBot: noindex"],
    ["TDM-Reservation", "1"],
    ["tdm-policy", "https://policy.example/tdm.json"],
    ["Content-Type", "text/html"],
    ["Content-Usage", "train-ai=n"],
  ];
  assert.equal(sent.length, 1);
  assert.deepEqual(sent[0].headers, expected, "the headers robotsd reads, as received, nothing else");
  assert.ok(sent[0].html_base64 && !("html" in sent[0]), "the document as bytes");
  assert.deepEqual(
    answer.robots.rules.map((r) => [r.rule, r.header ?? null, r.line ?? null]),
    [
      ["noarchive", 0, null],
      ["noindex", 2, null],
      ["nofollow", null, 1],
    ],
  );
  assert.deepEqual(answer.robots.uninterpreted, ["noarchive"]);
  assert.equal(answer.robots.index, false);
  assert.equal(answer.robots.follow, false);
  // The two Content-Usage lines are one Dictionary, at positions 1 and 6 of the headers sent.
  assert.deepEqual(answer.usage.content_usage_header, {
    state: "stated",
    categories: { search: "y", "train-ai": "n" },
    headers: [1, 6],
  });
  assert.deepEqual(answer.usage.tdm, {
    reservation: true,
    source: "header",
    policy: "https://policy.example/tdm.json",
    policy_source: "header",
    invalid: [],
  });

  // The other forms a crawler has its headers in give the same list.
  const { rawHeaders } = await fetchRaw(`${site.url}/mixed`);
  const pairs = [];
  for (let i = 0; i < rawHeaders.length; i += 2) pairs.push([rawHeaders[i], rawHeaders[i + 1]]);
  assert.deepEqual(pageHeaders(rawHeaders), expected);
  assert.deepEqual(pageHeaders(pairs), expected);
  assert.deepEqual(pageHeaders(pairs.map(([name, value]) => ({ name, value }))), expected, "Playwright's headersArray()");
  // A record (Node's response.headers) joins a repeated field's lines: one Content-Usage.
  assert.deepEqual(pageHeaders({ "content-usage": "search=y, train-ai=n", date: "x", "set-cookie": ["a", "b"] }), [
    ["content-usage", "search=y, train-ai=n"],
  ]);
  assert.deepEqual([...PAGE_HEADER_NAMES].sort(), ["content-type", "content-usage", "robots-tag", "tdm-policy", "tdm-reservation", "x-robots-tag"]);
});

test("page sends a document's bytes, read in the page's own charset", async (t) => {
  const utf16 = Buffer.concat([
    Buffer.from("<!doctype html>\n<title>x</title>\n", "utf16le"),
    Buffer.from('<meta name="robots" content="noindex">', "utf16le"),
  ]);
  const site = await startPageSite(t, {
    robots: ROBOTS,
    pages: {
      // UTF-16: read as UTF-8 or windows-1252, its tags would be lost among the zero bytes.
      "/utf16": { headers: [["Content-Type", "text/html; charset=utf-16le"]], body: utf16 },
      // windows-1252, said only by a meta tag: the é of an unknown rule is 0xE9.
      "/latin": {
        headers: [["Content-Type", "text/html"]],
        body: Buffer.from('<meta charset="windows-1252">\n<meta name="robots" content="caf\u00e9, nofollow">', "latin1"),
      },
    },
  });
  const { client, sent } = recordingClient(await startRobotsd(t));

  const wide = await askAbout(client, site, "/utf16", "ExampleBot");
  assert.equal(wide.encoding, "UTF-16LE");
  assert.equal(wide.robots.index, false);
  assert.deepEqual(wide.robots.rules, [{ rule: "noindex", agent: null, line: 3 }]);
  assert.equal(Buffer.from(sent[0].html_base64, "base64").compare(utf16), 0, "the bytes as they came");

  const latin = await askAbout(client, site, "/latin", "ExampleBot");
  assert.equal(latin.encoding, "windows-1252");
  assert.equal(latin.robots.follow, false);
  assert.deepEqual(latin.robots.rules, [
    { rule: "caf\u00e9", agent: null, line: 2, ignored: "unknown" },
    { rule: "nofollow", agent: null, line: 2 },
  ]);

  // Text (a document someone already decoded) goes as `html`, read as it is.
  const text = await client.page({
    url: `${site.url}/latin`,
    ua: "ExampleBot",
    headers: [["Content-Type", "text/html; charset=windows-1252"]],
    body: '<meta name="robots" content="caf\u00e9">',
  });
  assert.equal(sent[2].html, '<meta name="robots" content="caf\u00e9">');
  assert.ok(!("html_base64" in sent[2]));
  assert.equal(text.robots.rules[0].rule, "caf\u00e9");
});

test("page sends at most a document's first 2 MiB, and the answer says it was cut", async (t) => {
  const noindex = '<meta name="robots" content="noindex">\n';
  const nofollow = '<meta name="robots" content="nofollow">';
  const filler = (bytes) => `<p>${"a".repeat(bytes - 7)}</p>`;
  const long = Buffer.from(noindex + filler(MAX_PAGE_DOCUMENT_BYTES) + nofollow);
  const site = await startPageSite(t, {
    robots: ROBOTS,
    pages: {
      "/long": { headers: [HTML], body: long },
      "/short": { headers: [HTML], body: noindex + nofollow },
    },
  });
  const { client, sent } = recordingClient(await startRobotsd(t));
  assert.equal(MAX_PAGE_DOCUMENT_BYTES, 2 * 1024 * 1024);

  const cut = await askAbout(client, site, "/long", "ExampleBot");
  assert.equal(cut.document_cut, true);
  assert.equal(cut.robots.index, false, "the tag in the first 2 MiB is read");
  assert.equal(cut.robots.follow, true, "the tag past them is not");
  const bytes = Buffer.from(sent[0].html_base64, "base64");
  assert.equal(bytes.length, MAX_PAGE_DOCUMENT_BYTES);
  assert.equal(bytes.compare(long.subarray(0, MAX_PAGE_DOCUMENT_BYTES)), 0);

  const whole = await askAbout(client, site, "/short", "ExampleBot");
  assert.equal(whole.document_cut ?? null, null);
  assert.equal(whole.robots.follow, false);

  // Text is cut at 2 MiB of its UTF-8, between characters: "é" is two bytes, and after the 43
  // bytes before them the cut falls inside one, which is left out whole.
  const text = `${noindex}<p>x${"\u00e9".repeat(MAX_PAGE_DOCUMENT_BYTES / 2)}</p>${nofollow}`;
  const answer = await client.page({ url: `${site.url}/text`, ua: "ExampleBot", headers: [HTML], body: text });
  const sentText = sent[2].html;
  const sentBytes = Buffer.byteLength(sentText);
  assert.equal(Buffer.byteLength(noindex), 39);
  assert.equal(sentBytes, MAX_PAGE_DOCUMENT_BYTES - 1);
  assert.ok(text.startsWith(sentText), "a prefix of the text, no character split");
  assert.equal(answer.document_cut, true);
  assert.equal(answer.robots.index, false);
  assert.equal(answer.robots.follow, true);
});

test("page sends no document unless it is HTML, and reads the headers of any", async (t) => {
  const site = await startPageSite(t, {
    robots: ROBOTS,
    pages: {
      "/report.pdf": {
        headers: [
          ["Content-Type", "application/pdf"],
          ["X-Robots-Tag", "noindex, nofollow"],
        ],
        body: Buffer.from('%PDF-1.7 <meta name="robots" content="nosnippet">'),
      },
    },
  });
  const { client, sent } = recordingClient(await startRobotsd(t));

  const pdf = await askAbout(client, site, "/report.pdf", "ExampleBot");
  assert.ok(!("html" in sent[0]) && !("html_base64" in sent[0]), "no document sent");
  assert.equal(pdf.encoding ?? null, null);
  assert.equal(pdf.robots.index, false);
  assert.equal(pdf.robots.follow, false);
  assert.equal(pdf.robots.snippet, true, "the PDF's bytes were not read as HTML");

  // No Content-Type at all: not known to be HTML, not sent; `contentType` says it, and is sent as one.
  const page = '<meta name="robots" content="noindex">';
  const unknown = await client.page({ url: `${site.url}/x`, ua: "ExampleBot", headers: [], body: page });
  assert.ok(!("html" in sent[1]));
  assert.equal(unknown.robots.index, true);
  const told = await client.page({ url: `${site.url}/x`, ua: "ExampleBot", body: page, contentType: "text/html; charset=utf-8" });
  assert.deepEqual(sent[2].headers, [["Content-Type", "text/html; charset=utf-8"]]);
  assert.equal(sent[2].html, page);
  assert.equal(told.robots.index, false);
});

test("page: a URL robots.txt disallows has no robots rules or usage, only robots.txt's answer", async (t) => {
  const site = await startPageSite(t, {
    robots: ROBOTS,
    pages: {
      "/private/report": {
        headers: [HTML, ["X-Robots-Tag", "noindex"], ["Content-Usage", "train-ai=n"]],
        body: '<meta name="robots" content="nofollow">',
      },
    },
  });
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });

  const answer = await askAbout(client, site, "/private/report", "ExampleBot");
  assert.equal(answer.allowed, false);
  assert.equal(answer.robots, null);
  assert.equal(answer.usage, null);
  assert.equal(answer.check.allowed, false);
  assert.equal(answer.check.reason, "matched_rule");
  assert.deepEqual(answer.check.rule, { directive: "disallow", pattern: "/private/", line: 2 });
});

test("page: robotsd's problems are ProblemErrors, and an unreachable robotsd an UnavailableError", async (t) => {
  const site = await startPageSite(t, { robots: ROBOTS, pages: {} });
  const client = new RobotsdClient({ baseUrl: await startRobotsd(t) });

  // More than 256 of the headers robotsd reads: not a page it takes.
  const many = Array.from({ length: 257 }, () => ["X-Robots-Tag", "noindex"]);
  await assert.rejects(client.page({ url: `${site.url}/x`, ua: "ExampleBot", headers: many }), (error) => {
    assert.ok(error instanceof ProblemError);
    assert.equal(error.status, 400);
    assert.equal(error.type, "urn:robotsd:problem:invalid-page");
    return true;
  });
  await assert.rejects(client.page({ url: "ftp://example.com/", ua: "ExampleBot", headers: [] }), {
    type: "urn:robotsd:problem:unsupported-scheme",
  });

  const down = new RobotsdClient({ baseUrl: `http://127.0.0.1:${await freePort()}` });
  await assert.rejects(down.page({ url: `${site.url}/x`, ua: "ExampleBot", headers: [] }), UnavailableError);
});
