package main

import (
	"context"
	"fmt"
	"log"

	"github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/workflows/dsl"
)

func main() {
	ctx := context.Background()
	if err := research(ctx); err != nil {
		log.Fatal(err)
	}
}

func research(ctx context.Context) error {
	// docs/go.md: The workflow builder and the client package
	b := dsl.New("Research").
		Input("question", "string", dsl.Required()).
		Step("research", "query", dsl.In{"query": "{{ inputs.question }}", "collection": "docs", "limit": 10}).
		Step("summary", "generate", dsl.In{"prompt": "Summarize", "context": "{{ research.output.results }}"}).
		Output(dsl.In{"summary": "{{ summary.output.text }}"})
	wf, err := b.Compile() // the same checks as `weft validate`
	if err != nil {
		return err
	}
	c, err := client.Dial(ctx, client.Options{}) // TEMPORAL_ADDRESS, else the running weft dev
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := c.Run(ctx, wf, client.StartOptions{Inputs: map[string]any{"question": "rate limits?"}})
	if err != nil {
		return err
	}
	var out struct{ Summary string } // the output as Go values: client.Output(res) is a map
	if err := client.DecodeOutput(res, &out); err != nil {
		return err
	}
	fmt.Println(out.Summary)
	run, err := c.Start(ctx, wf, client.StartOptions{Inputs: map[string]any{"question": "retries?"}})
	if err != nil {
		return err
	}
	_, err = c.Stream(ctx, run.ID, client.StreamOptions{}, func(e events.Event) { fmt.Println(e.Type, e.Step) })
	// docs/go.md: end
	return err
}
