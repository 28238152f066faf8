// Package httpapi is weft's HTTP API for programs (/v1 on the gateway process, `weft mcp
// --transport http`): start runs by a workflow's name or with a definition of the caller's own,
// list them, read one (its status, steps and usage), follow its events as server-sent events,
// cancel, retry and fork it, list the reviews the caller may decide and decide them.
//
// Routes are one typed table (routes.go): each declares its method, path, input and output Go
// types, the role it needs and its handler. The OpenAPI 3.1 document served at GET
// /v1/openapi.json is generated from that table (openapi.go), its schemas derived from the Go
// types by google/jsonschema-go (as activities/toolspec derives tool schemas) and, for the wire
// messages of proto/weft/v1, from their descriptors, so it cannot drift from what is served.
//
// Who calls is decided as on /mcp, by the same auth.Gate (bearer keys, the failure limit), behind
// the same host guard on the same server (mcp.Gateway.HTTPHandlerWith mounts this handler); what
// a role allows is the route's role, and whose runs a key reads or acts on is decided by client/
// (CheckRead, CheckAct, MayDecide). Errors are RFC 9457 problem details naming the field.
//
// Every operation on runs goes through client/ (weftclient): this package computes no status,
// usage or step outcome of its own, and the run it shows is weftclient.Execution, the value `weft
// status --json` and MCP's weft_execution show. It must not import mcp/, console/, starter/, the
// workflow SDK's worker or workflow packages, or talk to Temporal on its own.
package httpapi
