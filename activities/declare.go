package activities

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weftworks/weft/activities/toolspec"
)

// A tool is declared once, in activities/toolspec: its name, doc, annotations and the Go types of
// its input and output (the schemas are derived from them). Its handler is a method of *Tools
// taking that input type; the file that implements it binds the two in an init:
//
//	func init() { bind(toolspec.Query, (*Tools).query) }
//
// The compiler checks that the handler takes the declared input and returns the declared output;
// worker.New checks that every declared activity tool is bound. The declarations stay in a
// package without provider dependencies, so clients that only validate files do not link them.

// binding is a declared tool with its handler, before the providers exist.
type binding struct {
	spec    *toolspec.Spec
	handler func(*Tools) Handler
}

var bindings []binding

// bind pairs a declaration with its handler (Adapt with the handler's *Tools).
func bind[In, Out any](tool toolspec.Tool[In, Out], h func(*Tools, context.Context, In) (Out, *toolspec.Usage, error)) {
	bindings = append(bindings, binding{spec: tool.Spec, handler: func(t *Tools) Handler {
		return Adapt(tool, func(ctx context.Context, in In) (Out, *toolspec.Usage, error) { return h(t, ctx, in) })
	}})
}

// Adapt makes a typed handler of a declaration a Handler: it gets the step's inputs decoded into
// In (defaults filled in), and what it returns is handed on as plain JSON values, as the workflow
// will see them. The built-in tools (bind) and Go programs' own tools (weft.Tool) go through it.
func Adapt[In, Out any](tool toolspec.Tool[In, Out], h func(context.Context, In) (Out, *toolspec.Usage, error)) Handler {
	return func(ctx context.Context, inputs map[string]any) (any, *toolspec.Usage, error) {
		in, err := tool.Decode(inputs)
		if err != nil {
			return nil, nil, &InputError{Msg: err.Error()}
		}
		out, usage, err := h(ctx, in)
		if err != nil {
			return nil, usage, err
		}
		plain, err := PlainJSON(out)
		if err != nil {
			return nil, usage, fmt.Errorf("%s: output is not JSON: %w", tool.Name, err)
		}
		return plain, usage, nil
	}
}

// PlainJSON turns a typed output into the maps, slices and float64s the workflow receives, so a
// caller in the same process (the MCP gateway) sees what a workflow would.
func PlainJSON(v any) (any, error) {
	if m, ok := v.(map[string]any); ok {
		return m, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
}

// Handlers returns the handler of every tool bound to a declaration, by tool name.
func (t *Tools) Handlers() map[string]Handler {
	out := make(map[string]Handler, len(bindings))
	for _, b := range bindings {
		out[b.spec.Name] = b.handler(t)
	}
	return out
}
