// A Streamable HTTP client on the MCP TypeScript SDK, driven by
// TestProgress_TypeScriptClient: node progress_client.mjs SDK_DIR URL TOKEN
// COMMAND. It calls run_bash COMMAND with a progress callback (the SDK
// sends a progress token) and prints one JSON object: the notifications
// that came before the result, the result's text, and how many came after.
import { pathToFileURL } from "node:url";

const [sdkDir, url, token, command] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(`${sdkDir}/dist/esm/${p}`).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "e2e-ts-progress", version: "0" });
await client.connect(transport);

const out = { before: [], after: 0, text: "" };
let returned = false;
const res = await client.callTool({ name: "run_bash", arguments: { command } }, undefined, {
  timeout: 60000,
  onprogress: (p) => {
    if (returned) out.after++;
    else out.before.push({ progress: p.progress, total: p.total ?? 0, message: p.message ?? "" });
  },
});
returned = true;
out.text = res.content.filter((c) => c.type === "text").map((c) => c.text).join("");
// A call after it: nothing more of the first call may come.
await client.callTool({ name: "run_bash", arguments: { command: "true" } });
await transport.terminateSession();
await client.close();
console.log(JSON.stringify(out));
