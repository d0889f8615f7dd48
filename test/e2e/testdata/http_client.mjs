// A Streamable HTTP client on the MCP TypeScript SDK, driven by
// TestHTTP_TypeScriptClient: node http_client.mjs SDK_DIR URL TOKEN FILE.
// It prints one JSON object with what it saw.
import { pathToFileURL } from "node:url";

const [sdkDir, url, token, file] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(`${sdkDir}/dist/esm/${p}`).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

function connect(tok) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${tok}` } },
  });
  const client = new Client({ name: "e2e-ts", version: "0" });
  return { client, transport, ready: client.connect(transport) };
}

const out = {};
const good = connect(token);
await good.ready;
out.sessionId = good.transport.sessionId ?? "";
out.tools = (await good.client.listTools()).tools.map((t) => t.name);
const think = await good.client.callTool({ name: "think", arguments: { thought: "from TypeScript" } });
out.thinkError = !!think.isError;
const read = await good.client.callTool({ name: "read_file", arguments: { path: file } });
out.read = read.content.filter((c) => c.type === "text").map((c) => c.text).join("");
await good.transport.terminateSession(); // DELETE
await good.client.close();

const bad = connect("wrong-token");
try {
  await bad.ready;
  out.wrongToken = "connected";
} catch (e) {
  out.wrongToken = String(e?.message ?? e);
  out.wrongTokenStatus = e?.code ?? 0; // StreamableHTTPError carries the HTTP status
}
await bad.client.close().catch(() => {});

console.log(JSON.stringify(out));
