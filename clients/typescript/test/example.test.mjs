// The example crawler's command line, as the shared end-to-end test runs it.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

import { RobotsdClient } from "@robotsd/client";

import { allowedPaths, freePort, sitePaths, startRobotsd, startSite, tempDir } from "./helpers.mjs";

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
