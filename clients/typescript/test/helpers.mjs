// What the tests share: the real robotsd binary (ROBOTSD_BIN) on a loopback port, and a loopback
// site of 51 pages behind a robots.txt with allow, disallow, wildcard, anchor and crawl-delay rules.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, get } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

import { RobotsdClient, isProblem } from "@robotsd/client";

export const SITE_ROBOTS = `User-agent: *
Disallow: /private/
Allow: /private/public
Disallow: /*.pdf$
Crawl-delay: 0.01

User-agent: OtherBot
Disallow: /p/
`;

/** The site's pages: the index, which links to all the others, and 50 more. */
export function sitePaths() {
  const paths = ["/"];
  for (let i = 0; i < 30; i++) paths.push(`/p/${i}`);
  for (let i = 0; i < 10; i++) paths.push(`/private/${i}`);
  for (let i = 0; i < 5; i++) paths.push(`/private/public/${i}`, `/docs/${i}.pdf`);
  return paths;
}

/**
 * A robots.txt made so that every full answer about it is large, whatever robotsd cuts: 20
 * `user-agent` lines of 16,000 control characters (robotsd shows 16 of them, each cut at 256
 * bytes of JSON, a control character taking 6), an `allow` of 16,000 wildcards (its pattern cut
 * at 2,048 bytes) and a longer `disallow` for the paths under `/d`. 352 KB, within the 500 KiB
 * robotsd keeps.
 */
export function hostileRobots() {
  const long = "\u0001".repeat(16_000);
  return `user-agent: a${long}\n`.repeat(20) + `allow: /${"*".repeat(16_000)}\n` + `disallow: /d${"*".repeat(16_000)}\n`;
}

/**
 * `count` paths of 4,000 bytes and more (robotsd's answer about each echoes a long URL too),
 * every third under `/d` (disallowed by {@link hostileRobots}): robotsd's answer to a batch of
 * 1,000 of them reaches its bound (8 MiB) and goes on in verdicts.
 */
export function hostilePaths(count = 1000) {
  return Array.from({ length: count }, (_, i) => `/${i % 3 === 0 ? "d" : "x"}${"x".repeat(4000)}${i}`);
}

/** The robotsd flags a batch of {@link hostilePaths} needs: its request is over 4 MB. */
export const HOSTILE_FLAGS = ["--max-body-bytes", "8MiB"];

/** A loopback site that serves {@link hostileRobots}, and 404 for anything else. */
export async function startHostileSite(t) {
  const robots = hostileRobots();
  let robotsHits = 0;
  const server = createServer((req, res) => {
    if (new URL(req.url, "http://site").pathname !== "/robots.txt") {
      res.writeHead(404).end();
      return;
    }
    robotsHits++;
    res.writeHead(200, { "content-type": "text/plain" }).end(robots);
  });
  const url = await listen(t, server);
  return { url, robots, robotsHits: () => robotsHits };
}

/** A scratch directory removed when the test ends. */
export function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), "robotsd-ts-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function listen(t, server) {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      t.after(() => new Promise((done) => server.close(done)));
      // Browsers and undici keep connections open; close() alone would wait for them.
      t.after(() => server.closeAllConnections());
      resolve(`http://127.0.0.1:${server.address().port}`);
    });
  });
}

