// Side-by-side browser benchmark: one client (the official MCP TypeScript
// SDK) drives yagent serve (--profile full) and Playwright MCP (pinned in
// package-lock.json, headless, on this machine's Chromium) over stdio, on
// six kinds of page this script serves on loopback: a long documentation
// page, a form of fifteen fields, a table of 500 rows, a news front page, a
// single-page app, and a page with a same-site frame, a cross-site frame
// (the server under its other name, localhost) and a shadow-DOM component.
// Per page and server it measures the bytes of the navigation's answer, of
// reading the whole page (every snapshot call a cut answer names), the
// elements with refs reachable, and each action: its answer's bytes and
// whether it worked (checked afterwards, outside the counts). Writes a
// Markdown fragment and prints a verdict per target.
//
//   node browser.mjs --yagent ../../bin/yagent --plugins ../../bin/plugins --out browser.md

import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = path.dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const opts = {
    yagent: path.resolve(here, "../../bin/yagent"),
    plugins: path.resolve(here, "../../bin/plugins"),
    chromium: "",
    out: "",
  };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!(key in opts)) throw new Error(`unknown option ${argv[i]}`);
    opts[key] = argv[i + 1];
  }
  if (!opts.chromium) {
    opts.chromium = ["/usr/lib/chromium/chromium", "/usr/bin/chromium", "/usr/bin/google-chrome"].find((p) => fs.existsSync(p)) || "";
  }
  return opts;
}

const opts = parseArgs(process.argv);

// The pages.
function pages(base, other) {
  const html = (title, body) => `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;
  const docs = [];
  for (let i = 0; i < 240; i++) {
    docs.push(`<h2 id="s${i}">Section ${i}</h2><p>${"Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(12)}</p>
<pre>make target-${i} ARGS="--flag ${i}"</pre><a href="#s${(i + 1) % 240}">Next section ${i}</a> <a href="/api/${i}">API ${i}</a>
<button onclick="document.getElementById('status').textContent='copied ${i}'">Copy example ${i}</button>`);
  }
  const fields = ["Name", "Email", "City", "Street", "Zip", "Phone", "Company", "Title", "Website", "Notes"];
  const rows = [];
  for (let i = 0; i < 500; i++) rows.push(`<tr><td>${i}</td><td>Item ${i}</td><td>${(i * 7) % 100}</td></tr>`);
  const news = [];
  for (let i = 0; i < 60; i++) news.push(`<article><h3><a href="/article/${i}">Headline number ${i}</a></h3><p>Summary of story ${i}.</p></article>`);
  return {
    "/docs": html("Docs", `<nav><a href="/">Home</a></nav><main>${docs.join("\n")}</main><p id="status">idle</p>`),
    "/form": html("Form", `<form action="/done" method="get">
${fields.map((f) => `<label>${f} <input name="${f.toLowerCase()}"></label>`).join("\n")}
<label>Birthday <input type="date" name="dob"></label>
<label>Country <select name="country"><option value="fr">France</option><option value="de">Germany</option><option value="it">Italy</option></select></label>
<label><input type="checkbox" name="news"> Newsletter</label>
<fieldset><legend>Plan</legend><label><input type="radio" name="plan" value="a"> Basic</label><label><input type="radio" name="plan" value="b"> Pro</label></fieldset>
<label>Comment <textarea name="comment"></textarea></label>
<button type="submit">Send</button></form>`),
    "/done": null, // echoes the query
    "/table": html("Table", `<button onclick="const b=document.getElementById('rows');[...b.rows].reverse().forEach(r=>b.appendChild(r))">Sort by ID</button>
<table><thead><tr><th>ID</th><th>Name</th><th>Score</th></tr></thead><tbody id="rows">${rows.join("")}</tbody></table>`),
    "/news": html("News", `<header><a href="/">Front page</a><label>Search <input type="search" name="q" oninput="document.getElementById('q').textContent='searching '+this.value"></label></header>
<p id="q">no search</p>${news.join("\n")}<footer><a href="/about">About</a></footer>`),
    "/spa": html("App", `<nav><button onclick="show('home')">Home view</button><button onclick="show('settings')">Settings view</button></nav><div id="view"><h1>Home</h1></div>
<script>function show(v){document.getElementById('view').innerHTML = v==='settings' ? '<h1>Settings</h1><label>Theme <select><option>Light</option><option>Dark</option></select></label>' : '<h1>Home</h1>'}</script>`),
    "/frames": html("Frames", `<h1>Frames</h1><p id="st">outer idle</p>
<iframe title="Same-site frame" src="${base}/inner?n=same" width="300" height="120"></iframe>
<iframe title="Cross-site frame" src="${other}/inner?n=cross" width="300" height="120"></iframe>
<my-widget></my-widget>
<script>customElements.define('my-widget', class extends HTMLElement { constructor(){ super(); const r=this.attachShadow({mode:'open'}); r.innerHTML='<button>Shadow button</button><span>shadow idle</span>'; r.querySelector('button').onclick=()=>{ r.querySelector('span').textContent='shadow clicked' } } })</script>`),
    "/inner": null,
  };
}

function serve() {
  return new Promise((resolve) => {
    const srv = http.createServer((req, res) => {
      const u = new URL(req.url, "http://x");
      const port = srv.address().port;
      const base = `http://127.0.0.1:${port}`, other = `http://localhost:${port}`;
      const p = pages(base, other);
      res.setHeader("Content-Type", "text/html; charset=utf-8");
      if (u.pathname === "/done") return res.end(`<!doctype html><title>Done</title><p>sent ${u.search.replace(/[<>&]/g, "")}</p>`);
      if (u.pathname === "/inner") {
        const n = u.searchParams.get("n");
        return res.end(`<!doctype html><title>Inner</title><button onclick="document.getElementById('i').textContent='${n} clicked'">${n} frame button</button><p id="i">${n} idle</p>`);
      }
      if (p[u.pathname]) return res.end(p[u.pathname]);
      res.end(`<!doctype html><title>${u.pathname}</title><p>${u.pathname}</p>`);
    });
    srv.listen(0, "127.0.0.1", () => resolve(srv));
  });
}

