// The paced site of startPacedSite (helpers.mjs), in a worker thread of its own: the timestamps of
// the requests it records are taken on an event loop the crawler under test never keeps busy.
import { createServer } from "node:http";
import { parentPort, workerData } from "node:worker_threads";

const { robots, pages, script, lag } = workerData;
const arrivals = [];
const hits = new Map();

const server = createServer((req, res) => {
  const at = performance.now();
  const path = new URL(req.url, "http://site").pathname;
  if (path === "/warm") {
    res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>warm</title>");
    return;
  }
  if (path === "/robots.txt") {
    res.writeHead(200, { "content-type": "text/plain" }).end(robots);
    return;
  }
  const hit = hits.get(path) ?? 0;
  hits.set(path, hit + 1);
  // What the script says this hit of the path answers; then the page itself.
  const scripted = script[path]?.[hit];
  if (scripted === "hang") {
    arrivals.push({ path, at, status: null });
    return; // never answered: the crawler's navigation times out
  }
  if (scripted) {
    arrivals.push({ path, at, status: scripted.status });
    res.writeHead(scripted.status, { "content-type": "text/plain", ...scripted.headers }).end("scripted answer");
    return;
  }
  if (path !== "/" && !pages.includes(path)) {
    arrivals.push({ path, at, status: 404 });
    res.writeHead(404, { "content-type": "text/html" }).end("<p>not found</p>");
    return;
  }
  const lagging = lag !== null && arrivals.length >= lag.after;
  arrivals.push({ path, at, status: 200 });
  const links = path === "/" ? pages.map((p) => `<a href="${p}">${p}</a>`).join("") : "";
  // The empty icon keeps a browser from asking for /favicon.ico, which no crawler decided to fetch.
  const answer = () =>
    res
      .writeHead(200, { "content-type": "text/html; charset=utf-8" })
      .end(`<!doctype html><title>${path}</title><link rel="icon" href="data:,">${links}`);
  if (lagging) setTimeout(answer, lag.ms);
  else answer();
});

parentPort.on("message", (message) => {
  if (message === "arrivals") parentPort.postMessage({ arrivals });
});
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }));
