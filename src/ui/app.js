// robotsd's robots.txt tester. Plain modern JavaScript, no framework and no dependency: it talks
// only to this robotsd's own API (v1/robots, v1/check, v1/evaluate), so the service's fetch rules
// and destination checks apply to it unchanged. Text from robots.txt files and from answers is
// untrusted: it is only ever set as textContent, never parsed as HTML.

const $ = (id) => document.getElementById(id);
const form = $("tester");
const site = $("site");
const ua = $("ua");
const urls = $("urls");
const decoding = $("decoding");
const token = $("token");
const robots = $("robots");
const backdrop = document.querySelector(".backdrop");
const gutter = document.querySelector(".gutter");

// The state shared through the page URL (its fragment: never sent to a server). The edited text
// goes in only while it is short enough for a link.
const MAX_TEXT_IN_LINK = 4000;
const state = { source: "live", results: [], parsed: null, selected: 0, cutAt: null, runs: 0 };

const NOTES = {
  accepted_typo: (key) => `“${key}” is a misspelling Google accepts`,
  missing_colon: () => "no colon after the key: accepted, but write “key: value”",
  line_too_long: () => "longer than 16,663 bytes: the rest of the line is ignored",
  unknown_key: (key) => `“${key}” is not a robots.txt key: the line is ignored`,
  unsupported_key: (key) => `“${key}” is not used by Google: the line is ignored`,
  reported_only: (key) => `“${key}” is not used by Google's rules; robotsd reports it`,
  preference_syntax: () => "not a valid list of preferences (labels are lower case, “label=value, …”): this line states nothing",
  invalid_preference_value: (key) => `“${key}” needs y or n (yes or no for Content-Signal): left unknown`,
  unknown_preference_label: (key) => `“${key}” is not in the vocabulary robotsd implements: reported as written`,
  not_a_directive: () => "not a “key: value” line: ignored",
  rule_outside_group: () => "a rule before any user-agent line: ignored",
};

const REASONS = {
  matched_rule: "a rule matched",
  no_matching_rule: "no rule matched, so it is allowed",
  no_robots_txt: "the site has no robots.txt, so everything is allowed",
  redirect_limit: "robots.txt redirected too often; treated as absent",
  unreachable_disallow_all: "robots.txt is unreachable: everything is disallowed for the first hours of failures (Google's rule: 12 hours)",
  last_good_copy: "robots.txt is unreachable: the last good copy decides",
  unreachable_no_copy: "robots.txt has been unreachable past the disallow window and there is no earlier copy: everything is allowed",
  unreachable_30_days: "robots.txt has been unreachable longer than a last good copy is kept (Google: 30 days): treated as absent",
};

function readLink() {
  const p = new URLSearchParams(location.hash.slice(1));
  if (p.get("source") === "edit") state.source = "edit";
  if (p.has("url")) site.value = p.get("url");
  if (p.has("ua")) ua.value = p.get("ua");
  if (p.has("urls")) urls.value = p.get("urls");
  if (p.get("decoding") === "rfc9309") decoding.value = "rfc9309";
  if (p.has("text")) robots.value = p.get("text");
  form.elements.source.value = state.source;
}

function writeLink() {
  const p = new URLSearchParams();
  p.set("source", state.source);
  if (site.value) p.set("url", site.value);
  p.set("ua", ua.value);
  p.set("urls", urls.value);
  if (decoding.value !== "google") p.set("decoding", decoding.value);
  if (state.source === "edit" && robots.value.length <= MAX_TEXT_IN_LINK) p.set("text", robots.value);
  history.replaceState(null, "", `#${p}`);
}

export async function api(method, path, body) {
  const headers = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  const secret = sessionStorage.getItem("robotsd-token");
  if (secret) headers.authorization = `Bearer ${secret}`;
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    return { ok: false, problem: { title: "robotsd did not answer", detail: String(error) } };
  }
  let json = null;
  try { json = await response.json(); } catch { /* not JSON: handled below */ }
  if (response.status === 401) {
    $("token-field").hidden = false;
  }
  if (!response.ok) {
    return { ok: false, problem: json || { title: `HTTP ${response.status}` } };
  }
  return { ok: true, json };
}

export function problemText(problem) {
  return [problem.title, problem.detail].filter(Boolean).join(": ");
}

