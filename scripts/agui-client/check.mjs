// Usage: node check.mjs URL [HEADERS_JSON]
// Follows a weft run's AG-UI stream (the console's /runs/{id}/agui) with the public AG-UI client:
// @ag-ui/client's HttpAgent.runAgent POSTs a RunAgentInput and reads the SSE answer through the
// client's own pipeline (schema enforcement, event verification, applying events to messages and
// state). Prints one JSON line per event as the client delivered it ({"event": {...}}), then one
// line with what the agent ended with ({"agent": {"messages", "state", "result"}}).
// Exit status: 0 when the client accepted the stream and it ended with RUN_FINISHED; 2 when it
// accepted a stream that ended with RUN_ERROR; 1 when the client raised an error (a protocol
// violation), warned about the stream (stripped fields, events for unknown messages), or the
// stream ended without RUN_FINISHED or RUN_ERROR.
import { HttpAgent } from "@ag-ui/client";

const [url, headersJSON] = process.argv.slice(2);
if (!url) {
  console.error("usage: node check.mjs URL [HEADERS_JSON]   (URL: the console's /runs/{id}/agui)");
  process.exit(1);
}
let headers = {};
if (headersJSON) {
  try {
    headers = JSON.parse(headersJSON);
  } catch (err) {
    console.error(`HEADERS_JSON ${JSON.stringify(headersJSON)}: not JSON (${err.message}); pass an object such as '{"Cookie":"weft_session=..."}'`);
    process.exit(1);
  }
}

// The client reports what it tolerates (stripped material, events for unknown messages,
// subscriber errors) on the console; any of that is a failure of the stream here.
const complaints = [];
for (const level of ["warn", "error"]) {
  const orig = console[level].bind(console);
  console[level] = (...args) => {
    complaints.push(args.map((a) => (a instanceof Error ? a.message : typeof a === "string" ? a : JSON.stringify(a))).join(" "));
    orig(...args);
  };
}

const runId = new URL(url).pathname.split("/").filter(Boolean).at(-2) ?? "run";
const agent = new HttpAgent({ url, headers, threadId: runId });
const events = [];
let failure;
let result;
try {
  ({ result } = await agent.runAgent(
    { runId },
    {
      onEvent: ({ event }) => {
        events.push(event);
        process.stdout.write(JSON.stringify({ event }) + "\n");
      },
    },
  ));
} catch (err) {
  failure = err;
}
process.stdout.write(JSON.stringify({ agent: { messages: agent.messages, state: agent.state, result } }) + "\n");

const last = events.at(-1)?.type;
if (failure) {
  console.error(`FAIL the AG-UI client rejected the stream of ${url}: ${failure?.message ?? failure}`);
  process.exit(1);
}
if (complaints.length > 0) {
  process.stderr.write(`FAIL the AG-UI client complained about the stream of ${url}:\n  ${complaints.join("\n  ")}\n`);
  process.exit(1);
}
if (last === "RUN_ERROR") {
  console.error(`the stream of ${url} ended with RUN_ERROR: ${events.at(-1).message}`);
  process.exit(2);
}
if (last !== "RUN_FINISHED") {
  console.error(`FAIL the stream of ${url} ended after ${events.length} events without RUN_FINISHED or RUN_ERROR (last: ${last ?? "none"})`);
  process.exit(1);
}
console.error(`ok   the AG-UI client accepted ${events.length} events, RUN_STARTED to RUN_FINISHED`);
