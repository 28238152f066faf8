// Usage: node session.mjs HTTP_URL KEY
// The TypeScript SDK's client keeps its session across a gateway restart (integration's
// TestMCPTypeScriptSessionAcrossARestart): it opens a session and calls weft_models, prints
// {"session": ID} on a line, waits for a line on standard input (the test restarts the gateway
// behind the same address meanwhile), calls weft_models again on the same transport, and prints
// {"session": ID, "after": {...}} with the session id the transport holds then. Exits 1 with the
// error on stderr when a call fails (a 404 for an unknown session, as before sessions were kept).
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, key] = process.argv.slice(2);
if (!url || !key) {
  console.error("usage: node session.mjs HTTP_URL KEY");
  process.exit(2);
}
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
const client = new Client({ name: "weft-session-ts", version: "1.0.0" });
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
try {
  await client.connect(transport);
  await client.callTool({ name: "weft_models", arguments: {} });
  const session = transport.sessionId;
  console.log(JSON.stringify({ session }));
  await lines.next(); // the gateway restarts
  const res = await client.callTool({ name: "weft_models", arguments: {} });
  console.log(JSON.stringify({ session: transport.sessionId, before: session, after: { isError: res.isError ?? false, models: (res.structuredContent?.models ?? []).length } }));
  await client.close();
  process.exit(0);
} catch (err) {
  console.error(err?.stack ?? String(err));
  process.exit(1);
}