// Which field a problem concerns, from its type.
function fieldOf(problem) {
  const type = String(problem.type || "");
  if (/user-agent/.test(type) || problem.parameter === "ua") return "ua";
  if (/invalid-body|batch/.test(type)) return state.source === "edit" ? "urls" : "site";
  return state.source === "live" ? "site" : "urls";
}

function showError(field, text) {
  for (const name of ["site", "ua", "urls"]) {
    const box = $(`${name}-error`);
    const input = $(name);
    const mine = name === field && text;
    box.hidden = !mine;
    box.textContent = mine ? text : "";
    if (mine) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  }
}

function urlList() {
  return urls.value.split("\n").map((u) => u.trim()).filter(Boolean);
}

// Paths are taken relative to the site in Live; in Edit they are evaluated as given.
function absolute(u) {
  try { return new URL(u, site.value).href; } catch { return u; }
}

async function runLive() {
  if (!site.value.trim()) {
    showError("site", "Enter the URL of a site, for example https://example.com/.");
    return;
  }
  const run = ++state.runs;
  setVerdictText("Fetching robots.txt…", "");
  const held = await api("GET", `v1/robots?${new URLSearchParams({ url: site.value.trim(), include: "robots_txt" })}`);
  if (run !== state.runs) return;
  if (!held.ok) {
    showResults([], null);
    showError(fieldOf(held.problem), problemText(held.problem));
    setVerdictText(`No verdict: ${problemText(held.problem)}`, "");
    return;
  }
  const report = held.json;
  robots.value = report.robots_txt ?? "";
  state.parsed = report.parsed;
  state.cutAt = report.robots && report.robots.bytes >= 512000 ? report.robots.bytes : null;
  showOrigin(report, null);
  const list = urlList();
  if (!list.length) list.push("/");
  const query = new URLSearchParams({ percent_decoding: decoding.value });
  const checked = await api("POST", `v1/check?${query}`, { ua: ua.value, urls: list.map(absolute) });
  if (run !== state.runs) return;
  if (!checked.ok) {
    showError(fieldOf(checked.problem), problemText(checked.problem));
    showResults([], report.parsed);
    setVerdictText(`No verdict: ${problemText(checked.problem)}`, "");
    return;
  }
  showError(null);
  showOrigin(report, checked.json.results.find((r) => r.reason));
  showResults(checked.json.results, report.parsed, list);
}

async function runEdit() {
  const run = ++state.runs;
  const list = urlList();
  if (!list.length) list.push("/");
  const answer = await api("POST", "v1/evaluate", {
    robots_txt: robots.value,
    ua: ua.value,
    urls: list,
    percent_decoding: decoding.value,
    include: "parsed",
  });
  if (run !== state.runs) return;
  $("origin").hidden = true;
  if (!answer.ok) {
    showError(fieldOf(answer.problem), problemText(answer.problem));
    showResults([], null);
    setVerdictText(`No verdict: ${problemText(answer.problem)}`, "");
    return;
  }
  showError(null);
  state.cutAt = answer.json.cut_at_bytes ?? null;
  showResults(answer.json.results, answer.json.parsed, list);
}

// The typing delay's pending run, if any.
let timer = null;

function run() {
  // A run asked for now (a click, Enter) replaces one still waiting out the typing delay: one
  // fetch per request, and the answer shown is the one asked for.
  clearTimeout(timer);
  writeLink();
  return state.source === "live" ? runLive() : runEdit();
}

function setVerdictText(text, kind) {
  const box = $("verdict");
  box.className = `verdict ${kind}`;
  box.textContent = text;
}

function verdictWords(item) {
  if (item.error) return { kind: "", text: `Error: ${problemText(item.error)}` };
  return item.allowed ? { kind: "allow", text: "Allowed" } : { kind: "deny", text: "Disallowed" };
}

function ruleText(rule) {
  return rule ? `${rule.directive}: ${rule.pattern}` : "";
}

// The AI usage preferences of an answer, each vocabulary in its own spelling, and the RSL
// license terms (with --rsl).
function usageText(usage) {
  if (!usage) return "";
  const part = (name, prefs, yes, no) => prefs
    ? `${name} ${Object.entries(prefs).map(([k, p]) => `${k}=${p.value === "y" ? yes : no}`).join(", ")}`
    : null;
  return [part("Content-Usage", usage.content_usage, "y", "n"), part("Content-Signal", usage.content_signal, "yes", "no"),
    ...(usage.rsl || []).map(rslText)]
    .filter(Boolean).join("; ");
}

