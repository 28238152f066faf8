// Command research is the README's "Go: build a workflow and run it": a workflow built with the
// dsl builder (checked as `weft validate` checks a file), run through package client on the
// workers of a running `weft dev` (client.Dial finds it as the CLI does), its output read as Go
// values; then a second run started and streamed. Run it next to `weft dev` with a model
// configured (OPENAI_API_KEY, or OPENAI_BASE_URL for any OpenAI-compatible endpoint):
//
//	go run ./examples/research
//
// integration/examples_test.go (TestExampleResearch) runs it on the embedded stack with the
// scripted model and holds the README's code block to this file.
package main
