// A Streamable HTTP client on the MCP TypeScript SDK, driven by
// TestHTTP_TypeScriptClient: node http_client.mjs CASE CONFIG_JSON, where
// CONFIG_JSON holds sdkDir, url, token, workspace and the case's own
// fields. It prints one JSON object with what it saw on its last line; the
// Go test holds the assertions. A case that cannot go on throws, and node
// exits non-zero with the stack.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [name, raw] = process.argv.slice(2);
const cfg = JSON.parse(raw);
const load = (p) => import(pathToFileURL(`${cfg.sdkDir}/dist/esm/${p}`).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
const { ElicitRequestSchema } = await load("types.js");

// connect opens a session. headers replace the bearer header when given;
// answers, when given, make the client declare elicitation and answer the
// host's questions in turn (the last answer repeats); seen records the
// status and WWW-Authenticate of every HTTP answer.
function connect({ headers, answers } = {}) {
  const seen = [];
  const transport = new StreamableHTTPClientTransport(new URL(cfg.url), {
    requestInit: { headers: headers ?? { Authorization: `Bearer ${cfg.token}` } },
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      seen.push({ method: init?.method ?? "GET", status: res.status, wwwAuthenticate: res.headers.get("www-authenticate") ?? "" });
      return res;
    },
  });
  const client = new Client({ name: "e2e-ts", version: "0" }, answers ? { capabilities: { elicitation: {} } } : {});
  const asked = [];
  if (answers) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      return answers[Math.min(asked.length, answers.length) - 1];
    });
  }
  return { client, transport, seen, asked, ready: () => client.connect(transport) };
}

const accept = (scope) => ({ action: "accept", content: { scope } });
const decline = { action: "decline", content: { reason: "keep out of my home folder" } };

