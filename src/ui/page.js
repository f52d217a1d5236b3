// The tester's "After the fetch" panel: what a crawler received for one page (its headers and
// HTML), read by robotsd's POST /v1/page for the user agent of the form above. Text from pages
// and answers is untrusted: it is only ever set as textContent.

import { api, problemText } from "./app.js";

const $ = (id) => document.getElementById(id);
const form = $("page-form");
const pageUrl = $("page-url");
const headersBox = $("page-headers");
const html = $("page-html");
const verdict = $("page-verdict");
const summary = $("page-summary");
const rules = $("page-rules");

function showError(field, text) {
  for (const name of ["page-url", "page-headers"]) {
    const box = $(`${name}-error`);
    const mine = name === field && text;
    box.hidden = !mine;
    box.textContent = mine ? text : "";
    if (mine) $(name).setAttribute("aria-invalid", "true");
    else $(name).removeAttribute("aria-invalid");
  }
}

// "Name: value" lines as [name, value] pairs, in order; the line number of the first that is not one.
function parseHeaders(text) {
  const pairs = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    const colon = line.indexOf(":");
    if (colon <= 0) return { bad: i + 1 };
    pairs.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
  }
  return { pairs };
}

const yesNo = (v) => (v ? "yes" : "no");
const limit = (v, unit) => (v === null || v === undefined ? "no limit" : `${v} ${unit}`);

function fact(dl, term, text) {
  const dt = document.createElement("dt");
  dt.textContent = term;
  const dd = document.createElement("dd");
  dd.textContent = text;
  dl.append(dt, dd);
}

function usageWords(usage) {
  const combined = Object.entries(usage.combined)
    .map(([category, c]) => `${category} ${c.value ?? "unknown"}${c.sources.length ? ` (${c.sources.join(" + ").replace("robots_txt", "robots.txt")})` : ""}`)
    .join(", ");
  const header = usage.content_usage_header.state === "unparseable"
    ? "Content-Usage header does not parse: it states nothing"
    : null;
  return [combined, header].filter(Boolean).join("; ");
}

function tdmWords(tdm) {
  if (tdm.reservation === null) return tdm.source ? `unset (not 0 or 1, in the ${tdm.source})` : "not stated";
  const words = tdm.reservation ? "reserved" : "not reserved";
  return `${words}, by the ${tdm.source}${tdm.policy ? `; policy ${tdm.policy}` : ""}`;
}

function show(answer) {
  summary.replaceChildren();
  rules.tBodies[0].replaceChildren();
  if (!answer.robots) {
    verdict.className = "verdict deny";
    verdict.textContent = "robots.txt disallows this URL: a crawler that obeys it never fetches the page, so its own rules are never read.";
    summary.hidden = true;
    rules.hidden = true;
    return;
  }
  const r = answer.robots;
  verdict.className = `verdict ${r.index && r.follow ? "allow" : "deny"}`;
  verdict.textContent = `${r.index ? "May be indexed" : "Not to be indexed (noindex)"}; links ${r.follow ? "may be followed" : "not to be followed (nofollow)"}.`;
  fact(summary, "Snippet", r.snippet ? limit(r.max_snippet, "characters") : "none");
  fact(summary, "Image preview", r.max_image_preview ?? "default");
  fact(summary, "Video preview", limit(r.max_video_preview, "seconds"));
  fact(summary, "Images indexed", yesNo(r.image_index));
  fact(summary, "Translation", yesNo(r.translate));
  if (r.index_if_embedded) fact(summary, "Indexed if embedded", "yes");
  if (r.unavailable_after) fact(summary, "Unavailable after", r.unavailable_after);
  if (r.uninterpreted.length) fact(summary, "Not interpreted", r.uninterpreted.join(", "));
  fact(summary, "AI usage", usageWords(answer.usage) || "none stated");
  fact(summary, "TDMRep", tdmWords(answer.usage.tdm));
  if (answer.document_cut) fact(summary, "Document", "longer than 2 MiB: its start was read");
  summary.hidden = false;
  for (const rule of r.rules) {
    const row = rules.tBodies[0].insertRow();
    row.insertCell().textContent = rule.rule;
    row.insertCell().textContent = rule.agent ?? "every crawler";
    row.insertCell().textContent = rule.header !== undefined ? `header ${rule.header + 1}` : `HTML line ${rule.line}`;
    row.insertCell().textContent = rule.ignored ? `ignored: ${rule.ignored}` : "applies";
  }
  rules.hidden = r.rules.length === 0;
}

form.addEventListener("submit", async (e) => {
  e.preventDefault();
  const parsed = parseHeaders(headersBox.value);
  if (parsed.bad) {
    showError("page-headers", `Line ${parsed.bad} is not “Name: value”.`);
    return;
  }
  if (!pageUrl.value.trim()) {
    showError("page-url", "Enter the page's URL, for example https://example.com/article.");
    return;
  }
  showError(null);
  verdict.className = "verdict";
  verdict.textContent = "Reading the page…";
  const body = { url: pageUrl.value.trim(), ua: $("ua").value, headers: parsed.pairs };
  if (html.value) body.html = html.value;
  const answer = await api("POST", "v1/page", body);
  if (!answer.ok) {
    const type = String(answer.problem.type || "");
    showError(/page|body/.test(type) ? "page-headers" : "page-url", problemText(answer.problem));
    verdict.className = "verdict";
    verdict.textContent = `Not read: ${problemText(answer.problem)}`;
    summary.hidden = true;
    rules.hidden = true;
    return;
  }
  show(answer.json);
});