// One license's terms for the URL, or why there are none.
function rslText(report) {
  if (report.state !== "covered") {
    return `RSL ${report.state.replace("_", " ")}${report.reason ? ` (${report.reason})` : ""}`;
  }
  const scope = (verb, s) => {
    const parts = [s.usage.join(" "), s.user.join(" "), s.geo.join(" ")].filter(Boolean);
    return parts.length ? `${verb} ${parts.join(", ")}` : null;
  };
  const license = (l) => [scope("permits", l.permits), scope("prohibits", l.prohibits),
    l.payment ? `payment ${l.payment.type ?? "unstated"}${l.payment.amounts.map((a) => ` ${a.value}${a.currency ? ` ${a.currency}` : ""}`).join("")}` : "free"]
    .filter(Boolean).join(", ");
  return report.contents.map((c) => `RSL ${c.url}: ${c.licenses.map(license).join(" | ") || "no license"}${c.server ? `, license server ${c.server}` : ""}`)
    .join("; ");
}

// The lines that set the answer's usage preferences, and its License: lines.
function usageLines(item) {
  const lines = new Set();
  for (const prefs of [item?.usage?.content_usage, item?.usage?.content_signal]) {
    for (const p of Object.values(prefs || {})) lines.add(p.line);
  }
  for (const report of item?.usage?.rsl || []) lines.add(report.line);
  return lines;
}

function showResults(results, parsed, list = []) {
  state.results = results;
  state.parsed = parsed;
  state.list = list;
  state.selected = Math.min(state.selected, Math.max(results.length - 1, 0));
  const body = document.querySelector("#verdicts tbody");
  body.replaceChildren();
  results.forEach((item, i) => {
    const row = document.createElement("tr");
    row.tabIndex = 0;
    const words = verdictWords(item);
    const cells = [list[i] ?? "", words.text, ruleText(item.rule), item.rule ? String(item.rule.line) : "—", usageText(item.usage) || "—"];
    cells.forEach((text, c) => {
      const cell = document.createElement("td");
      cell.textContent = text;
      if (c === 0) cell.className = "url";
      if (c === 1) cell.className = `tag ${words.kind}`;
      if (c === 2 || c === 4) cell.className = "rule";
      row.append(cell);
    });
    row.addEventListener("click", () => select(i));
    row.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select(i); }
    });
    body.append(row);
  });
  $("verdicts").hidden = results.length === 0;
  showToken(results);
  select(state.selected);
}

function showToken(results) {
  const answer = results.find((r) => r.agent);
  const tokens = answer ? answer.agent.tokens : [];
  $("ua-token").textContent = tokens.length ? `Matched as: ${tokens.join(", ")}` : "";
}

function select(i) {
  state.selected = i;
  document.querySelectorAll("#verdicts tbody tr").forEach((row, r) => {
    row.classList.toggle("selected", r === i);
    row.setAttribute("aria-selected", String(r === i));
  });
  const item = state.results[i];
  if (!item) {
    if (!state.results.length && state.source === "edit") setVerdictText("Type a robots.txt to test it.", "");
    paintFile(null);
    return;
  }
  const words = verdictWords(item);
  let text = `${words.text}: ${state.list[i] ?? ""}`;
  if (item.rule) text += ` (line ${item.rule.line}, ${ruleText(item.rule)})`;
  else if (item.reason) text += ` (${REASONS[item.reason] ?? item.reason})`;
  if (item.usage) text += `. AI usage: ${usageText(item.usage)}`;
  setVerdictText(text, words.kind);
  paintFile(item);
}

