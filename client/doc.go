// Package client is the one copy of every operation on weft runs: dial Temporal, start a run
// (with the definitions of the workflows it calls), read its state, decide its review gates,
// cancel it, list runs, and follow it as a stream of events. The CLI (starter/), the MCP gateway
// (mcp/) and any Go program use it; none of them talks to Temporal about runs on its own.
//
// It imports the interpreter's names and contracts (workflows, proto) but never runs workflow
// code, and it never reads provider credentials.
package client
