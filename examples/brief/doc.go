// Command brief is seed 004's program written with weft's Go API: an agent with a tool that is
// a Go function, parallel and sequential model steps chained by their context, streamed events
// and usage totals. Run it against `weft dev` with a model configured (OPENAI_API_KEY, or
// OPENAI_BASE_URL for any OpenAI-compatible endpoint):
//
//	go run ./examples/brief
//
// integration/examples_test.go runs it on the embedded stack with the scripted model.
package main
