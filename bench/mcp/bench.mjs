// Side-by-side MCP benchmark: one client (the official MCP TypeScript SDK)
// starts each server over stdio on the same temporary workspace and
// measures start to first tools/list, read_file latency, read throughput
// with calls in flight, resident memory, and how each server's edit tool
// handles a corpus of imperfect edits. The servers: yagent, the floor
// (bench/floor: the MCP Go SDK serving read_file from its own process) and
// @modelcontextprotocol/server-filesystem. Writes a Markdown fragment with
// every figure as a ratio of yagent to the floor and to server-filesystem,
// and prints a verdict per target to stdout.
//
//   node bench.mjs --yagent ../../bin/yagent --floor ../../bin/bench/floor --corpus ../../plugins/fs/testdata/corpus --out mcp.md
//
// Options: --rounds N (5), --starts N (15), --reads N (300), --inflight N
// (32), --calls N (3000 per throughput round), --json FILE (raw figures).

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = path.dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const opts = {
    yagent: path.resolve(here, "../../bin/yagent"),
    floor: path.resolve(here, "../../bin/bench/floor"),
    corpus: path.resolve(here, "../../plugins/fs/testdata/corpus"),
    out: "",
    json: "",
    rounds: 5,
    starts: 15,
    reads: 300,
    inflight: 32,
    calls: 3000,
  };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!(key in opts)) throw new Error(`unknown option ${argv[i]}`);
    opts[key] = typeof opts[key] === "number" ? Number(argv[i + 1]) : argv[i + 1];
  }
  return opts;
}

const opts = parseArgs(process.argv);
const serverFsEntry = path.join(here, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const serverFsVersion = JSON.parse(
  fs.readFileSync(path.join(here, "node_modules/@modelcontextprotocol/server-filesystem/package.json"), "utf8"),
).version;
const sdkVersion = JSON.parse(
  fs.readFileSync(path.join(here, "node_modules/@modelcontextprotocol/sdk/package.json"), "utf8"),
).version;

// The servers under test. Each reads the same 4 KB file and edits the same
// copies of the corpus sources; only the tool names and parameters differ.
// The floor has no edit tool.
function servers(workspace, home) {
  return [
    {
      name: "yagent",
      label: "`yagent serve` (host + plugins)",
      command: opts.yagent,
      args: ["serve", "--workspace", workspace],
      env: { HOME: home, PATH: process.env.PATH },
      read: (p) => ({ name: "read_file", arguments: { path: p } }),
      edit: (p, edits, tool) =>
        tool === "multi_edit"
          ? { name: "multi_edit", arguments: { path: p, edits } }
          : { name: "search_replace_in_file", arguments: { path: p, ...edits[0] } },
    },
    {
      name: "floor",
      label: "the floor (`bench/floor`: the MCP Go SDK serving `read_file` from its own process, no plugin)",
      command: opts.floor,
      args: ["-root", workspace],
      env: { HOME: home, PATH: process.env.PATH },
      read: (p) => ({ name: "read_file", arguments: { path: p } }),
      edit: null,
    },
    {
      name: "server-filesystem",
      label: `@modelcontextprotocol/server-filesystem ${serverFsVersion} (node ${process.version})`,
      command: process.execPath,
      args: [serverFsEntry, workspace],
      env: { HOME: home, PATH: process.env.PATH },
      read: (p) => ({ name: "read_text_file", arguments: { path: p } }),
      edit: (p, edits) => ({
        name: "edit_file",
        arguments: {
          path: p,
          edits: edits.map((e) => ({ oldText: e.old_string, newText: e.new_string })),
          dryRun: false,
        },
      }),
    },
  ];
}

async function connect(srv) {
  const transport = new StdioClientTransport({
    command: srv.command,
    args: srv.args,
    env: srv.env,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (b) => {
    stderr = (stderr + b.toString()).slice(-4000);
  });
  const client = new Client({ name: "yagent-bench", version: "0" });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

async function close(conn) {
  await conn.client.close();
}

function median(v) {
  const s = [...v].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return NaN;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

// rotate is the servers in a turn's order: each goes first as often as the
// others over the turns, so that no one always meets a cold or a warm
// machine.
function rotate(list, turn) {
  const k = turn % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}

function p99(v) {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * 99) / 100))];
}

const now = () => Number(process.hrtime.bigint()) / 1e6; // ms