// result is the part of a tool result the Go test looks at.
function result(r) {
  return {
    isError: !!r.isError,
    text: (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join(""),
    code: r.structuredContent?.code ?? "",
    taskId: r.structuredContent?.data?.task_id ?? "",
  };
}

const call = async (c, tool, args, opts) => result(await c.client.callTool({ name: tool, arguments: args }, undefined, opts));

// end sends DELETE and closes the client.
async function end(c) {
  await c.transport.terminateSession();
  await c.client.close();
}

// pidFile polls for the pid a command writes into the workspace.
async function pidFile(file) {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    try {
      const pid = parseInt(readFileSync(join(cfg.workspace, file), "utf8").trim(), 10);
      if (pid > 0) return pid;
    } catch {}
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no pid in ${file} within 10s: the command did not start`);
}

// gone polls, up to 10 s, until pid has exited (a zombie counts as gone).
async function gone(pid) {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      return true;
    }
    if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

// settle waits for p for up to ms and says how it ended.
async function settle(p, ms) {
  let timer;
  const late = new Promise((r) => { timer = setTimeout(() => r({ settled: false }), ms); });
  const done = p.then((v) => ({ settled: true, value: v }), (e) => ({ settled: true, error: String(e?.message ?? e) }));
  const out = await Promise.race([done, late]);
  clearTimeout(timer);
  return out;
}

const cases = {
  // Lists, calls every family the other cases use, and ends with DELETE.
  async basic() {
    const c = connect();
    await c.ready();
    const out = { sessionId: c.transport.sessionId ?? "" };
    out.tools = (await c.client.listTools()).tools.map((t) => t.name);
    out.think = await call(c, "think", { thought: "from TypeScript" });
    out.read = await call(c, "read_file", { path: cfg.file });
    out.bash = await call(c, "run_bash", { command: "echo from bash" });
    out.todo = await call(c, "todo_read", {});
    await end(c);
    return out;
  },

  // Approves one read outside the workspace once, then declines the next.
  async elicit() {
    const c = connect({ answers: [accept("once"), decline] });
    await c.ready();
    const out = {};
    out.approved = await call(c, "read_file", { path: cfg.outside });
    out.declined = await call(c, "read_file", { path: cfg.outside });
    out.asked = c.asked;
    await end(c);
    return out;
  },

  // Records the progress notifications of a call (the SDK sends a
  // progress token when onprogress is set), with when they came.
  async progress() {
    const c = connect();
    await c.ready();
    const start = Date.now();
    const progress = [];
    const p = c.client.callTool({ name: cfg.tool, arguments: cfg.args }, undefined, {
      onprogress: (n) => progress.push({ at: Date.now() - start, message: n.message ?? "", progress: n.progress }),
    });
    const out = { call: await settle(p.then(result), 30_000), progress };
    out.endedAt = Date.now() - start;
    await end(c);
    return out;
  },

  // Two sessions at once: A's todos and its approval for the session stay
  // in A.
  async isolation() {
    const a = connect({ answers: [accept("session")] });
    const b = connect({ answers: [decline] });
    await Promise.all([a.ready(), b.ready()]);
    const out = { ids: [a.transport.sessionId, b.transport.sessionId] };
    const todo = (who) => ({ todos: [{ id: "1", content: `task of session ${who}`, status: "pending" }] });
    [out.writeA, out.writeB] = await Promise.all([call(a, "todo_write", todo("A")), call(b, "todo_write", todo("B"))]);
    [out.readA, out.readB] = await Promise.all([call(a, "todo_read", {}), call(b, "todo_read", {})]);
    out.outsideA = [];
    for (let i = 0; i < 2; i++) out.outsideA.push(await call(a, "read_file", { path: cfg.outside }));
    out.outsideB = await call(b, "read_file", { path: cfg.outside });
    out.askedA = a.asked;
    out.askedB = b.asked;
    // A command handed back as a task belongs to A: B neither lists nor
    // stops it, and it ends with A while B goes on.
    out.taskA = await call(a, "run_bash", { command: `echo $$ > ${cfg.pidFile}; exec sleep 1000`, yield_time_ms: 300 });
    out.taskPid = await pidFile(cfg.pidFile);
    [out.tasksA, out.tasksB] = await Promise.all([call(a, "shell_tasks", {}), call(b, "shell_tasks", {})]);
    out.cancelFromB = await call(b, "shell_cancel", { task_id: out.taskA.taskId });
    await end(a);
    out.taskGoneWithA = await gone(out.taskPid);
    out.afterA = await call(b, "todo_read", {});
    await end(b);
    return out;
  },

  // What the front refuses, each through the SDK's transport.
  async refused() {
    const out = {};
    const refusal = async (key, headers) => {
      const c = connect({ headers });
      try {
        await c.ready();
        out[key] = { connected: true };
        await end(c);
      } catch (e) {
        out[key] = { status: e?.code ?? 0, error: String(e?.message ?? e), seen: c.seen };
        await c.client.close().catch(() => {});
      }
    };
    await refusal("noToken", {});
    await refusal("wrongToken", { Authorization: "Bearer wrong-token" });
    await refusal("foreignOrigin", { Authorization: `Bearer ${cfg.token}`, Origin: "https://evil.example.com" });
    await refusal("ownOrigin", { Authorization: `Bearer ${cfg.token}`, Origin: new URL(cfg.url).origin });

    const c = connect();
    await c.ready();
    try {
      // JSON whitespace would be the raw way; through the SDK the body is
      // a call whose argument alone passes the cap.
      await c.client.callTool({ name: "think", arguments: { thought: "x".repeat(cfg.cap + 1) } });
      out.oversized = { status: 200 };
    } catch (e) {
      out.oversized = { status: e?.code ?? 0, error: String(e?.message ?? e).slice(0, 300) };
    }
    out.afterOversized = await call(c, "think", { thought: "still here" });
    await end(c);
    return out;
  },

  // A foreground command, then notifications/cancelled (abort) or DELETE
  // (terminateSession) while it runs. The pid goes back to the Go test,
  // which watches it die.
  async midcall() {
    const c = connect();
    await c.ready();
    const abort = new AbortController();
    const p = c.client.callTool(
      { name: "run_bash", arguments: { command: `echo $$ > ${cfg.pidFile}; exec sleep 1000`, yield_time_ms: 600000 } },
      undefined,
      { signal: abort.signal, timeout: 120_000 },
    );
    const out = { pid: await pidFile(cfg.pidFile) };
    out.sentAt = Date.now();
    if (cfg.how === "cancel") {
      abort.abort("the user pressed stop");
      out.call = await settle(p.then(result), 20_000);
      out.after = await call(c, "think", { thought: "the session after a cancel" });
      await end(c);
    } else {
      // The host ends the call with its session and no answer is owed:
      // the SDK would wait for one until its timeout, so close it.
      out.delete = await settle(c.transport.terminateSession(), 20_000);
      await c.client.close();
      out.call = await settle(p.then(result), 20_000);
    }
    return out;
  },
};

if (!cases[name]) throw new Error(`no case ${name}: one of ${Object.keys(cases).join(", ")}`);
console.log(JSON.stringify(await cases[name]()));
// The SDK may still hold a timer to reconnect a stream the host ended;
// the case is over, so do not wait for it. Writes to a pipe are
// synchronous: the report is out.
process.exit(0);