/** Starts the loopback site; it records every path fetched, and the User-Agent headers it saw. */
export async function startSite(t) {
  const fetched = new Map();
  const robotsAgents = [];
  const pageAgents = new Set();
  const server = createServer((req, res) => {
    const path = new URL(req.url, "http://site").pathname;
    fetched.set(path, (fetched.get(path) ?? 0) + 1);
    if (path === "/robots.txt") {
      robotsAgents.push(req.headers["user-agent"] ?? "");
      res.writeHead(200, { "content-type": "text/plain" }).end(SITE_ROBOTS);
      return;
    }
    pageAgents.add(req.headers["user-agent"] ?? "");
    if (!sitePaths().includes(path)) {
      res.writeHead(404, { "content-type": "text/html" }).end("<p>not found</p>");
      return;
    }
    const links = path === "/" ? sitePaths().slice(1).map((p) => `<li><a href="${p}">${p}</a></li>`) : [];
    res
      .writeHead(200, { "content-type": "text/html; charset=utf-8" })
      // The empty icon keeps a browser from asking for /favicon.ico, which no crawler decided to fetch.
      .end(`<!doctype html><title>${path}</title><link rel="icon" href="data:,"><h1>${path}</h1><ul>${links.join("")}</ul>`);
  });
  const url = await listen(t, server);
  return {
    url,
    hits: (path) => fetched.get(path) ?? 0,
    /** The paths fetched, robots.txt excepted, sorted. */
    pages: () => [...fetched.keys()].filter((p) => p !== "/robots.txt").sort(),
    robotsAgents,
    /** The User-Agent headers of every other request. */
    pageAgents,
  };
}

/**
 * A loopback site for pacing tests: `/` links to `pages` more (`/p/0`, ...), behind `robots`. It
 * runs in a worker thread of its own, so that the times at which it sees each request are not
 * skewed by the crawler keeping the test's event loop busy. `script` says what given hits of a
 * path answer instead of the page: `{ "/p/2": [{ status: 429, headers: { "retry-after": "1" } }] }`
 * (the first hit of /p/2), or `"hang"` (never answered). `lag: { after, ms }`: once `after`
 * pages were asked for, each answer takes `ms` longer (a site slowing down under a crawl).
 * `arrivals()` resolves to every request but robots.txt, in the order they came:
 * `{ path, at, status }`, `at` in milliseconds.
 */
export async function startPacedSite(t, { robots, pages = 12, script = {}, lag = null }) {
  const paths = Array.from({ length: pages }, (_, i) => `/p/${i}`);
  const worker = new Worker(new URL("./site-worker.mjs", import.meta.url), { workerData: { robots, pages: paths, script, lag } });
  t.after(() => worker.terminate());
  const { port } = await new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  const url = `http://127.0.0.1:${port}`;
  // The site's first requests are slower to handle than the rest: not the crawler's.
  for (let i = 0; i < 3; i++) await (await fetch(`${url}/warm`)).arrayBuffer();
  return {
    url,
    /** Every page: the index and the others. */
    paths: ["/", ...paths],
    arrivals: () =>
      new Promise((resolve) => {
        worker.once("message", (message) => resolve(message.arrivals));
        worker.postMessage("arrivals");
      }),
  };
}

/**
 * Asserts that no two consecutive requests reached the site closer than `ms` milliseconds apart,
 * and returns the shortest gap.
 */
/**
 * How much closer together than their slots two fetches may reach the site, beyond the lateness
 * a slot allows (slotLatenessMs): each fetch waits from the answer it received, and the site
 * sees it when its handler runs; those few milliseconds differ from one fetch to the next. Any
 * real pacing error is a whole interval.
 */
export const ARRIVAL_JITTER_MS = 5;

export function assertGapsAtLeast(arrivals, ms) {
  let shortest = Infinity;
  for (let i = 1; i < arrivals.length; i++) {
    const [before, after] = [arrivals[i - 1], arrivals[i]];
    const gap = after.at - before.at;
    shortest = Math.min(shortest, gap);
    assert.ok(gap >= ms, `${before.path} then ${after.path} only ${gap.toFixed(1)} ms apart at the site, less than ${ms} ms`);
  }
  return shortest;
}

/**
 * A loopback site of given pages, for the page answer (`POST /v1/page`): `pages` maps a path to
 * `{ headers, body }`, `headers` as `[name, value]` pairs sent as written, in order (repeated ones
 * kept), `body` a string or bytes; `robots` is its robots.txt. Anything else is a 404. Records
 * the paths fetched.
 */