// The servers.
async function connect(name) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "bench-browser-"));
  let transport;
  if (name === "yagent") {
    fs.mkdirSync(path.join(home, ".yagent"));
    fs.writeFileSync(path.join(home, ".yagent", "config.yaml"), 'network: {allow: ["127.0.0.1", "localhost"]}\n');
    transport = new StdioClientTransport({
      command: opts.yagent,
      args: ["serve", "--profile", "full", "--workspace", home, "--plugin-dir", opts.plugins],
      env: { ...process.env, HOME: home },
      stderr: "ignore",
    });
  } else {
    const args = [path.join(here, "node_modules/@playwright/mcp/cli.js"), "--headless", "--isolated", "--executable-path", opts.chromium, "--output-dir", home];
    if (process.getuid && process.getuid() === 0) args.push("--no-sandbox");
    transport = new StdioClientTransport({ command: process.execPath, args, env: { ...process.env, HOME: home }, stderr: "ignore" });
  }
  const client = new Client({ name: "bench-browser", version: "0" });
  await client.connect(transport);
  // Playwright MCP names the element "target" since 0.0.8x, "ref" before.
  const tools = await client.listTools();
  const click = tools.tools.find((t) => t.name === "browser_click");
  const refParam = click && click.inputSchema.properties && click.inputSchema.properties.target ? "target" : "ref";
  if (name === "yagent") {
    // The browser tools are deferred under full: load them.
    await client.callTool({ name: "load_tool", arguments: { query: "browser" } }).catch(() => {});
  }
  if (name === "yagent") return { name, client, refParam: "ref" };
  return { name, client, refParam };
}

const text = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

async function call(s, tool, args) {
  const r = await s.client.callTool({ name: tool, arguments: args });
  const t = text(r);
  return { text: t, bytes: Buffer.byteLength(t), error: !!r.isError };
}

// refIn finds the ref of the element whose line names label.
function refIn(snapshot, label) {
  for (const line of snapshot.split("\n")) {
    if (line.includes(label)) {
      const m = line.match(/\[ref=([a-z0-9]+)\]/);
      if (m) return m[1];
    }
  }
  return "";
}

