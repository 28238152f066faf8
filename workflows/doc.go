// Package workflows is weft's interpreter: ONE Temporal workflow function, Run (type "weft"),
// executes any workflow definition. Tool steps become activities named after the tool (their
// Summary is the step's name, so the Temporal UI reads like the file); pure data steps run inline
// with no history events; review steps, forEach items and an agent's tool calls wait at review
// gates for a decision sent as the `review` Update or Signal; workflow steps start child runs; the
// `state` query reports progress. Two helper workflows serve it: Chat (type "weft-chat", a chat
// session with tools) and Batch (type "weft-foreach-batch", one batch of a large forEach, run as a
// child to stay far below history limits).
//
// A step kind's run side reads what its compile side (workflows/dsl, kind_*.go) decoded once:
// the typed input (typedInput, declared.go) and the kind's compiled value through its accessor
// (sr.cs.Nested(), sr.cs.Agent(), cs.Filter() in datatools), and does not parse them again;
// only a templated setting is decoded, from the step's resolved inputs.
//
// Everything here is deterministic: no I/O, no time.Now, no rand, no goroutines but workflow.Go, no
// unsorted map iteration; interpreter changes that alter commands are guarded with
// workflow.GetVersion (the Change* constants). Steps start as soon as their own dependencies are
// done. The language (workflows/dsl, workflows/expr, workflows/datatools) is pure and safe to call
// here. This package must not import activities/ (it names activities by their toolspec names and
// runs them through the SDK), client/, or any provider or store client. Some pure functions also
// run outside workflow code: Evaluate inside the worker's evaluate activity.
//
// The run records its own events (events.go: each an events.Event, numbered by seq, kept in a bounded ring in
// workflow memory, not in history) and serves them to the `events` query and the `wait-events`
// Update; every surface that follows a run (weft run and watch, the console, AG-UI, MCP,
// client.Stream) reads them there.
//
// The names, statuses and types a client shares with a run (workflow type, task queue, query,
// update and signal names, memo and search-attribute keys, statuses, the review vocabulary)
// live in package runwire, which this package and client/ both import, with the pure checks both
// make (which pending review a decision answers, its kind and size) and the run request.
//
// Files: names.go (step keys, the oldest Change* constants, the state's output cap), run.go (the
// scheduler), state.go (the state query), events.go (the run's events and their queries),
// kinds.go (the run-side kinds: one value per toolspec.Kind, registered by the file that runs
// it), step.go (execOnce, which resolves a step's inputs and calls its kind; activity tools),
// step_inline.go (data tools, run by workflows/datatools), step_loop.go, step_review.go,
// step_child.go and step_agent.go with agent_loop.go (the agent, whose loop registers the
// agent kind), and step_foreach.go, step_batches.go, step_providerbatch.go (forEach items; a large
// forEach's batch child workflows; a batching tool's items grouped into its batch activity); agent_*.go hold the agent's
// tools, guardrails, handoffs and MCP servers (agent_mcp_session.go: a stateful server held in a
// Temporal session); autocontext.go ("context": "auto"); gate.go (review gates), trust.go (what a
// model or a client's definition may not choose), chat.go, checked.go (what the registry decides,
// checked once per run), sizegate.go (no value over Temporal's payload limit enters history),
// values.go and stored.go (claim-checked values), evaluate.go, notify.go (webhook deliveries as
// child workflows), errors.go. Each Change* constant sits beside the code it guards;
// docs/maintainers.md says how to add one.
package workflows