export async function startPageSite(t, { robots, pages }) {
  const fetched = new Map();
  const server = createServer((req, res) => {
    const path = new URL(req.url, "http://site").pathname;
    fetched.set(path, (fetched.get(path) ?? 0) + 1);
    if (path === "/robots.txt") {
      res.writeHead(200, { "content-type": "text/plain" }).end(robots);
      return;
    }
    const page = pages[path];
    if (!page) {
      res.writeHead(404, { "content-type": "text/html" }).end("<p>not found</p>");
      return;
    }
    // A flat list keeps each field line, its name as written, in order.
    res.writeHead(200, page.headers.flat()).end(page.body);
  });
  const url = await listen(t, server);
  return {
    url,
    hits: (path) => fetched.get(path) ?? 0,
    /** The paths fetched, robots.txt excepted, sorted. */
    pages: () => [...fetched.keys()].filter((p) => p !== "/robots.txt").sort(),
  };
}

/**
 * GETs `url` as a crawler does, with node:http: its `rawHeaders` (each field line, in order) and
 * its body's bytes, as they came.
 */
export function fetchRaw(url) {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      const chunks = [];
      res.on("data", (chunk) => chunks.push(chunk));
      res.on("end", () => resolve({ url, status: res.statusCode, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    }).on("error", reject);
  });
}

/** A loopback server that accepts requests and never answers them. */
export async function startSilentServer(t) {
  return listen(t, createServer(() => {}));
}

/** A loopback port nothing listens on. */
export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Runs the robotsd binary named by ROBOTSD_BIN on a free loopback port until the test ends, and
 * resolves to its base URL once /readyz answers. A missing binary fails the test: never a skip.
 */
export async function startRobotsd(t, ...args) {
  const bin = process.env.ROBOTSD_BIN;
  if (!bin) {
    throw new Error(
      "ROBOTSD_BIN must name a robotsd binary (cargo build --release; .ci/client-typescript-checks.sh sets it)",
    );
  }
  const listenAt = `127.0.0.1:${await freePort()}`;
  // The operator contact only quiets robotsd's warning about its absence.
  const flags = ["--allow-private-networks", "--listen", listenAt, "--operator-contact", "mailto:tests@robotsd.invalid"];
  // Pacing (on by default in the Crawlee integration) keeps robotsd's --default-crawl-delay where
  // robots.txt states none: 1 s would make a crawl of the site as OtherBot (no crawl-delay) last
  // some 20 s.
  if (!args.includes("--default-crawl-delay")) flags.push("--default-crawl-delay", "50ms");
  const child = spawn(bin, [...flags, "--log-level", "warn", ...args], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  let exitCode = null;
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve((exitCode = code ?? signal))));
  t.after(async () => {
    child.kill();
    await exited;
  });
  const baseUrl = `http://${listenAt}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (exitCode !== null) throw new Error(`robotsd exited with ${exitCode} before it was ready`);
    try {
      const response = await fetch(`${baseUrl}/readyz`);
      if (response.ok) return baseUrl;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`robotsd did not become ready on ${listenAt}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The paths of the site that robotsd allows for `ua`, asked in one batch (never hard-coded). */
export async function allowedPaths(client, site, ua) {
  const paths = sitePaths();
  const results = await client.checkMany(
    paths.map((p) => site.url + p),
    ua,
  );
  return paths
    .filter((_, i) => {
      const result = results[i];
      if (isProblem(result)) throw new Error(`${paths[i]}: ${result.detail}`);
      return result.allowed;
    })
    .sort();
}

/** A counter of robotsd's own metrics, such as the API requests it answered by route. */
export async function requestsTo(baseUrl, method, route) {
  return metric(baseUrl, `robotsd_http_requests_total{method="${method}",route="${route}",status="200"}`);
}

/** The fetch slots robotsd handed out (`reserved`) or put off (`deferred`), as its metrics count them. */
export async function reservations(baseUrl, outcome) {
  return (
    (await metric(baseUrl, `robotsd_pace_reservations_total{outcome="${outcome}",scope="local"}`)) +
    (await metric(baseUrl, `robotsd_pace_reservations_total{outcome="${outcome}",scope="fleet"}`))
  );
}

