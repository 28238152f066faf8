// Package fakellm is a scripted OpenAI-compatible chat endpoint for tests: it answers
// /v1/chat/completions from a script of replies (text, tool calls, malformed tool calls, 429 with
// Retry-After, 500, a malformed body), streams them as server-sent events when asked, speaks
// OpenAI's error body shape, and counts and records the requests. Like OpenAI it refuses (400) a
// request whose messages hold an assistant tool call with no tool message answering it right
// after, so a test whose transcript a provider would refuse fails.
//
// Entry points: New (a script of Replies built with Text, ToolCall and Error, or a Respond
// function) on an httptest server whose BaseURL goes into OPENAI_BASE_URL; Requests and Count say
// what it received.
//
// It is a test helper: only _test.go files may import it, so it is never in the weft binary, and it
// imports no weft package.
package fakellm
