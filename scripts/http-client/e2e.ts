// A program that is not written in Go drives a weft run through /v1 with a client generated from
// the served OpenAPI document (openapi-typescript types, openapi-fetch calls): it starts a run of a
// review workflow, follows its events (server-sent events), decides its review with the digest it
// was shown, and reads the result. TestHTTPTypeScriptClient runs it (after generating gen/schema.d.ts
// from GET /v1/openapi.json and compiling this file against it) and reads what it prints: one JSON
// line per event, then {"run": ...}.
//
//   node build/e2e.js BASE_URL KEY WORKFLOW RUN_ID
import createClient from "openapi-fetch";
import type { components, paths } from "./gen/schema.js";

type Event = components["schemas"]["Event"];
type RunView = components["schemas"]["RunView"];

const [baseUrl, key, workflow, runId] = process.argv.slice(2);
if (!baseUrl || !key || !workflow || !runId) {
  console.error("usage: node build/e2e.js BASE_URL KEY WORKFLOW RUN_ID");
  process.exit(2);
}
const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${key}` } });

function fail(what: string, error: unknown): never {
  console.error(`${what}: ${JSON.stringify(error)}`);
  process.exit(1);
}

// one server-sent event: its id, type and data
async function* sse(body: ReadableStream<Uint8Array>): AsyncGenerator<{ id?: string; event: string; data: Event }> {
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let id: string | undefined, event = "", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("id: ")) id = line.slice(4);
        else if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      if (event) yield { id, event, data: JSON.parse(data) as Event };
    }
  }
}

const started = await api.POST("/v1/runs", { body: { workflow, id: runId, inputs: { topic: "typescript" } } });
if (started.error || !started.data) fail("start", started.error);
const id = started.data.id;

const stream = await api.GET("/v1/runs/{id}/events", { params: { path: { id } }, parseAs: "stream" });
if (stream.error || !stream.response.body) fail("events", stream.error);
let lastId: string | undefined;
for await (const e of sse(stream.response.body)) {
  lastId = e.id ?? lastId;
  console.log(JSON.stringify({ event: e.data }));
  if (e.event === "review_requested") {
    const listed = await api.GET("/v1/reviews");
    if (listed.error || !listed.data) fail("reviews", listed.error);
    const r = listed.data.reviews.find((p) => p.in.id === id);
    if (!r?.review?.id || !r.review.digest) fail("no review of the run listed", listed.data);
    const decided = await api.POST("/v1/runs/{id}/reviews", {
      params: { path: { id: r.in.id } },
      body: { review: r.review.id, decision: "approve", digest: r.review.digest, comment: "from TypeScript" },
    });
    if (decided.error) fail("decide", decided.error);
  }
  if (e.event === "run_completed" || e.event === "run_failed") break;
}

const read = await api.GET("/v1/runs/{id}", { params: { path: { id } } });
if (read.error || !read.data) fail("read", read.error);
const run: RunView = read.data;
console.log(JSON.stringify({ run: { id: run.id, status: run.status, output: run.state?.output, lastEventId: lastId } }));
console.error("the TypeScript client drove the run to its end");