// The lines of the groups that applied: each from its first user-agent line to the line before
// the next group starts (the last one to its last line with a rule), less trailing blank,
// comment and sitemap lines, which belong to no group.
function groupLines(item) {
  const lines = new Set();
  if (!item || !item.group || !state.parsed) return lines;
  const agents = new Set(item.group.lines);
  const text = robots.value.split("\n");
  // Sitemap: and License: lines are global: they belong to no group.
  const sitemaps = new Set([...state.parsed.sitemaps, ...(state.parsed.licenses || [])].map((s) => s.line));
  const groups = state.parsed.groups;
  groups.forEach((group, g) => {
    if (!group.agents.some((a) => agents.has(a.line))) return;
    const own = [...group.agents, ...group.rules, ...(group.usage || [])].map((x) => x.line);
    const first = Math.min(...own);
    let last = g + 1 < groups.length ? Math.min(...groups[g + 1].agents.map((a) => a.line)) - 1 : Math.max(...own);
    const outside = (n) => sitemaps.has(n) || /^\s*(#.*)?$/.test(text[n - 1] ?? "");
    while (last > first && outside(last)) last--;
    for (let n = first; n <= last; n++) lines.add(n);
  });
  return lines;
}

// The line (1-based) that holds byte `limit` of the text, as UTF-8.
function lineAtByte(text, limit) {
  const encoder = new TextEncoder();
  let bytes = 0;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    bytes += encoder.encode(lines[i]).length + 1;
    if (bytes > limit) return i + 1;
  }
  return null;
}

function paintFile(item) {
  const lines = robots.value.split("\n");
  const groups = groupLines(item);
  const decide = item && item.rule ? item.rule.line : null;
  const usage = usageLines(item);
  const notes = new Map();
  for (const d of (state.parsed && state.parsed.diagnostics) || []) {
    const say = NOTES[d.kind] ? NOTES[d.kind](d.key ?? "") : d.kind;
    notes.set(d.line, [...(notes.get(d.line) || []), say]);
  }
  const rsl = new Map((item?.usage?.rsl || []).map((r) => [r.line, r]));
  for (const license of (state.parsed && state.parsed.licenses) || []) {
    const report = rsl.get(license.line);
    const say = report
      ? `RSL license ${license.url}: ${rslText(report)}`
      : `RSL license ${license.url} (global, never part of a verdict; its terms are reported when robotsd runs with --rsl)`;
    notes.set(license.line, [...(notes.get(license.line) || []), say]);
  }
  const cut = state.cutAt ? lineAtByte(robots.value, state.cutAt) : null;
  if (cut) {
    notes.set(cut, [...(notes.get(cut) || []), `the file is cut at ${state.cutAt.toLocaleString("en")} bytes (Google reads 500 KiB): this line and those after it are ignored`]);
  }
  const back = document.createDocumentFragment();
  const numbers = document.createDocumentFragment();
  lines.forEach((text, i) => {
    const n = i + 1;
    const row = document.createElement("div");
    row.textContent = text || " ";
    if (groups.has(n)) row.className = "group";
    if (usage.has(n)) row.className = "usage";
    if (n === decide) row.className = "decide";
    if (cut && n >= cut) row.className = "cut";
    back.append(row);
    const number = document.createElement("div");
    number.textContent = String(n);
    if (notes.has(n)) {
      number.className = "note";
      number.title = notes.get(n).join("; ");
    }
    if (n === decide) number.className += " decide";
    numbers.append(number);
  });
  backdrop.replaceChildren(back);
  gutter.replaceChildren(numbers);
  syncScroll();
  const list = $("notes");
  list.replaceChildren();
  for (const [line, says] of [...notes.entries()].sort((a, b) => a[0] - b[0])) {
    const entry = document.createElement("li");
    const go = document.createElement("button");
    go.type = "button";
    go.className = "goto";
    go.textContent = `Line ${line}`;
    go.addEventListener("click", () => goToLine(line));
    entry.append(go, `: ${says.join("; ")}`);
    list.append(entry);
  }
  if (!notes.size) {
    const entry = document.createElement("li");
    entry.textContent = robots.value ? "Nothing to note." : "No file yet.";
    list.append(entry);
  }
}

function goToLine(line) {
  const lines = robots.value.split("\n");
  const start = lines.slice(0, line - 1).reduce((sum, l) => sum + l.length + 1, 0);
  robots.focus();
  robots.setSelectionRange(start, start + (lines[line - 1] || "").length);
  const lineHeight = parseFloat(getComputedStyle(robots).lineHeight) || 20;
  robots.scrollTop = Math.max(0, (line - 3) * lineHeight);
  syncScroll();
}

