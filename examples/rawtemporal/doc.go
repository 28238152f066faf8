// Command rawtemporal is examples/brief written against the raw Temporal Go SDK and go-openai,
// with no weft package, for comparison: a workflow runs an agent loop (a model-call activity
// offered the shout tool, the tool run as its own activity, until the model answers), then two
// model calls in parallel that see the agent's answer, then a verdict that sees both; a worker
// in the same process, a client that starts the workflow, follows its history (printing each
// activity as it completes) and prints the answer and the total tokens. Run it against any
// Temporal server (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE) with a model configured
// (OPENAI_API_KEY, or OPENAI_BASE_URL for any OpenAI-compatible endpoint; WEFT_CHAT_MODEL,
// default gpt-4o-mini):
//
//	go run ./examples/rawtemporal
//
// What it leaves out compared with weft, each of which would be more code here:
//   - cost: it prints tokens only; dollars need a price table per model;
//   - per-step usage: only the total is returned, not tokens per step or per agent turn;
//   - the event stream: it follows activity completions in the history, not typed events
//     (run and step started/completed, agent iterations, tool calls started/finished, usage),
//     and a failed attempt shows nowhere until its retries are spent;
//   - the tool's schema is written by hand instead of derived from the Go type;
//   - durable review gates and tool approvals (a run waits for a person's decision), guardrails,
//     handoffs, per-step timeouts and retries as options, templated prompts and declared inputs;
//   - run tooling: listing, inspecting and cancelling runs, forking one from an agent
//     iteration, and the console.
//
// integration/examples_test.go runs it on the embedded stack with the scripted model, next to
// examples/brief, and logs both line counts.
package main