// treeRSS sums VmRSS (MiB) over pid and its descendants.
function treeRSS(pid) {
  const kids = new Map();
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
    } catch {
      continue;
    }
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ppid = Number(f[1]);
    if (!kids.has(ppid)) kids.set(ppid, []);
    kids.get(ppid).push(Number(d));
  }
  let total = 0;
  let procs = 0;
  const walk = (p) => {
    try {
      const m = fs.readFileSync(`/proc/${p}/status`, "utf8").match(/^VmRSS:\s+(\d+)/m);
      if (m) {
        total += Number(m[1]);
        procs++;
      }
    } catch {
      return;
    }
    for (const c of kids.get(p) ?? []) walk(c);
  };
  walk(pid);
  return { mib: total / 1024, procs };
}

function check(res, what) {
  if (res.isError) {
    const text = (res.content ?? []).map((c) => c.text ?? "").join("");
    throw new Error(`${what}: ${text.slice(0, 300)}`);
  }
  return res;
}

async function startToList(srv) {
  const t0 = now();
  const conn = await connect(srv);
  const list = await conn.client.listTools();
  const d = now() - t0;
  await close(conn);
  return { ms: d, tools: list.tools.length };
}

async function readLatency(conn, srv, file) {
  for (let i = 0; i < 20; i++) check(await conn.client.callTool(srv.read(file)), "warm-up read");
  const lat = [];
  for (let i = 0; i < opts.reads; i++) {
    const t0 = now();
    const res = await conn.client.callTool(srv.read(file));
    lat.push(now() - t0);
    check(res, "read");
    const text = res.content.map((c) => c.text ?? "").join("");
    if (!text.includes("line 0063")) throw new Error(`${srv.name}: read did not return the whole file`);
  }
  return lat;
}

async function throughput(conn, srv, file) {
  let next = 0;
  const worker = async () => {
    while (next < opts.calls) {
      next++;
      check(await conn.client.callTool(srv.read(file)), "read in flight");
    }
  };
  const t0 = now();
  await Promise.all(Array.from({ length: opts.inflight }, worker));
  return (opts.calls / (now() - t0)) * 1000;
}

// The imperfection each corpus case stands for, in the words of the table.
const kinds = {
  "trailing-whitespace-dropped": "trailing whitespace dropped",
  "trailing-whitespace-added": "trailing whitespace added",
  "tabs-as-spaces": "tabs written as spaces",
  "lost-indent-level": "lost indent level",
  "json-escaped-newlines": "JSON-escaped newlines (`\\n` as text)",
  "crlf-file-lf-text": "CRLF file edited with LF text",
  "curly-quotes": "curly quotes for straight ones",
  "twice-with-context": "block occurs twice, context makes it unique",
  "multi-edit-mixed-slips": "two edits in one call, each with a slip",
  "block-twice": "block occurs twice (ambiguous)",
  "block-twice-relaxed": "block occurs twice, once only after relaxing whitespace",
  "misremembered-line": "one misremembered line",
  "two-places-mixed": "old text spliced from two places",
  "crlf-block-twice": "CRLF file, LF block that occurs twice",
  "replace-all-relaxed": "replace-all with a whitespace slip (server-filesystem has no replace-all: sent as one edit)",
  "multi-edit-second-fails": "two edits, the second misremembered",
};

function firstDiffLine(a, b) {
  const la = a.split("\n");
  const lb = b.split("\n");
  for (let i = 0; i < Math.max(la.length, lb.length); i++) if (la[i] !== lb[i]) return i + 1;
  return 0;
}

function firstLine(res) {
  const line = (res.content ?? []).map((x) => x.text ?? "").join("").split("\n")[0];
  return line.length <= 90 ? line : line.slice(0, line.lastIndexOf(" ", 90)) + " …";
}