/** The reports robotsd took (`POST /v1/feedback`) by signal: success, pushback, retry_after, timeout. */
export async function reports(baseUrl, signal) {
  return metric(baseUrl, `robotsd_pace_reports_total{signal="${signal}"}`);
}

async function metric(baseUrl, series) {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.split(" ").pop()) : 0;
}

/** A token file for --api-token-file. */
export function tokenFile(t, token) {
  const file = join(tempDir(t), "tokens");
  writeFileSync(file, `# test tokens\n${token}\n`);
  return file;
}

export { RobotsdClient };

/** The repository's root: tests/wba holds the verifying site and the test key. */
const REPO = fileURLToPath(new URL("../../../", import.meta.url));

/** The key directory's URL robotsd names in `Signature-Agent` (--wba-agent), as sites know the fleet by. */
export const WBA_DIRECTORY = "https://bot.example/.well-known/http-message-signatures-directory";

/**
 * robotsd holding the committed test key (RFC 9421's B.1.4, tests/wba/test-keys.json: never a key
 * to deploy), signing for {@link WBA_DIRECTORY}.
 */
export async function startSigningRobotsd(t, ...args) {
  return startRobotsd(t, "--wba-keys", join(REPO, "tests/wba/test-keys.json"), "--wba-agent", WBA_DIRECTORY, ...args);
}

/**
 * The loopback site of tests/wba/verifying_site.py, run as a program with the interpreter
 * ROBOTSD_WBA_PYTHON names (a virtualenv with PyPI's http-message-signatures: a verifier that
 * shares no code with robotsd). It fetches the key directory from `keysFrom` (a robotsd started
 * with {@link startSigningRobotsd}) as a site fetches it from the bot domain, and verifies every
 * request it gets: `pages` maps a path (with its query) to HTML (200) or `{ redirect: "/x" }`
 * (301), answered to verified requests only (401 otherwise; robots.txt to anyone). `log()` is
 * every request it saw, `{ method, path, verified, kid, reason }`, in order. An unset
 * ROBOTSD_WBA_PYTHON fails the test: never a skip.
 */
export async function startVerifyingSite(t, { keysFrom, robots, pages }) {
  const python = process.env.ROBOTSD_WBA_PYTHON;
  if (!python) {
    throw new Error(
      "ROBOTSD_WBA_PYTHON must name a Python with .ci/wba-requirements.txt installed (.ci/client-checks.sh exports it) for the verifying site",
    );
  }
  const dir = tempDir(t);
  writeFileSync(join(dir, "robots.txt"), robots);
  writeFileSync(join(dir, "pages.json"), JSON.stringify(pages));
  const child = spawn(
    python,
    [
      join(REPO, "tests/wba/verifying_site.py"),
      "--directory-url",
      WBA_DIRECTORY,
      "--fetch-from",
      `${keysFrom}/.well-known/http-message-signatures-directory`,
      "--robots",
      join(dir, "robots.txt"),
      "--pages",
      join(dir, "pages.json"),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let exitCode = null;
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve((exitCode = code ?? signal))));
  t.after(async () => {
    if (exitCode === null) child.kill();
    await exited;
  });
  const log = [];
  let buffered = "";
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the verifying site did not start within 20 s")), 20_000);
    exited.then((code) => reject(new Error(`the verifying site exited with ${code} before it listened`)));
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        const listening = /^listening (\d+)$/.exec(line);
        if (listening) {
          clearTimeout(timer);
          resolve(Number(listening[1]));
        } else if (line.trim()) {
          log.push(JSON.parse(line));
        }
      }
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    /** Every request the site saw, as it logged it (robots.txt included). */
    log: () => log.filter((entry) => "path" in entry),
    /** The requests for pages: all but robots.txt. */
    pageLog: () => log.filter((entry) => "path" in entry && entry.path !== "/robots.txt"),
  };
}
