// Usage: node e2e.mjs HTTP_URL KEY
// The TypeScript SDK's client against a gateway on the embedded stack (integration's
// TestMCPTypeScriptClient starts it and checks what this prints). One session over streamable
// HTTP with the bearer key, declaring the elicitation capability:
//   five        wf_five_steps with a progressToken: every notifications/progress and the result,
//               in the order the client received them
//   review      wf_approval_demo: the question the gateway asked through elicitation (answered
//               approve), the result, and the run's approval step as weft_execution reads it
//   subscribed  a run started without waiting, subscribed to as weft://executions/{id}: the
//               status read after each notifications/resources/updated, the review approved with
//               weft_review once it waits, until the run completed
//   prompts, prompt, ask, completions: prompts/list, prompts/get, completion/complete
// It prints one JSON object on stdout and exits 0; any protocol error exits 1 with it on stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ElicitRequestSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, key] = process.argv.slice(2);
if (!url || !key) {
  console.error("usage: node e2e.mjs HTTP_URL KEY");
  process.exit(2);
}
const minute = 60_000;
const out = {};

const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
const client = new Client({ name: "weft-e2e-ts", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push(req.params);
  return { action: "accept", content: { decision: "approve", comment: "approved from the TypeScript client" } };
});
// notifications/resources/updated, in order; nextUpdate waits for one not taken yet
const updated = [];
let taken = 0;
let wake = () => {};
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
  updated.push(n.params.uri);
  wake();
});
const nextUpdate = (ms) =>
  new Promise((resolve, reject) => {
    if (updated.length > taken) {
      taken = updated.length;
      return resolve();
    }
    const timer = setTimeout(() => reject(new Error(`no notifications/resources/updated within ${ms} ms (seen: ${updated.length})`)), ms);
    wake = () => {
      clearTimeout(timer);
      wake = () => {};
      taken = updated.length;
      resolve();
    };
  });

const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("");
const call = async (name, args, options) => {
  const res = await client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: 2 * minute, ...options });
  if (res.isError) throw new Error(`${name}: ${text(res)}`);
  return res.structuredContent ?? JSON.parse(text(res));
};

try {
  await client.connect(transport);
  out.protocol = transport.protocolVersion;
  out.session = Boolean(transport.sessionId);

  // (a) progress, step by step, before the result
  const events = [];
  const five = await call("wf_five_steps", { topic: "retries" }, {
    onprogress: (p) => events.push({ progress: p.progress, total: p.total, message: p.message }),
  });
  events.push({ result: five });
  out.five = events;

  // (b) a review answered through elicitation
  const review = await call("wf_approval_demo", { version: "9.2" });
  const state = await call("weft_execution", { id: review.executionId });
  out.review = {
    asked: asked.map((q) => ({ message: q.message, schema: q.requestedSchema })),
    result: review,
    approval: state.steps.find((s) => s.id === "approval")?.output,
    status: state.status,
  };

  // (c) a subscription follows a run to its end
  const started = await call("weft_run_workflow", { name: "approval-demo", inputs: { version: "9.3" } });
  const id = started.executionId;
  const uri = `weft://executions/${id}`;
  await client.subscribeResource({ uri });
  const seen = [];
  let approved = false;
  // the state now (the run may wait for its review already), then after each notification
  for (let first = true, status = ""; status !== "completed" && status !== "failed" && status !== "cancelled"; first = false) {
    if (!first) await nextUpdate(minute);
    const read = await client.readResource({ uri });
    const st = JSON.parse(read.contents[0].text);
    status = st.status;
    const pending = (st.pendingReviews ?? []).length;
    seen.push({ status, pendingReviews: pending, afterUpdate: !first });
    if (!approved && pending > 0) {
      await call("weft_review", { id, decision: "approve" });
      approved = true;
    }
  }
  await client.unsubscribeResource({ uri });
  out.subscribed = { id, uris: [...new Set(updated)], notifications: updated.length, seen };

  // (d) prompts and completions, with real values
  const { prompts } = await client.listPrompts();
  out.prompts = prompts.map((p) => ({ name: p.name, arguments: (p.arguments ?? []).map((a) => a.name) }));
  out.prompt = await client.getPrompt({ name: "wf_five_steps", arguments: { topic: "backoff" } });
  out.ask = await client.getPrompt({ name: "ask", arguments: { question: "How do retries back off?" } });
  const complete = async (ref, name, value) => (await client.complete({ ref, argument: { name, value } })).completion;
  out.completions = {
    steps: await complete({ type: "ref/prompt", name: "wf_five_steps" }, "step", "s"),
    workflows: await complete({ type: "ref/resource", uri: "weft://workflows/{name}" }, "name", "five"),
    executions: await complete({ type: "ref/resource", uri: "weft://executions/{id}" }, "id", id.slice(0, 8)),
  };
  await client.close();
} catch (err) {
  console.log(JSON.stringify(out));
  console.error(`e2e.mjs: ${err?.stack ?? err}`);
  process.exit(1);
}
console.log(JSON.stringify(out));
