// Package mcpclient reaches external MCP servers for agent steps (the weft.mcp.list and
// weft.mcp.call activities): it lists a server's tools and calls one, opening a connection per
// operation (stdio: a fresh process; HTTP: a fresh session) through mark3labs/mcp-go's client,
// or, for a server declared stateful, on the connection a Sessions pool holds for the run's
// session (weft.mcp.close ends it).
//
// Entry points: ListTools and Call, and Sessions' ListTools, Call and Close, on a Server (a command, or a URL whose bearer key is read from
// the environment variable the operator names). A server that cannot be reached comes back as a
// retryable provider.Error; a server that cannot work as configured wraps ErrConfig and a result
// over MaxResultBytes wraps ErrTooLarge, so the activity adapter tells Temporal what to retry.
//
// It must not import Temporal (go.temporal.io), workflows/ or the activities package, and it
// decides nothing about trust: which servers a definition may name is the operator's policy,
// checked by activities (mcppolicy.go) before this package is called.
package mcpclient