// classify compares the file after the call with what was meant. A case
// whose right answer is a refusal (ambiguous or absent old text) counts as
// correct only when refused with the file untouched.
function classify(c, res, before, after, want) {
  const failed = res.isError === true;
  if (after === before) {
    return { outcome: "refused", correct: c.want !== "applied", note: failed ? firstLine(res) : "no error, nothing written" };
  }
  if (c.want === "applied" && after === want) return { outcome: "exact", correct: true, note: "" };
  const lf = (s) => s.replaceAll("\r\n", "\n");
  const crlfLost = before.includes("\r\n") && !after.includes("\r\n");
  let note;
  if (c.want === "applied") {
    note =
      lf(after) === lf(want)
        ? "right text, but every CRLF in the file became LF"
        : `differs from the intended result from line ${firstDiffLine(lf(want), lf(after))}`;
  } else {
    note = `replaced text at line ${firstDiffLine(lf(before), lf(after))}`;
  }
  if (crlfLost && !note.startsWith("right text")) note += "; every CRLF in the file became LF";
  if (failed) note += " (and the call reported an error)";
  return { outcome: "wrong-place", correct: false, note };
}

// trimFinalNewline is the same edit with one final newline dropped from
// both old and new text, as models often send it.
function trimFinalNewline(edits) {
  return edits.map((e) =>
    e.old_string.endsWith("\n") && e.new_string.endsWith("\n")
      ? { ...e, old_string: e.old_string.slice(0, -1), new_string: e.new_string.slice(0, -1) }
      : e,
  );
}

async function editCorpus(conn, srv, workspace, cases, variant) {
  const rows = [];
  const dir = path.join(workspace, `edit-${srv.name}-${variant}`);
  fs.mkdirSync(dir, { recursive: true });
  for (const c of cases) {
    const src = fs.readFileSync(path.join(opts.corpus, "src", c.file), "utf8");
    const want = c.want === "applied" ? fs.readFileSync(path.join(opts.corpus, "want", c.want_file), "utf8") : null;
    const file = path.join(dir, c.name + path.extname(c.file));
    fs.writeFileSync(file, src);
    const edits = variant === "trimmed" ? trimFinalNewline(c.edits) : c.edits;
    let res;
    try {
      res = await conn.client.callTool(srv.edit(file, edits, c.tool));
    } catch (e) {
      // A protocol error (invalid params, say) is a refusal too.
      res = { isError: true, content: [{ type: "text", text: String(e.message) }] };
    }
    const after = fs.readFileSync(file, "utf8");
    rows.push({ case: c.name, ...classify(c, res, src, after, want) });
  }
  return rows;
}

function fmt(v, digits = 2) {
  if (!Number.isFinite(v)) return "–";
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return v.toFixed(1);
  return v.toFixed(digits);
}

// ratios are a / b turn by turn (the same start, the same round).
function ratios(a, b) {
  const out = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (b[i] > 0) out.push(a[i] / b[i]);
  return out;
}

// The targets yagent is held to, each a median of per-turn ratios: a
// measure, the server it is compared with, and the bound.
function targets(fig) {
  const Y = fig.yagent;
  const F = fig.floor;
  const O = fig["server-filesystem"];
  return [
    { what: "read 4 KB p50", vs: "floor", r: median(ratios(Y.med, F.med)), op: "<=", bound: 1.0 },
    { what: "read 4 KB p50", vs: "server-filesystem", r: median(ratios(Y.med, O.med)), op: "<=", bound: 0.85 },
    { what: `throughput with ${opts.inflight} in flight`, vs: "floor", r: median(ratios(Y.tput, F.tput)), op: ">=", bound: 0.8 },
    { what: `throughput with ${opts.inflight} in flight`, vs: "server-filesystem", r: median(ratios(Y.tput, O.tput)), op: ">=", bound: 1.2 },
    { what: "very first start (empty spec cache)", vs: "server-filesystem", r: median(ratios(Y.coldStart, O.start)), op: "<=", bound: 1.0 },
  ];
}

const met = (t) => Number.isFinite(t.r) && (t.op === "<=" ? t.r <= t.bound : t.r >= t.bound);

// verdicts is one line per target: the ratio measured, the bound, met or
// not. A report, not an assertion: the run succeeds either way.
function verdicts(fig) {
  return targets(fig).map(
    (t) =>
      `bench/mcp: ${t.what}, yagent/${t.vs} ${fmtRatio(t.r)} (target ${t.op === "<=" ? "≤" : "≥"} ${t.bound}×): ${met(t) ? "met" : "NOT MET"}`,
  );
}

function fmtRatio(r) {
  return Number.isFinite(r) ? `${r.toFixed(2)}×` : "–";
}

