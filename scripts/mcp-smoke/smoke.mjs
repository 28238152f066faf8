// Usage: node smoke.mjs BIN HTTP_URL KEY
// Connects to `weft mcp` with the TypeScript SDK over stdio and over streamable HTTP, lists the
// tools and calls weft_models and weft_explain. Exits non-zero on any mismatch.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [bin, url, key] = process.argv.slice(2);
let failures = 0;
const check = (ok, what) => {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures++;
};

async function exercise(name, transport) {
  const client = new Client({ name: `ts-smoke-${name}`, version: "1.0.0" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  check(names.includes("weft_query") && names.includes("weft_run_workflow"), `${name}: tools/list has weft_query and weft_run_workflow (${names.length} tools)`);
  const ingest = tools.find((t) => t.name === "weft_ingest");
  check(ingest?.annotations?.destructiveHint === false && ingest?.annotations?.readOnlyHint === false, `${name}: weft_ingest annotations are explicit`);
  const models = await client.callTool({ name: "weft_models", arguments: { category: "rerank" } });
  check(!models.isError && models.structuredContent?.models?.length === 3, `${name}: weft_models returns 3 rerank models`);
  const bad = await client.callTool({ name: "weft_explain", arguments: { topic: "nonsense" } });
  check(bad.isError === true, `${name}: a bad topic is a tool error, not a protocol error`);
  await client.close();
}

await exercise("stdio", new StdioClientTransport({ command: bin, args: ["mcp", "--address", "127.0.0.1:1"] }));
await exercise("http", new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
console.log(`${4 * 2 - failures} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
