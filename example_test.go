package weft_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/weftworks/weft"
	"github.com/weftworks/weft/events"
)

// Word is the input of the shout tool: its schema is derived from this type.
type Word struct {
	Word string `json:"word" jsonschema:"the word to shout" weft:"minLength=1"`
}

var shout = weft.Tool("example_shout", "Upper-cases a word", func(_ context.Context, in Word) (Word, error) {
	return Word{strings.ToUpper(in.Word)}, nil
}, weft.ReadOnly())

// A workflow built in Go is exported as the workflow file `weft run` takes.
func ExampleWorkflow_Export() {
	wf := weft.New("brief").Input("topic", weft.String, weft.Required()).
		LLM("facts", "Three facts about {{ inputs.topic }}", weft.Model("fast")).
		Parallel(weft.LLM("pros", "The pros"), weft.LLM("cons", "The cons")).
		LLM("verdict", "One sentence")
	data, err := wf.Export()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(data))
	// Output:
	// {
	//   "name": "brief",
	//   "inputs": {
	//     "topic": {
	//       "type": "string",
	//       "required": true
	//     }
	//   },
	//   "steps": [
	//     {
	//       "id": "facts",
	//       "tool": "llm",
	//       "inputs": {
	//         "model": "fast",
	//         "prompt": "Three facts about {{ inputs.topic }}"
	//       }
	//     },
	//     {
	//       "id": "pros",
	//       "tool": "llm",
	//       "inputs": {
	//         "context": "auto",
	//         "prompt": "The pros"
	//       },
	//       "dependsOn": [
	//         "facts"
	//       ]
	//     },
	//     {
	//       "id": "cons",
	//       "tool": "llm",
	//       "inputs": {
	//         "context": "auto",
	//         "prompt": "The cons"
	//       },
	//       "dependsOn": [
	//         "facts"
	//       ]
	//     },
	//     {
	//       "id": "verdict",
	//       "tool": "llm",
	//       "inputs": {
	//         "context": "auto",
	//         "prompt": "One sentence"
	//       },
	//       "dependsOn": [
	//         "pros",
	//         "cons"
	//       ]
	//     }
	//   ],
	//   "output": "{{ verdict.output.text }}"
	// }
}

// A Go function is a tool: its input schema comes from its input type.
func ExampleTool() {
	fmt.Println(shout.ToolName())
	fmt.Println(shout.Spec().InputJSON())
	// Output:
	// example_shout
	// {"additionalProperties":false,"properties":{"word":{"description":"the word to shout","minLength":1,"type":"string"}},"required":["word"],"type":"object"}
}

// An agent with a Go tool, a human review and a typed result, run on Temporal (weft dev).
func ExampleRun() {
	ctx := context.Background()
	wf := weft.New("shouter").Input("text", weft.String, weft.Required()).
		Agent("answer", "Shout the main word of: {{ inputs.text }}", weft.Tools(shout), weft.Approve(shout)).
		Review("check", "Publish it?", weft.Data("{{ answer.output.text }}")).
		Output("{{ check.output.data }}")
	e, err := weft.Start(ctx, weft.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	run, err := e.Start(ctx, wf, weft.Inputs{"text": "durable agents"})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = run.Stream(ctx, func(ev weft.Event) {
		fmt.Println(ev.Type, ev.Step)
		if ev.Type == events.ReviewRequested { // the tool call, then the result: approve both
			go func() { _ = run.Review(ctx, weft.Decision{ID: ev.Review.GetId(), Decision: "approve"}) }()
		}
	})
	res, err := weft.Get[string](ctx, run)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Output, res.Usage.Tokens, res.Usage.CostUSD)
}