async function main() {
  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "yagent-bench-mcp-ws-")));
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "yagent-bench-mcp-home-"));
  try {
    // 64 lines of 64 bytes: 4096 bytes.
    let four = "";
    for (let i = 0; i < 64; i++) four += `line ${String(i).padStart(4, "0")} ` + "x".repeat(53) + "\n";
    if (four.length !== 4096) throw new Error(`fixture is ${four.length} bytes`);
    const file4k = path.join(workspace, "read4k.txt");
    fs.writeFileSync(file4k, four);
    const cases = JSON.parse(fs.readFileSync(path.join(opts.corpus, "cases.json"), "utf8"));
    const srvs = servers(workspace, home);

    const fig = Object.fromEntries(
      srvs.map((s) => [s.name, { start: [], tools: 0, med: [], p99: [], tput: [], rss: [], procs: 0, edits: [], trimmed: [] }]),
    );
    // A figure of a turn (a start, a round) is kept at the same index for
    // each server, so that the ratios can be taken turn by turn.
    // A first start of each, not measured: yagent fills its spec cache
    // (later starts are warm, as on a user's machine), node warms the page cache.
    for (const s of srvs) fig[s.name].tools = (await startToList(s)).tools;
    const coldStart = [];
    for (let i = 0; i < opts.starts; i++) {
      for (const s of rotate(srvs, i)) fig[s.name].start.push((await startToList(s)).ms);
      // yagent on a machine where it never ran: an empty spec cache, every
      // plugin launched to describe itself.
      const fresh = fs.mkdtempSync(path.join(os.tmpdir(), "yagent-bench-mcp-cold-"));
      coldStart.push((await startToList({ ...srvs[0], env: { ...srvs[0].env, HOME: fresh } })).ms);
      fs.rmSync(fresh, { recursive: true, force: true });
    }
    fig[srvs[0].name].coldStart = coldStart;
    for (let r = 0; r < opts.rounds; r++) {
      for (const s of rotate(srvs, r)) {
        const conn = await connect(s);
        try {
          const lat = await readLatency(conn, s, file4k);
          fig[s.name].med.push(median(lat));
          fig[s.name].p99.push(p99(lat));
          fig[s.name].tput.push(await throughput(conn, s, file4k));
          const rss = treeRSS(conn.transport.pid);
          fig[s.name].rss.push(rss.mib);
          fig[s.name].procs = rss.procs;
        } catch (e) {
          throw new Error(`${s.name}: ${e.message}\nstderr:\n${conn.stderr()}`);
        } finally {
          await close(conn);
        }
      }
    }
    for (const s of srvs.filter((s) => s.edit)) {
      const conn = await connect(s);
      try {
        fig[s.name].edits = await editCorpus(conn, s, workspace, cases, "as-is");
        fig[s.name].trimmed = await editCorpus(conn, s, workspace, cases, "trimmed");
      } finally {
        await close(conn);
      }
    }
    if (opts.json) fs.writeFileSync(opts.json, JSON.stringify(fig, null, 1));
    const md = render(srvs, fig, cases);
    if (opts.out) fs.writeFileSync(opts.out, md);
    else process.stdout.write(md + "\n");
    process.stdout.write(verdicts(fig).join("\n") + "\n");
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(home, { recursive: true, force: true });
  }
}