// find returns the ref of label on the current page, from the last answer
// or else a snapshot (yagent's scoped by the label, as a model would ask),
// and the bytes that snapshot cost: a server whose answers leave the
// snapshot out (Playwright MCP writes it to a file) pays for it here.
async function find(s, last, label) {
  const ref = refIn(last, label);
  if (ref) return { ref, bytes: 0 };
  const r = s.name === "yagent" ? await call(s, "browser_snapshot", { query: label }) : await call(s, "browser_snapshot", {});
  return { ref: refIn(r.text, label), bytes: r.bytes, text: r.text };
}

// readAll reads the whole page: yagent by following each cut answer's
// next call. It returns the bytes, the calls and the distinct refs.
const interactive = /^\s*- (button|link|textbox|searchbox|checkbox|radio|combobox|listbox|slider|spinbutton|switch|tab|menuitem|date|datetime|time|color)\b.*\[ref=([a-z0-9]+)\]/;

async function readAll(s) {
  let r = await call(s, "browser_snapshot", {});
  let bytes = r.bytes, calls = 1;
  const refs = new Set(), controls = new Set();
  const note = (t) => {
    for (const line of t.split("\n")) {
      const m = line.match(/\[ref=([a-z0-9]+)\]/);
      if (m) refs.add(m[1]);
      const c = line.match(interactive);
      if (c) controls.add(c[2]);
    }
  };
  note(r.text);
  for (;;) {
    const m = r.text.match(/browser_snapshot (\{"offset":\d+\})\s*$/);
    if (!m) break;
    r = await call(s, "browser_snapshot", JSON.parse(m[1]));
    bytes += r.bytes;
    calls++;
    note(r.text);
  }
  return { bytes, calls, refs: refs.size, controls: controls.size };
}

async function act(s, last, action) {
  const f = await find(s, last, action.label);
  if (!f.ref) return { bytes: f.bytes, worked: false, text: f.text || "" };
  const args = { [s.refParam]: f.ref, ...action.args };
  if (s.name === "playwright") args.element = action.label;
  const r = await call(s, action.tool, args);
  let worked = !r.error;
  if (worked && action.expect) {
    const check = s.name === "yagent" ? await call(s, "browser_snapshot", { query: action.expect }) : await call(s, "browser_snapshot", {});
    worked = check.text.includes(action.expect);
  }
  // The next action finds its ref in what the model saw last.
  return { bytes: f.bytes + r.bytes, worked, text: f.bytes ? f.text + "\n" + r.text : r.text };
}

const plan = [
  { page: "/docs", actions: [{ tool: "browser_click", label: '"Copy example 230"', expect: "copied 230" }] },
  {
    page: "/form",
    flow: true,
    actions: [
      { tool: "browser_type", label: 'textbox "Name"', args: { text: "Ada Lovelace" } },
      { tool: "browser_type", label: 'textbox "Email"', args: { text: "ada@example.org" } },
      { tool: "browser_type", label: 'textbox "City"', args: { text: "London" } },
      { tool: "browser_type", label: '"Birthday"', args: { text: "1815-12-10" } },
      { tool: "browser_select_option", label: 'combobox "Country"', args: { values: ["de"] } },
      { tool: "browser_click", label: 'button "Send"', expect: "dob=1815-12-10" },
    ],
  },
  { page: "/table", actions: [{ tool: "browser_click", label: 'button "Sort by ID"', expect: "Item 499" }] },
  { page: "/news", actions: [{ tool: "browser_type", label: '"Search"', args: { text: "yagent" }, expect: "searching yagent" }] },
  { page: "/spa", actions: [{ tool: "browser_click", label: 'button "Settings view"', expect: "Theme" }] },
  {
    page: "/frames",
    actions: [
      { tool: "browser_click", label: '"same frame button"', expect: "same clicked" },
      { tool: "browser_click", label: '"cross frame button"', expect: "cross clicked" },
      { tool: "browser_click", label: '"Shadow button"', expect: "shadow clicked" },
    ],
  },
];