function syncScroll() {
  backdrop.scrollTop = robots.scrollTop;
  backdrop.scrollLeft = robots.scrollLeft;
  gutter.scrollTop = robots.scrollTop;
}

function when(date) {
  if (!date) return "—";
  const d = new Date(date);
  return Number.isNaN(d.getTime()) ? date : d.toLocaleString("en", { dateStyle: "medium", timeStyle: "short" });
}

const HOUR = 3600 * 1000;

// What a backoff means now, in words: the reason the checks gave, and when that reason ends
// (backoff.until, by this robotsd's windows; Google's are 12 hours and 30 days).
function backoffWords(backoff, answer) {
  const since = Date.parse(backoff.since);
  const end = backoff.until ? Date.parse(backoff.until) : NaN;
  const hours = Math.round((end - since) / HOUR);
  const rule = (google, name) =>
    hours === google
      ? `per Google's ${google === 12 ? "12-hour" : "30-day"} rule`
      : `after ${hours % 24 === 0 ? `${hours / 24} days` : `${hours} hours`} of failures (${name} of this robotsd; Google's is ${google === 12 ? "12 hours" : "30 days"})`;
  const until = when(backoff.until);
  const head = `unreachable since ${when(backoff.since)} (${backoff.failures} failed ${backoff.failures === 1 ? "fetch" : "fetches"}, last: ${backoff.last_error})`;
  const now = {
    unreachable_disallow_all: `disallowing everything until ${until}, ${rule(12, "the disallow window")}`,
    last_good_copy: `answering from the last good copy until ${until}, ${rule(720, "the last-copy window")}`,
    unreachable_no_copy: `allowing everything until ${until}: there is no earlier copy`,
    unreachable_30_days: "treated as having no robots.txt: unreachable for longer than the last good copy is kept",
  }[answer && answer.reason];
  return `${head}; ${now ?? "everything is disallowed for the first hours of failures, then the last good copy decides"}. Next try after ${when(backoff.next_retry)}.`;
}

function showOrigin(report, answer) {
  const dl = $("origin");
  const source = report.robots || {};
  const rows = [
    ["robots.txt", report.robots_url],
    ["State", { parsed: "parsed", no_robots_txt: "no robots.txt (everything allowed)", unreachable: "unreachable", refused: "refused by robotsd's destination rules" }[report.state] ?? report.state],
    ["HTTP status", source.status ?? "—"],
    ["Fetched", when(source.fetched_at)],
    ["Expires", when(source.expires_at)],
    ["Cache", source.cache],
  ];
  if (source.final_url && source.final_url !== report.robots_url) rows.push(["Redirected to", source.final_url]);
  const backoff = source.backoff;
  if (backoff) {
    rows.push(["Backoff", backoffWords(backoff, answer)]);
  }
  dl.replaceChildren();
  for (const [term, value] of rows) {
    const dt = document.createElement("dt");
    dt.textContent = term;
    const dd = document.createElement("dd");
    dd.textContent = String(value);
    dl.append(dt, dd);
  }
  dl.hidden = false;
}

function setSource(source) {
  state.source = source;
  const edit = source === "edit";
  robots.readOnly = !edit;
  $("site-field").hidden = edit;
  $("file-note").textContent = edit
    ? "Edit the file: the verdict follows as you type. Changes are not sent to the site."
    : "The file as robotsd fetched it. Choose Edit to try a change before deploying it.";
}

function debounced() {
  clearTimeout(timer);
  timer = setTimeout(run, 300);
}

form.addEventListener("submit", (e) => {
  e.preventDefault();
  run();
});
form.elements.source.forEach((radio) => radio.addEventListener("change", () => {
  // Edit starts from whatever the editor holds: in Live, the fetched file.
  setSource(radio.value);
  run();
}));
ua.addEventListener("input", debounced);
urls.addEventListener("input", debounced);
decoding.addEventListener("change", run);
site.addEventListener("input", () => writeLink());
robots.addEventListener("input", () => { if (state.source === "edit") debounced(); });
robots.addEventListener("scroll", syncScroll);
token.addEventListener("change", () => {
  if (token.value) sessionStorage.setItem("robotsd-token", token.value);
  else sessionStorage.removeItem("robotsd-token");
  run();
});

readLink();
setSource(state.source);
paintFile(null);
if (state.source === "edit" || site.value) run();