function render(srvs, fig, cases) {
  const Y = fig.yagent;
  const F = fig.floor;
  const O = fig["server-filesystem"];
  const L = [];
  L.push("## MCP servers side by side");
  L.push("");
  L.push(
    `One client, the MCP TypeScript SDK ${sdkVersion} (\`bench/mcp/bench.mjs\`), starts each server over stdio ` +
      `on the same temporary workspace. Servers: ${srvs.map((s) => s.label).join("; ")}. ` +
      `Start: process spawn to the answer of the first \`tools/list\`, ${opts.starts} starts each, the three in turn ` +
      `(each first as often as the others), after one unmeasured start (yagent's spec cache is then warm, as on any start ` +
      `after the first; its very first start, with an empty cache, is measured in each turn too). ` +
      `Reads: \`read_file\` / \`read_text_file\` of a 4096-byte file, ${opts.reads} sequential calls after 20 warm-up calls; ` +
      `throughput: ${opts.calls} calls with ${opts.inflight} in flight; RSS: the server's process tree after the throughput run; ` +
      `${opts.rounds} round${opts.rounds === 1 ? "" : "s"}, the three servers in turn in each. ` +
      `A figure is the median over the starts or rounds; a ratio is the median of the per-turn ratios of yagent to the other ` +
      `(below 1 favours yagent for times and memory, above 1 for throughput); the target, where there is one, is in brackets.`,
  );
  L.push("");
  L.push(`| measure | yagent | floor | server-filesystem | yagent / floor | yagent / server-filesystem |`);
  L.push(`|---|---:|---:|---:|---:|---:|`);
  const want = new Map(targets(fig).map((t) => [`${t.what}|${t.vs}`, t]));
  const ratioCell = (what, vs, a, b) => {
    const r = median(ratios(a, b));
    const t = want.get(`${what}|${vs}`);
    return t ? `${fmtRatio(r)} (${t.op === "<=" ? "≤" : "≥"} ${t.bound}×: ${met(t) ? "met" : "**not met**"})` : fmtRatio(r);
  };
  const row = (name, what, y, f, o, unit) =>
    L.push(
      `| ${name} | ${fmt(median(y))} ${unit} | ${fmt(median(f))} ${unit} | ${fmt(median(o))} ${unit} | ` +
        `${ratioCell(what, "floor", y, f)} | ${ratioCell(what, "server-filesystem", y, o)} |`,
    );
  row("start to first tools/list", "start", Y.start, F.start, O.start, "ms");
  row(
    "start to first tools/list, yagent's very first start (empty spec cache; the others as above)",
    "very first start (empty spec cache)",
    Y.coldStart,
    F.start,
    O.start,
    "ms",
  );
  row("read 4 KB, median latency", "read 4 KB p50", Y.med, F.med, O.med, "ms");
  row("read 4 KB, p99 latency", "read 4 KB p99", Y.p99, F.p99, O.p99, "ms");
  row(`read 4 KB, throughput with ${opts.inflight} in flight`, `throughput with ${opts.inflight} in flight`, Y.tput, F.tput, O.tput, "calls/s");
  row("resident memory after the reads", "rss", Y.rss, F.rss, O.rss, "MiB");
  L.push("");
  L.push(
    `Tools listed: yagent ${Y.tools} (default profile \`coder\`), the floor ${F.tools}, server-filesystem ${O.tools}. ` +
      `yagent's memory is its whole tree: the host and the ${Y.procs - 1} plugin process(es) the calls started.`,
  );
  L.push("");
  L.push("### Imperfect edits");
  L.push("");
  L.push(
    `The cases of \`plugins/fs/testdata/corpus\` (real files from the Go distribution, edits the way models get ` +
      `them wrong), each on a fresh copy: yagent's \`search_replace_in_file\` (\`multi_edit\` for the two-edit cases) ` +
      `against server-filesystem's \`edit_file\` (the floor has no edit tool). **exact**: the file is byte for byte the intended result; ` +
      `**wrong-place**: the file changed but is not the intended result (the edit landed elsewhere or changed other ` +
      `bytes); **refused**: an error and the file untouched. Where the old text is ambiguous or absent, refusing is ` +
      `the right answer (marked ✓).`,
  );
  const cell = (r) => {
    let s = (r.correct ? "✓ " : "✗ ") + r.outcome;
    if (r.outcome !== "exact" && r.note) s += ` — ${r.note.replaceAll("|", "\\|").replaceAll("`", "'")}`;
    return s;
  };
  const tally = (rows) => {
    const n = (k) => rows.filter((r) => r.outcome === k).length;
    return `**${rows.filter((r) => r.correct).length}/${rows.length} right**: ${n("exact")} exact, ${n("wrong-place")} wrong-place, ${n("refused")} refused`;
  };
  const table = (key) => {
    L.push("");
    L.push(`| imperfection | right answer | yagent | server-filesystem |`);
    L.push(`|---|---|---|---|`);
    cases.forEach((c, i) => {
      const right = c.want === "applied" ? "exact" : `refused (${c.want})`;
      L.push(`| ${kinds[c.name] ?? c.name} | ${right} | ${cell(Y[key][i])} | ${cell(O[key][i])} |`);
    });
    L.push(`| **total** | | ${tally(Y[key])} | ${tally(O[key])} |`);
    L.push("");
  };
  table("edits");
  L.push(
    "The same cases with one final newline dropped from both old and new text (as models often send a block), " +
      "which server-filesystem's line-by-line fallback handles differently: with a final newline it looks for an " +
      "empty line after the block.",
  );
  table("trimmed");
  return L.join("\n");
}

await main();
