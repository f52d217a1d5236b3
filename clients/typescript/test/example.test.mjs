// The example crawler's command line, as the shared end-to-end test runs it.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

import { RobotsdClient } from "@robotsd/client";

import {
  allowedPaths,
  freePort,
  sitePaths,
  startRobotsd,
  startSigningRobotsd,
  startSite,
  startVerifyingSite,
  tempDir,
} from "./helpers.mjs";

const example = fileURLToPath(new URL("../examples/crawlee-crawl.mjs", import.meta.url));

function run(t, ...args) {
  return new Promise((resolve) => {
    // From a scratch directory: the example must leave no ./storage behind.
    const cwd = tempDir(t);
    execFile(process.execPath, [example, ...args], { cwd, timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr, cwd });
    });
  });
}

test("the example crawler prints what it fetched and what robotsd refused, as one JSON line", async (t) => {
  const site = await startSite(t);
  const robotsd = await startRobotsd(t);
  const { code, stdout, stderr, cwd } = await run(t, "--robotsd", robotsd, "--start", `${site.url}/`, "--ua", "ExampleBot");
  assert.equal(code, 0, stderr);

  const lines = stdout.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, `one line on stdout, got: ${stdout}`);
  const result = JSON.parse(lines[0]);
  assert.deepEqual(Object.keys(result), ["fetched", "disallowed"]);

  const allowed = await allowedPaths(new RobotsdClient({ baseUrl: robotsd }), site, "ExampleBot");
  assert.deepEqual(result.fetched, allowed);
  assert.deepEqual(site.pages(), allowed, "the site saw exactly the allowed pages");
  assert.deepEqual(result.disallowed, sitePaths().filter((p) => !allowed.includes(p)).sort());
  for (const page of sitePaths()) {
    if (allowed.includes(page)) assert.equal(site.hits(page), 1, `${page} fetched once`);
  }
  assert.equal(site.hits("/robots.txt"), 1, "robots.txt is fetched once, by robotsd");
  assert.match(site.robotsAgents[0], /^robotsd\//);
  assert.ok(site.pageAgents.size === 1 && site.pageAgents.has("ExampleBot"), [...site.pageAgents].join());
  assert.match(stderr, /Finished!/, "Crawlee's logs go to stderr");
  assert.match(stderr, /"requestsFailed":0/, "refused pages are skipped, not failed");
  assert.match(stderr, /\/private\/1 is disallowed by robots\.txt line 2 \(disallow: \/private\/\)/);
  assert.ok(!existsSync(join(cwd, "storage")), "no ./storage left behind");

  // --no-pace: verdicts only, the same pages fetched.
  const unpacedSite = await startSite(t);
  const unpaced = await run(t, "--robotsd", robotsd, "--start", `${unpacedSite.url}/`, "--ua", "ExampleBot", "--no-pace");
  assert.equal(unpaced.code, 0, unpaced.stderr);
  assert.deepEqual(JSON.parse(unpaced.stdout).fetched, allowed);
  assert.deepEqual(unpacedSite.pages(), allowed);
});

test("the example crawler refuses a disallowed start URL and fails closed without robotsd", async (t) => {
  const site = await startSite(t);
  const robotsd = await startRobotsd(t);
  const refused = await run(t, "--robotsd", robotsd, "--start", `${site.url}/private/1`, "--ua", "ExampleBot");
  assert.equal(refused.code, 0, refused.stderr);
  assert.deepEqual(JSON.parse(refused.stdout), { fetched: [], disallowed: ["/private/1"] });

  const down = `http://127.0.0.1:${await freePort()}`;
  const closed = await run(t, "--robotsd", down, "--start", `${site.url}/`, "--ua", "ExampleBot");
  assert.equal(closed.code, 1);
  assert.deepEqual(JSON.parse(closed.stdout), { fetched: [], disallowed: [] });
  assert.deepEqual(site.pages(), []);

  const usage = await run(t, "--robotsd", robotsd);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /^usage: /);
});

test("the example crawler with --sign sends every request signed, and the site verifies each", async (t) => {
  const robotsd = await startSigningRobotsd(t);
  const pages = {
    "/": '<a href="a">a</a> <a href="b?x=1">b</a> <a href="private/secret">secret</a> <a href="old">old</a>',
    "/a": "<p>a</p>",
    "/b?x=1": "<p>b</p>",
    "/old": { redirect: "/new" },
    "/new": "<p>new</p>",
    "/private/secret": "<p>secret</p>",
  };
  const site = await startVerifyingSite(t, { keysFrom: robotsd, robots: "User-agent: *\nDisallow: /private\n", pages });
  const { code, stdout, stderr } = await run(t, "--robotsd", robotsd, "--start", `${site.url}/`, "--ua", "ExampleBot", "--sign");
  assert.equal(code, 0, stderr);
  assert.deepEqual(JSON.parse(stdout), { fetched: ["/", "/a", "/b", "/new"], disallowed: ["/private/secret"] });
  const requests = site.pageLog();
  assert.deepEqual(requests.map((entry) => entry.path).sort(), ["/", "/a", "/b?x=1", "/new", "/old"]);
  for (const entry of requests) assert.equal(entry.verified, true, `${entry.path}: ${entry.reason}`);

  // Against a robotsd that holds no key, nothing is sent, and the crawl fails.
  const keyless = await startRobotsd(t);
  const off = await run(t, "--robotsd", keyless, "--start", `${site.url}/a`, "--ua", "ExampleBot", "--sign");
  assert.equal(off.code, 1);
  assert.deepEqual(JSON.parse(off.stdout), { fetched: [], disallowed: [] });
  assert.match(off.stderr, /signing-off|Signing is off/);
  assert.equal(site.pageLog().length, requests.length, "no request for the page");
});
