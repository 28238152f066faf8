// Usage: node agents.mjs HTTP_URL KEY
// The TypeScript SDK's client against a gateway whose worker's model is the scripted
// OpenAI-compatible fake (integration's TestMCPTypeScriptAgents starts both and checks what this
// prints), for what issue 44 asks of agents as a real MCP client sees them:
//   tools        every tool listed: how many, which lack an outputSchema, which schemas hold a
//                JSON Schema type list (a portability problem for some clients)
//   structured   wf_structured_answer: an agent with tools and a responseFormat schema; the SDK's
//                callTool checks structuredContent against the tool's outputSchema (it throws when
//                they disagree); the result as received
//   stopped      wf_stop_early: an agent stopped by stopWhen textMatches after an answer that asked
//                for a tool call; its transcript (output.messages) and each tool call in it that
//                no tool message answers
// It prints one JSON object on stdout and exits 0; a protocol or validation error exits 1 with it on
// stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, key] = process.argv.slice(2);
if (!url || !key) {
  console.error("usage: node agents.mjs HTTP_URL KEY");
  process.exit(2);
}
const minute = 60_000;
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
const client = new Client({ name: "weft-agents-ts", version: "1.0.0" });

// typeLists names the places in a schema where "type" is a list.
function typeLists(schema, path, found) {
  if (Array.isArray(schema)) {
    schema.forEach((s, i) => typeLists(s, `${path}/${i}`, found));
  } else if (schema && typeof schema === "object") {
    if (Array.isArray(schema.type)) found.push(path);
    for (const [k, v] of Object.entries(schema)) typeLists(v, `${path}/${k}`, found);
  }
  return found;
}

// unanswered lists the tool calls of assistant messages that no later tool message answers, in
// weft's transcript form (toolCalls, toolCallId) or OpenAI's (tool_calls, tool_call_id).
function unanswered(messages) {
  const answered = new Set(messages.filter((m) => m.role === "tool").map((m) => m.toolCallId ?? m.tool_call_id));
  const out = [];
  for (const m of messages) {
    for (const c of m.toolCalls ?? m.tool_calls ?? []) if (!answered.has(c.id)) out.push(c.id);
  }
  return out;
}

try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  const out = {
    tools: {
      count: tools.length,
      withoutOutputSchema: tools.filter((t) => !t.outputSchema).map((t) => t.name),
      typeLists: tools.flatMap((t) => typeLists({ input: t.inputSchema, output: t.outputSchema }, t.name, [])),
    },
  };
  const structured = await client.callTool({ name: "wf_structured_answer", arguments: { docs: 10 } }, undefined, { timeout: minute });
  out.structured = { isError: structured.isError ?? false, structuredContent: structured.structuredContent };
  const stopped = await client.callTool({ name: "wf_stop_early", arguments: {} }, undefined, { timeout: minute });
  const messages = stopped.structuredContent?.output ?? [];
  out.stopped = { isError: stopped.isError ?? false, messages, unanswered: unanswered(messages) };
  console.log(JSON.stringify(out));
  await client.close();
} catch (err) {
  console.error(err?.stack ?? String(err));
  process.exit(1);
}