const srv = await serve();
const base = `http://127.0.0.1:${srv.address().port}`;
const servers = [await connect("yagent"), await connect("playwright")];
const results = {};
for (const s of servers) {
  results[s.name] = {};
  for (const p of plan) {
    const nav = await call(s, "browser_navigate", { url: base + p.page });
    const read = await readAll(s);
    // Navigate again: the actions start from the navigation's answer.
    const start = await call(s, "browser_navigate", { url: base + p.page });
    let last = start.text;
    const acts = [];
    for (const a of p.actions) {
      const r = await act(s, last, a);
      acts.push(r);
      if (r.text) last = r.text;
    }
    results[s.name][p.page] = { nav: nav.bytes, read, acts, flow: p.flow ? start.bytes + acts.slice(0, 3).reduce((n, a) => n + a.bytes, 0) + acts[acts.length - 1].bytes : 0 };
  }
  await s.client.close();
}
srv.close();

// The report.
const y = results.yagent, pw = results.playwright;
const pwVersion = JSON.parse(fs.readFileSync(path.join(here, "node_modules/@playwright/mcp/package.json"), "utf8")).version;
const lines = [];
lines.push("## Browser side by side with Playwright MCP");
lines.push("");
lines.push(`bench/mcp/browser.sh, ${new Date().toISOString().slice(0, 10)}: one MCP client drives \`yagent serve --profile full\` and Playwright MCP ${pwVersion} (\`--headless --isolated --no-sandbox\`, the same Chromium, ${opts.chromium}) on six pages the script serves on loopback. "Whole page" is every snapshot call a cut answer names (yagent pages by 40 KB; Playwright answers in one). An action's bytes include the snapshot taken to find its ref when the last answer did not show it (Playwright MCP ${pwVersion} writes the snapshot of a navigation or an action to a file, so its model reads it with browser_snapshot). "Worked" is checked afterwards, outside the counts.`);
lines.push("");
lines.push("| page | navigate, bytes (yagent / Playwright) | whole page: bytes, calls (yagent / Playwright) | elements with refs (of them controls) | actions worked | bytes of each action (yagent / Playwright) |");
lines.push("|---|---:|---:|---:|---:|---|");
for (const p of plan) {
  const a = y[p.page], b = pw[p.page];
  const worked = (r) => r.acts.filter((x) => x.worked).length + "/" + r.acts.length;
  lines.push(`| ${p.page} | ${a.nav} / ${b.nav} | ${a.read.bytes}, ${a.read.calls} / ${b.read.bytes}, ${b.read.calls} | ${a.read.refs} (${a.read.controls}) / ${b.read.refs} (${b.read.controls}) | ${worked(a)} / ${worked(b)} | ${a.acts.map((x, i) => `${x.bytes}/${b.acts[i].bytes}`).join(", ")} |`);
}
const flowY = y["/form"].flow, flowP = pw["/form"].flow;
lines.push("");
lines.push(`Navigate, type, type, type, click (the form, refs found as above): yagent ${flowY} bytes, Playwright ${flowP}: ${(flowY / flowP).toFixed(2)}×. The actions, by page: docs, click "Copy example 230" (near the end); form, type name, email and city, set the birthday (a date input), select the country, click Send; table, "Sort by ID"; news, type into the search box; app, "Settings view"; frames, the same-site frame's button, the cross-site frame's, the shadow-DOM component's.`);
const md = lines.join("\n") + "\n";
if (opts.out) fs.writeFileSync(opts.out, md);
console.log(md);

// Verdicts.
const verdicts = [];
for (const p of plan) {
  const a = y[p.page], b = pw[p.page];
  const kb = Math.max(1, Math.ceil(a.read.bytes / 40000));
  verdicts.push([`${p.page}: every element in at most one call per 40 KB`, a.read.calls <= kb]);
  verdicts.push([`${p.page}: every control Playwright gives a ref has one in yagent`, a.read.controls >= b.read.controls]);
  b.acts.forEach((x, i) => { if (x.worked) verdicts.push([`${p.page}: action ${i + 1} works in yagent as in Playwright`, a.acts[i].worked]); });
}
verdicts.push(["the form flow at most 0.8× Playwright's bytes", flowY <= 0.8 * flowP]);
for (const [what, ok] of verdicts) console.log(`${ok ? "met " : "MISSED"}  ${what}`);
