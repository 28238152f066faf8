// Package client is the one copy of every operation on weft runs: dial Temporal (Dial, New), start
// a run with the definitions of the workflows it calls (Start, StartRequest, Run), read its state
// (State, Describe, StepInputs), list its pending review gates and decide them (Pending, Review,
// ReviewAll; the pending reviews of every run, child run and chat session: PendingReviews), cancel
// and retry it, list runs (List), follow it as a stream of events (Stream) or follow its model's
// streamed text (LLMText, TextFollower), chat sessions (StartChat, Send, ListChats), schedules, the
// catalog of workflows a caller may start (Catalog, FileResolver), saving the operator's workflow
// files with their versions (WorkflowFiles: SaveWorkflow, WorkflowVersions, WorkflowVersion,
// DiffWorkflowVersions, RestoreWorkflow; no Temporal needed) and the health check of Temporal
// and the store (CheckHealth). The CLI (starter/), the MCP gateway (mcp/), the console (console/) and
// any Go program use it; none of them talks to Temporal about runs on its own. Who may read a run
// (CheckRead, Readable) and act on it (CheckAct: cancel, retry, fork) is decided here too, for the
// caller the context carries (Caller); a lookup that finds nothing suggests only readable runs.
//
// A run's events are package events' (the run records them, Stream hands them on): following a run
// reads its events query when its history grows and writes nothing to the run.
//
// It imports a run's names and contracts (runwire, proto) and never the interpreter (workflows:
// internal/layers' TestClientWithoutInterpreter holds it), so it never runs workflow code,
// it never runs tools, and it never reads provider credentials: the caller passes the security
// settings and the DataConverter (codec). Of the environment, Dial reads only TEMPORAL_ADDRESS,
// TEMPORAL_NAMESPACE and WEFT_TASK_QUEUE, for the Options the caller leaves empty.
package client
